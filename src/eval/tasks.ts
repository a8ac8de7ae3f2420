import type { Page } from '@playwright/test';
import { InputError } from '../input.ts';
import { clickUpvote, storyRows, type StoryRow } from '../sites/hn/by-hand.ts';
import { signIn } from '../sites/hn/sign-in.ts';
import type { Site } from '../sites/site.ts';
import { upvoted, upvotedAllMatching, upvotedTitled, type Postcondition } from './postconditions.ts';

/** What a task's reference solution ends with: done (with the answer to an information task), or why no one can do it. */
export type ReferenceOutcome = { answer?: string; impossible?: undefined } | { impossible: string };

/** What the agent is asked, and what must be true of the site afterwards. */
export interface Task {
  name: string;
  prompt: string;
  postconditions: Postcondition[];
  /**
   * The task's own scripted solution, run in `page` (the `referenceAgent()` control): a task is
   * valid only when it succeeds. It signs in outside the page, so no password is typed into it. On
   * an infeasible task it finds nothing to do, changes nothing and says why (`impossible`).
   */
  reference?(page: Page, site: Site): Promise<ReferenceOutcome | void>;
}

/** The classic experiment's task, word for word the same under every layer stack. */
export const upvoteFirstPost: Task = {
  name: 'upvote-first-post',
  prompt: 'Upvote the first Hacker News post.',
  postconditions: [upvoted({ rank: 1 })],
  async reference(page, site) {
    const [first] = await frontPage(page, site);
    if (!first) return { impossible: 'the front page lists no story' };
    await clickUpvote(page, first.id);
  },
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
    async reference(page, site) {
      // Word by word, as a reader would: a title's words are what lies between anything but letters and digits.
      const wanted = word.toLowerCase();
      const matching = (await frontPage(page, site)).filter((story) => story.title.toLowerCase().split(/[^\p{L}\p{N}_]+/u).includes(wanted));
      for (const story of matching) await clickUpvote(page, story.id);
    },
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
    async reference(page, site) {
      const story = (await frontPage(page, site)).find((row) => row.title === title);
      if (!story) return { impossible: `no story on the front page is titled ${JSON.stringify(title)}` };
      await clickUpvote(page, story.id);
    },
  };
}

/** The infeasible task the project's specs use: no story has this title, so no agent (the reference included) can make it actual. */
export const upvoteNeverPosted = upvoteTitled('A story that was never posted');

/** Every task the project's specs run, for the controls and `harness-eval judge --task NAME`. */
export const allTasks: readonly Task[] = [upvoteFirstPost, upvoteAllMatching('for'), upvoteNeverPosted];

/** The task of `allTasks` named `name`; an unknown name is one line listing the known ones. */
export function taskNamed(name: string): Task {
  const task = allTasks.find((known) => known.name === name);
  if (!task) throw new InputError(`unknown task "${name}": known tasks are ${allTasks.map((known) => known.name).join(', ')}`);
  return task;
}

/** Signs the page's context in (outside the page) and opens the front page: where every reference starts. */
async function frontPage(page: Page, site: Site): Promise<StoryRow[]> {
  await signIn(page.context(), site);
  await page.goto(`${site.origin}/news`);
  return storyRows(page);
}
