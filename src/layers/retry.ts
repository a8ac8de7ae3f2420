import { z } from 'zod';
import type { AttemptOutcome, Layer } from '../harness/layer.ts';
import { parseInput } from '../input.ts';

export const retryOptions = z.object({ attempts: z.number().int().min(1).max(10).default(2) }).strict();

/** Runs the attempt again, in a fresh browser context, until a claimed success or N attempts. */
export function retry(options: z.input<typeof retryOptions> = {}): Layer {
  const { attempts } = parseInput(retryOptions, options, 'layer retry');
  return {
    name: 'retry',
    async aroundAttempt(run, attempt) {
      let outcome: AttemptOutcome = await attempt();
      for (let n = 2; n <= attempts && !(outcome.stopReason === 'finished' && outcome.claim?.success); n++) {
        run.record({ type: 'harness_note', layer: 'retry', message: `attempt ${n - 1} ended ${outcome.stopReason}${outcome.claim ? ' with a failure claim' : ''}; starting attempt ${n}` });
        outcome = await attempt();
      }
      return outcome;
    },
  };
}
