import { InputError } from '../../input.ts';
import type { Task } from '../../eval/tasks.ts';
import { commentTasks } from './tasks/comments.ts';
import { listingTasks } from './tasks/listings.ts';
import { submissionTasks } from './tasks/submissions.ts';
import { voteTasks } from './tasks/votes.ts';
import { markTasks } from './tasks/marks.ts';
import { readingTasks } from './tasks/reading.ts';
import { profileTasks } from './tasks/profile.ts';

export { titleOfRankThree, upvoteAllMatching, upvoteFirstPost, upvoteNeverPosted, upvoteTitled } from './tasks/votes.ts';

/**
 * The Hacker News suite: every task with its revision (bumped whenever its prompt or its
 * postconditions change), its tags and its reference solution, family by family (`tasks/`). A
 * reference reads the page on its own terms (`by-hand.ts`), never with the oracle's code:
 * agreeing through shared code proves nothing.
 */

/** Every Hacker News task, versioned: what the controls, the validity and the mutation tests run. */
export const hnSuite: readonly Task[] = [...voteTasks, ...markTasks, ...readingTasks, ...profileTasks, ...commentTasks, ...submissionTasks, ...listingTasks];

/** The suite's task named `name` (for `harness-eval judge --task NAME`); an unknown name is one line listing the known ones. */
export function taskNamed(name: string): Task {
  const task = hnSuite.find((known) => known.name === name);
  if (!task) throw new InputError(`unknown task "${name}": known tasks are ${hnSuite.map((known) => known.name).join(', ')}`);
  return task;
}

