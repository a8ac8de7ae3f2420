import { parseInput } from '../input.ts';
import { taskSchema, type Task, type TaskInput } from '../core/task.ts';
import { resolveAll } from './postconditions.ts';

export { taskSchema, taskTags } from '../core/task.ts';
export type { Reference, ReferenceOutcome, SessionView, Task, TaskInput, TaskInstance, TaskTag } from '../core/task.ts';

/** A checked task: a bad definition is one InputError naming the task and the field. */
export function defineTask(input: TaskInput): Task {
  const label = typeof input?.name === 'string' ? `task ${input.name}` : 'task';
  return parseInput(taskSchema, input, label);
}

/** What the run's condition says of its task: runs pool into one cell only with the same revision. */
export function taskCondition(task: Task): { revision: number } {
  return { revision: task.revision };
}

/**
 * The task as it reads on a run's start: a template (the story at rank 7) written on what the start
 * has, and each postcondition bound to what it names there (the story at rank 1 becomes its id),
 * once, so hiding or reordering cannot change the target. The oracle, the agent and the CLI's
 * `judge` all take it from here.
 */
export function taskAt(task: Task, start: unknown): Task {
  const instance: Task = { ...task, ...task.resolve?.(start) };
  return { ...instance, postconditions: resolveAll(instance.postconditions, start) };
}
