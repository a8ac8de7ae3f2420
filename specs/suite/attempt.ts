import { expect, test, type Task } from 'harness-eval';

/**
 * One test per task, run by the project's agent (the doubles on the built-in harness): the
 * reporter turns the runs into cells per task; the test only asks that the run was judged. A task
 * that does not apply to the site is skipped by the fixture, with its reason.
 */
export function attemptEach(tasks: readonly Task[]): void {
  for (const task of tasks) {
    test(`${task.name} (revision ${task.revision})`, async ({ harness }) => {
      const run = await harness.run(task);
      expect(run.stopReason, run.summary).not.toBe('error');
      expect(run.judged, run.summary).toBe(true);
    });
  }
}

/** A few tasks that together carry every tag the suite uses: each task in the suite's order that adds a tag not yet carried. */
export function oneTaskPerTag(tasks: readonly Task[]): Task[] {
  const carried = new Set<string>();
  return tasks.filter((task) => {
    const adds = task.tags.some((tag) => !carried.has(tag));
    task.tags.forEach((tag) => carried.add(tag));
    return adds;
  });
}
