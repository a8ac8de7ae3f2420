import type { Locator } from '@playwright/test';
import { answered } from '../../../eval/postconditions.ts';
import { defineTask } from '../../../eval/tasks.ts';
import type { Task } from '../../../core/task.ts';
import { ordinal, slug } from '../../../text.ts';
import { rowAt } from '../by-hand.ts';
import type { HnEvidence } from '../postconditions.ts';
import type { HnSnapshot } from '../snapshot.ts';
import { fromStart, rankOf, storyFrom, type Found } from './from-start.ts';

/**
 * The tasks on reading: a fact the pages show, answered in the claim and judged against the
 * ground truth at the start (never the page). Any change to the site is a side effect. They have
 * no `verify`: a session check sees pages, not the answer the agent is about to give.
 */

type Story = HnSnapshot['ranking'][number];
type Fact = 'points' | 'by' | 'site';

/**
 * The karma HN shows for `user` at the start: 1 to start with, plus the upvotes the user's items
 * had received: a story's points less the poster's own, and every vote on the user's comments and
 * submissions. Undefined when the start has no story by the user (a capture shows no other karma).
 */
export function karmaAtStart(user: string) {
  return ({ start }: HnEvidence): string | undefined => {
    const stories = start.ranking.filter((story) => story.by === user && story.points !== undefined);
    if (stories.length === 0) return undefined;
    const mine = new Set([...(start.comments ?? []), ...(start.submissions ?? [])].filter((post) => post.by === user).map((post) => post.id));
    const votesOnPosts = Object.values(start.votes).reduce((sum, ids) => sum + ids.filter((id) => mine.has(id)).length, 0);
    return String(stories.reduce((karma, story) => karma + story.points! - 1, 1) + votesOnPosts);
  };
}

/** What each fact-of-a-rank task asks, and how a reader reads the fact off the row and the line under it. */
const FACTS: Record<Fact, { name: string; label: string; prompt(ranked: string): string; read(row: Locator, subtext: Locator): Promise<string> }> = {
  points: {
    name: 'score',
    label: 'points',
    prompt: (ranked) => `How many points does the story ranked ${ranked} on the Hacker News front page have? Answer with the number only.`,
    read: async (_row, subtext) => ((await subtext.locator('.score').textContent()) ?? '').replace(/\D+/g, ''),
  },
  by: {
    name: 'poster',
    label: 'poster',
    prompt: (ranked) => `Which user posted the story ranked ${ranked} on the Hacker News front page? Answer with the username only.`,
    read: async (_row, subtext) => ((await subtext.locator('a.hnuser').textContent()) ?? '').trim(),
  },
  site: {
    name: 'site',
    label: 'site',
    prompt: (ranked) => `Which site is the story ranked ${ranked} on the Hacker News front page from (the domain shown in parentheses after its title)? Answer with the domain only.`,
    read: async (row) => ((await row.locator('.sitestr').textContent()) ?? '').trim(),
  },
};

/**
 * A fact of the story ranked `rank` at the start, as text (undefined when the start does not know
 * it), and the task asking it. The suite's three are templates: on a capture the story at the
 * fixture's rank, or the nearest rank below it showing the fact (a job has no poster), or the last.
 */
export function factOfRank(fact: Fact, rank: number, name = `${FACTS[fact].name}-of-rank-${rank}`): Task {
  const { label, prompt, read } = FACTS[fact];
  return defineTask({
    name,
    revision: 1,
    tags: ['information', 'navigation'],
    prompt: prompt(ordinal(rank, { words: true })),
    postconditions: [
      answered(({ start }: HnEvidence) => start.ranking.find((story: Story) => story.rank === rank)?.[fact]?.toString(), { what: `the ${label} of the story ranked ${rank}` }),
    ],
    whyNotApplicable: (start) => ((start as HnSnapshot).ranking.find((story) => story.rank === rank)?.[fact] === undefined ? `the story ranked ${rank} shows no ${label}` : undefined),
    async reference(page, site) {
      const { row, subtext } = await rowAt(page, site.origin, rank);
      if ((await row.count()) === 0) return { impossible: `the front page lists no story ranked ${rank}` };
      return { answer: await read(row, subtext) };
    },
  });
}

/** The fact of the story at `rank`, or the nearest rank below it that shows it: the suite's task named for the fixture's rank. */
const factFrom = (fact: Fact, rank: number) => fromStart(rank, rankOf(storyFrom(rank, { shows: fact })), (found) => factOfRank(fact, found, `${FACTS[fact].name}-of-rank-${rank}`));

export const scoreOfRankOne = factFrom('points', 1);
export const posterOfRankThree = factFrom('by', 3);
export const siteOfRankFive = factFrom('site', 5);

/** The karma on a user's page: the agent must find the page (the poster's name links to it). */
export function karmaOfUser(user: string): Task {
  return defineTask({
    name: `karma-of-${slug(user)}`,
    revision: 1,
    tags: ['information', 'navigation'],
    prompt: `How much karma does the Hacker News user ${user} have, as their user page shows it? Answer with the number only.`,
    postconditions: [answered(karmaAtStart(user), { what: `the karma of ${user}`, reads: ['comments', 'submissions'] })],
    whyNotApplicable: (start) => ((start as HnSnapshot).ranking.some((story) => story.by === user) ? undefined : `no story at the start is by ${user}`),
    async reference(page, site) {
      await page.goto(`${site.origin}/user?id=${encodeURIComponent(user)}`);
      const karma = page.locator('td', { hasText: /^karma:$/ }).locator('xpath=following-sibling::td[1]');
      if ((await karma.count()) === 0) return { impossible: `${user} has no user page` };
      return { answer: ((await karma.textContent()) ?? '').trim() };
    },
  });
}

/** The poster of the story ranked 4 (the fixture's lindqvist), or of the first story below it that shows one, or of the last that does. */
function posterFrom4(start: HnSnapshot): Found<string> {
  const posted = start.ranking.filter((story) => story.by !== undefined && story.points !== undefined).sort((a, b) => a.rank - b.rank);
  const story = posted.find((candidate) => candidate.rank >= 4) ?? posted.at(-1);
  return story ? story.by! : { missing: 'the capture shows no story with its poster' };
}

/** The family in the suite's order. */
export const readingTasks: readonly Task[] = [scoreOfRankOne, posterOfRankThree, siteOfRankFive, fromStart('lindqvist', posterFrom4, karmaOfUser)];
