import { upvoted, type Postcondition } from './postconditions.ts';

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
