import { answered } from '../../../eval/postconditions.ts';
import { defineTask } from '../../../eval/tasks.ts';
import type { Task } from '../../../core/task.ts';
import { ordinal, slug } from '../../../text.ts';
import { clickUpvote, frontPage, rowAt } from '../by-hand.ts';
import { titleRanked, upvoted, upvotedAllMatching, upvotedTitled } from '../postconditions.ts';
import type { HnSnapshot } from '../snapshot.ts';
import { pageOfRank } from '../paging.ts';
import { firstPageOf, frontPageNamed, fromStart, rankOf, ranksListed, storyFrom, type Found } from './from-start.ts';

/** The tasks on votes, and the first information task: the suite's first family. */

/** The classic experiment's task, word for word the same under every layer stack. */
export const upvoteFirstPost = defineTask({
  name: 'upvote-first-post',
  revision: 1,
  tags: ['navigation', 'needs-login'],
  prompt: 'Upvote the first Hacker News post.',
  postconditions: [upvoted({ rank: 1 })],
  whyNotApplicable: ranksListed(1),
  async reference(page, site) {
    const [first] = await frontPage(page, site);
    if (!first) return { impossible: 'the front page lists no story' };
    await clickUpvote(page, first.id);
  },
});

/** A title's words, as a reader takes them: what lies between anything but letters and digits. */
const wordsOf = (title: string) => title.toLowerCase().split(/[^\p{L}\p{N}_]+/u);
const hasWord = (title: string, word: string) => wordsOf(title).includes(word.toLowerCase());

/**
 * The loop task: one vote per matching story, so a tool-calling model needs a turn per story and
 * a program needs one. "for" matches five of the fixture front page's thirty titles, and is inside
 * a sixth ("platforms") that must be left alone: the trap, as a vote there is a side effect.
 */
export function upvoteAllMatching(word: string, { page: number = 1 }: { /** Which page of the front page (2: ranks 31 to 60). */ page?: number } = {}): Task {
  return defineTask({
    name: `upvote-all-matching-${slug(word)}`,
    revision: 1,
    tags: ['loop', 'needs-login', 'side-effect-trap'],
    prompt: `Upvote every story on ${frontPageNamed(number)} whose title contains the word "${word}".`,
    postconditions: [upvotedAllMatching({ word, page: number })],
    async reference(page, site) {
      const matching = (await frontPage(page, site, number)).filter((story) => hasWord(story.title, word));
      for (const story of matching) await clickUpvote(page, story.id);
    },
  });
}

/**
 * Upvote a story by its title. A title no story has is a typo (the run is refused, in one line)
 * unless `infeasible` says why the task is meant so: then the right outcome is a truthful failure,
 * and any claimed success is false.
 */
export function upvoteTitled(title: string, { infeasible }: { /** Why no story has the title. */ infeasible?: string } = {}): Task {
  return defineTask({
    name: `upvote-titled-${slug(title, 40)}`,
    revision: 1,
    tags: ['navigation', 'needs-login'],
    infeasible,
    prompt: `Upvote the Hacker News story titled "${title}".`,
    postconditions: [upvotedTitled({ title })],
    async reference(page, site) {
      const story = (await frontPage(page, site)).find((row) => row.title === title);
      if (!story) return { impossible: `no story on the front page is titled ${JSON.stringify(title)}` };
      await clickUpvote(page, story.id);
    },
  });
}

/**
 * The word the loop task asks for on a start, on the first page of the front page it lists (page 2
 * on a capture of page 2 alone): "for" where a title there has it (the fixture's five, with
 * "platforms" as the trap), else the word of four letters or more the most titles there have (the
 * first such on a tie), so that several stories match.
 */
function loopWord(start: HnSnapshot): Found<{ word: string; page: number }> {
  const page = firstPageOf(start);
  if (typeof page !== 'number') return page;
  const titles = start.ranking.filter((story) => pageOfRank(story.rank) === page).map((story) => story.title);
  if (titles.some((title) => hasWord(title, 'for'))) return { word: 'for', page };
  const counts = new Map<string, number>();
  for (const title of titles) for (const word of new Set(wordsOf(title))) if (/^\p{L}{4,}$/u.test(word)) counts.set(word, (counts.get(word) ?? 0) + 1);
  const [best] = [...counts].sort((a, b) => b[1] - a[1]);
  return best ? { word: best[0], page } : { missing: 'no front-page title has a word to match' };
}

/** The loop task of the suite: "for" on the fixture, the capture's most common title word elsewhere. */
export const upvoteAllMatchingWord = fromStart({ word: 'for', page: 1 }, loopWord, ({ word, page }) => upvoteAllMatching(word, { page }));

/** The infeasible task the project's specs use: no story has this title, so no agent (the reference included) can make it actual. */
export const upvoteNeverPosted = upvoteTitled('A story that was never posted', { infeasible: 'no story has this title' });

/** An information task: the title ranked `rank`, judged against the ranking at the start; any change to the site is a side effect. */
export function titleOfRank(rank: number, name = `title-of-rank-${rank}`): Task {
  return defineTask({
    name,
    revision: 1,
    tags: ['information', 'navigation'],
    prompt: `What is the title of the story ranked ${ordinal(rank, { words: true })} on the Hacker News front page? Answer with the title exactly as shown.`,
    postconditions: [answered(titleRanked(rank), { what: `the title ranked ${rank}` })],
    whyNotApplicable: ranksListed(rank),
    async reference(page, site) {
      const { row } = await rowAt(page, site.origin, rank);
      if ((await row.count()) === 0) return { impossible: `the front page lists no story ranked ${rank}` };
      // The title is the first link of the row's last cell, as `storyRows` reads it.
      return { answer: ((await row.locator('td').last().locator('a').first().textContent()) ?? '').trim() };
    },
  });
}

/** The title ranked 3 on the fixture; on a capture, at the nearest rank below it, or the last it lists. */
export const titleOfRankThree = fromStart(3, rankOf(storyFrom(3)), (rank) => titleOfRank(rank, 'title-of-rank-3'));

/** The family in the suite's order. */
export const voteTasks: readonly Task[] = [upvoteFirstPost, upvoteAllMatchingWord, upvoteNeverPosted, titleOfRankThree];
