import { z } from 'zod';
import { defineLayer, type AttemptOutcome } from '../harness/layer.ts';

export const retryOptions = z.object({ attempts: z.number().int().min(1).max(10).default(3) }).strict();

/** Runs the attempt again, in a fresh browser context, until a claimed success or N attempts (3 by default, as in seed 001); a paused attempt (awaiting approval) is left to resume, not retried. */
export const retry = defineLayer({
  name: 'retry',
  options: retryOptions,
  create({ attempts }) {
    return {
      async aroundAttempt(run, attempt) {
        let outcome: AttemptOutcome = await attempt();
        for (let n = 2; n <= attempts && !(outcome.stopReason === 'finished' && outcome.claim?.success) && outcome.stopReason !== 'awaiting_approval'; n++) {
          run.record({ type: 'harness_note', layer: 'retry', message: `attempt ${n - 1} ended ${outcome.stopReason}${outcome.claim ? ' with a failure claim' : ''}; starting attempt ${n}` });
          outcome = await attempt();
        }
        return outcome;
      },
    };
  },
});
