import { defineLayer } from '../harness/layer.ts';
import { checkPostconditions, unconfirmable, verifyOptions } from './verify.ts';

/**
 * Seed 001's `stop_after_upvote`: after a turn in which the browser asked the site for a change
 * (a request the site kit's classifier names as an action: a vote, a form post), the task's postconditions check themselves (what `verify` runs, on the items they
 * were bound to at the start); when all hold, the harness claims success for the model, through
 * `finish` as a call of its own, and the run ends without waiting for the model's `finish`. A turn
 * whose requests changed nothing (reading, a click that only navigates) is never checked. It ends a run only on a full check: with any postcondition that
 * has no session-side check (an answer), the layer stays idle, with a note saying so once. The
 * claim still passes the other layers' `onFinish`; the oracle judges it like any other.
 */
export const stopOnSuccess = defineLayer({
  name: 'stop-on-success',
  options: verifyOptions,
  create({ origin }) {
    let acted = false;
    let noted = false;
    return {
      // Only looks: a layer before it in the stack may still refuse the request, and then the check finds nothing changed.
      checkRequest(_run, request) {
        if (request.action) acted = true;
        return undefined;
      },
      async afterTools(run) {
        const turnActed = acted;
        acted = false;
        if (!turnActed || run.claim) return;
        const gap = unconfirmable(run.postconditions);
        if (gap) {
          if (!noted) run.record({ type: 'harness_note', layer: 'stop-on-success', message: `${gap.detail}: the run ends only on the model's finish` });
          noted = true;
          return;
        }
        const verdict = await checkPostconditions(run, origin);
        if (!verdict?.holds) return;
        const summary = `The task's postconditions hold as the session sees them after iteration ${run.iterations}'s actions, so the harness ended the run: ${verdict.detail}`;
        run.record({ type: 'harness_note', layer: 'stop-on-success', message: summary });
        await run.callTool({ id: `stop-on-success-${run.iterations}`, name: 'finish', arguments: JSON.stringify({ success: true, summary }) }, { by: 'harness' });
      },
    };
  },
});
