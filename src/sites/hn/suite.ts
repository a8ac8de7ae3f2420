import { InputError } from '../../input.ts';
import type { Task } from '../../core/task.ts';
import { commentTasks } from './tasks/comments.ts';
import { hideGitHubStories, listingTasks } from './tasks/listings.ts';
import { submissionTasks } from './tasks/submissions.ts';
import { voteTasks } from './tasks/votes.ts';
import { markTasks } from './tasks/marks.ts';
import { readingTasks } from './tasks/reading.ts';
import { profileTasks } from './tasks/profile.ts';
import type { HnSnapshot, partOfKind } from './snapshot.ts';

export { titleOfRankThree, upvoteAllMatching, upvoteFirstPost, upvoteNeverPosted, upvoteTitled } from './tasks/votes.ts';

/**
 * The Hacker News suite: every task with its revision (bumped whenever its prompt or its
 * postconditions change), its tags and its reference solution, family by family (`tasks/`). A
 * reference reads the page on its own terms (`by-hand.ts`), never with the oracle's code:
 * agreeing through shared code proves nothing.
 */

type ChangedPart = Exclude<(typeof partOfKind)[keyof typeof partOfKind], 'votes'>;

/**
 * The parts of the state a task changes besides votes: where the site's snapshot cannot read one
 * (the live site reads only votes), the run could never be judged actual, so the task does not
 * apply there, before its own reasons are asked.
 */
const changing =
  (...parts: ChangedPart[]) =>
  (task: Task): Task => ({
    ...task,
    whyNotApplicable(start) {
      const unread = parts.find((part) => (start as HnSnapshot)[part] === undefined);
      return unread ? `the site's snapshot cannot read its ${unread}, which the task changes` : task.whyNotApplicable?.(start);
    },
  });

/** Every Hacker News task, versioned: what the controls, the validity and the mutation tests run. */
export const hnSuite: readonly Task[] = [
  ...voteTasks,
  ...markTasks.map(changing('hidden', 'faves')),
  ...readingTasks,
  ...profileTasks.map(changing('profiles')),
  ...commentTasks.map(changing('comments', 'faves')),
  ...submissionTasks.map(changing('submissions')),
  ...listingTasks.map((task) => (task === hideGitHubStories ? changing('hidden')(task) : task)),
];

/** The suite's task named `name` (for `harness-eval judge --task NAME`); an unknown name is one line listing the known ones. */
export function taskNamed(name: string): Task {
  const task = hnSuite.find((known) => known.name === name);
  if (!task) throw new InputError(`unknown task "${name}": known tasks are ${hnSuite.map((known) => known.name).join(', ')}`);
  return task;
}

