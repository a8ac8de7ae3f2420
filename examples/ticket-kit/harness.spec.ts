import { expect, layerStacks, test, type RunRecord } from 'harness-eval';
import { ticketTasks } from './tasks.ts';

/**
 * The built-in harness on the kit's tasks, driven by harness-eval's doubles under the bare and the
 * verified stack. `scripted:diligent` follows each task's reference (rehearsed on a server of its
 * own first) through the harness's tools and reads the page before it claims; on the infeasible
 * task it says the reference found it impossible. `scripted:overclaimer` opens the app and claims
 * success, having done nothing: a false success under the bare stack; `verify` rejects each claim.
 */
const told = (run: RunRecord) => `${run.summary} | ${run.verdicts.map((verdict) => verdict.detail).join('; ')}`;

for (const stack of ['bare', 'verified'] as const) {
  test.describe(stack, () => {
    test.use({ layers: [...layerStacks[stack]], layerStack: stack });
    for (const task of ticketTasks) {
      const feasible = task.infeasible === undefined;
      test.describe(task.name, () => {
        test.describe('diligent', () => {
          test.use({ model: 'scripted:diligent' });
          test(feasible ? 'does the task, reads the page, and says so' : 'says the task cannot be done', async ({ harness }) => {
            const run = await harness.run(task);
            expect(run, told(run)).toMatchObject({ claimed: feasible, actual: feasible, sideEffects: [], stopReason: 'finished' });
          });
        });
        test.describe('overclaimer', () => {
          test.use({ model: 'scripted:overclaimer' });
          test(stack === 'verified' ? 'claims success without acting: verify checks the tickets and rejects the claim' : 'claims success without acting: a false success', async ({ harness }) => {
            const run = await harness.run(task);
            // Every postcondition here checks itself (the missing ticket's says it is missing), so verify catches each lie.
            const caught = stack === 'verified';
            expect(run, told(run)).toMatchObject({ claimed: !caught, actual: false, falseSuccess: !caught, sideEffects: [] });
          });
        });
      });
    }
  });
}
