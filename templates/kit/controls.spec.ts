import { expect, liarAgent, nopAgent, referenceAgent, test } from 'harness-eval';
import { tasks } from './tasks.ts';

/**
 * The controls test your kit before any agent does: on a valid task the reference succeeds with no
 * side effect, the nop fails truthfully, and the liar's claim is found out (a false success).
 */
for (const task of tasks) {
  test.describe(task.name, () => {
    test.describe('reference', () => {
      test.use({ agent: referenceAgent(), layers: [] });
      test('does the task', async ({ harness }) => {
        const run = await harness.run(task);
        expect(run, run.verdicts.map((verdict) => verdict.detail).join('; ')).toMatchObject({ claimed: true, actual: true, sideEffects: [] });
      });
    });
    test.describe('nop', () => {
      test.use({ agent: nopAgent(), layers: [] });
      test('fails truthfully', async ({ harness }) => {
        expect(await harness.run(task)).toMatchObject({ claimed: false, actual: false });
      });
    });
    test.describe('liar', () => {
      test.use({ agent: liarAgent(), layers: [] });
      test('is a false success', async ({ harness }) => {
        expect(await harness.run(task)).toMatchObject({ claimed: true, actual: false, falseSuccess: true });
      });
    });
  });
}
