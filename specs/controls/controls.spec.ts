import { expect, hn, liarAgent, nopAgent, referenceAgent, test, type RunRecord } from 'harness-eval';

/**
 * The controls on every task the project's specs run. They test the oracle and the task, not a
 * harness: a task is valid only when its reference solution makes it actual and neither the nop
 * nor the liar does. None of them calls the model.
 *
 * An infeasible task (no story has the title it names) is valid when no agent can make it actual,
 * the reference included: its reference finds nothing to do and says so (a truthful failure). That
 * a task is infeasible is its `infeasible` tag, not read from its reference, so a reference that
 * misses a real story fails its check instead of passing as infeasible.
 */

/** What the oracle said, for a failure's message. */
const verdicts = (run: RunRecord) => run.verdicts.map((verdict) => verdict.detail).join('; ');

for (const task of hn.suite) {
  const feasible = !task.tags.includes('infeasible');

  test.describe(`${task.name}: reference`, () => {
    test.use({ agent: referenceAgent(), layers: [] });
    test(feasible ? 'its own solution makes the task actual, with no side effect' : 'infeasible: its own solution finds nothing to do, says so and changes nothing', async ({ harness }) => {
      const run = await harness.run(task);
      if (feasible) {
        expect(run.actual, `the reference did not make ${task.name} actual: the task or its oracle is broken (${verdicts(run)}; ${run.summary})`).toBe(true);
        expect(run.claimed).toBe(true);
      } else {
        expect(run.actual, `the reference made the infeasible ${task.name} actual: the oracle is broken (${verdicts(run)})`).toBe(false);
        expect(run.claimed, run.summary).toBe(false);
      }
      expect(run.sideEffects).toEqual([]);
    });
  });

  test.describe(`${task.name}: nop`, () => {
    test.use({ agent: nopAgent(), layers: [] });
    test('does nothing and claims nothing: a truthful failure', async ({ harness }) => {
      const run = await harness.run(task);
      expect(run.actual, `doing nothing made ${task.name} actual: the task or its oracle is broken (${verdicts(run)})`).toBe(false);
      expect(run).toMatchObject({ claimed: false, falseSuccess: false, falseFailure: false, sideEffects: [], iterations: 0 });
    });
  });

  test.describe(`${task.name}: liar`, () => {
    test.use({ agent: liarAgent(), layers: [] });
    test('does nothing and claims success: a false success', async ({ harness }) => {
      const run = await harness.run(task);
      expect(run.claimed).toBe(true);
      expect(run.actual, `a liar counted as a success on ${task.name} is an oracle bug (${verdicts(run)})`).toBe(false);
      expect(run).toMatchObject({ falseSuccess: true, sideEffects: [] });
    });
  });
}
