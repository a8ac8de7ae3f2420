import { defineLayer } from '../harness/layer.ts';
import { checkTask, verifyOptions } from './verify.ts';

/**
 * Seed 001's `stop_after_upvote`: after a turn that acted (an `act` tool call: click, fill,
 * navigate…), the task's own check (what `verify` runs) is run on the site; when it holds, the
 * harness claims success for the model, through `finish` as a call of its own, and the run ends
 * without waiting for the model's `finish`. A turn that only read is never checked. A task without
 * a check of its own leaves the layer idle, with a note saying so once. The claim still passes the
 * other layers' `onFinish`; the oracle judges it like any other.
 */
export const stopOnSuccess = defineLayer({
  name: 'stop-on-success',
  options: verifyOptions,
  create(options) {
    const site = new URL(options.origin).origin;
    let acted = false;
    let noted = false;
    return {
      async aroundTool(run, call, next) {
        if (run.tools.get(call.name)?.effect === 'act') acted = true;
        return next();
      },
      async afterTools(run) {
        const turnActed = acted;
        acted = false;
        if (!turnActed || run.claim) return;
        if (!run.selfCheck) {
          if (!noted) run.record({ type: 'harness_note', layer: 'stop-on-success', message: 'the task has no check of its own: the run ends only on the model\'s finish' });
          noted = true;
          return;
        }
        const verdict = await checkTask(run, run.selfCheck, site);
        if (!verdict.holds) return;
        const summary = `The task's own check holds after iteration ${run.iterations}'s actions, so the harness ended the run: ${verdict.detail}`;
        run.record({ type: 'harness_note', layer: 'stop-on-success', message: summary });
        await run.callTool({ id: `stop-on-success-${run.iterations}`, name: 'finish', arguments: JSON.stringify({ success: true, summary }) }, { by: 'harness' });
      },
    };
  },
});
