import { parseInput } from '../input.ts';
import { taskSchema, type Task, type TaskInput } from '../core/task.ts';

export { taskSchema, taskTags } from '../core/task.ts';
export type { Reference, ReferenceOutcome, SessionView, Task, TaskInput, TaskTag } from '../core/task.ts';

/** A checked task: a bad definition is one InputError naming the task and the field. */
export function defineTask(input: TaskInput): Task {
  const label = typeof input?.name === 'string' ? `task ${input.name}` : 'task';
  return parseInput(taskSchema, input, label);
}

/** What the run's condition says of its task: runs pool into one cell only with the same revision. */
export function taskCondition(task: Task): { revision: number } {
  return { revision: task.revision };
}
