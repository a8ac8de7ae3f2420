import { upvoted, upvotedAllMatching, upvotedTitled, type Postcondition } from './postconditions.ts';

/** What the agent is asked, and what must be true of the site afterwards. */
export interface Task {
  name: string;
  prompt: string;
  postconditions: Postcondition[];
}

/** The classic experiment's task, word for word the same under every layer stack. */
export const upvoteFirstPost: Task = {
  name: 'upvote-first-post',
  prompt: 'Upvote the first Hacker News post.',
  postconditions: [upvoted({ rank: 1 })],
};

/**
 * The loop task: one vote per matching story, so a tool-calling model needs a turn per story and
 * a program needs one. "for" matches five of the fixture front page's thirty titles, and is inside
 * a sixth ("platforms") that must be left alone.
 */
export function upvoteAllMatching(word: string): Task {
  return {
    name: `upvote-all-matching-${word.toLowerCase().replace(/[^a-z0-9]+/g, '-')}`,
    prompt: `Upvote every story on the Hacker News front page whose title contains the word "${word}".`,
    postconditions: [upvotedAllMatching({ word })],
  };
}

/**
 * Upvote a story by its title. With a title that is not on the front page the task is
 * infeasible: the right outcome is a truthful failure, and any claimed success is false.
 */
export function upvoteTitled(title: string): Task {
  return {
    name: `upvote-titled-${title.toLowerCase().replace(/[^a-z0-9]+/g, '-').slice(0, 40)}`,
    prompt: `Upvote the Hacker News story titled "${title}".`,
    postconditions: [upvotedTitled({ title })],
  };
}
