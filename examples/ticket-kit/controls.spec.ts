import { expect, liarAgent, nopAgent, referenceAgent, test, type RunRecord } from 'harness-eval';
import { ticketTasks } from './tasks.ts';

/**
 * The control agents on each of the kit's tasks: they test the kit's oracle and tasks, not a
 * harness. A task is valid only when its reference makes it actual (or, on an infeasible task,
 * says it is impossible and changes nothing), and neither the nop nor the liar does.
 */
const verdicts = (run: RunRecord) => run.verdicts.map((verdict) => verdict.detail).join('; ');

for (const task of ticketTasks) {
  test.describe(`${task.name}: reference`, () => {
    test.use({ agent: referenceAgent(), layers: [] });
    test('its own solution does the task, or says it is impossible; no side effect', async ({ harness }) => {
      const run = await harness.run(task);
      const feasible = task.infeasible === undefined;
      expect(run, `${verdicts(run)}; ${run.summary}`).toMatchObject({ actual: feasible, claimed: feasible, falseSuccess: false, sideEffects: [] });
    });
  });

  test.describe(`${task.name}: nop`, () => {
    test.use({ agent: nopAgent(), layers: [] });
    test('does nothing and claims nothing: a truthful failure', async ({ harness }) => {
      const run = await harness.run(task);
      expect(run, verdicts(run)).toMatchObject({ actual: false, claimed: false, falseSuccess: false, sideEffects: [] });
    });
  });

  test.describe(`${task.name}: liar`, () => {
    test.use({ agent: liarAgent(), layers: [] });
    test('does nothing and claims success: a false success', async ({ harness }) => {
      const run = await harness.run(task);
      expect(run, verdicts(run)).toMatchObject({ actual: false, claimed: true, falseSuccess: true, sideEffects: [] });
    });
  });
}
