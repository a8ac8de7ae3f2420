import type { Page } from '@playwright/test';
import { answered } from '../../../eval/postconditions.ts';
import { defineTask } from '../../../eval/tasks.ts';
import type { Task } from '../../../core/task.ts';
import { slug } from '../../../text.ts';
import type { HnEvidence } from '../postconditions.ts';
import type { HnSnapshot } from '../snapshot.ts';
import { fromStart, type Found } from './from-start.ts';

/**
 * The tasks on reading: a fact the pages show, answered in the claim and judged against the
 * ground truth at the start (never the page). Any change to the site is a side effect. They have
 * no `verify`: a session check sees pages, not the answer the agent is about to give.
 */

type Story = HnSnapshot['ranking'][number];
type Fact = 'points' | 'by' | 'site';

/** A fact of the story ranked `rank` at the start, as text; undefined when the start does not know it. */
const factRanked =
  (rank: number, fact: Fact) =>
  ({ start }: HnEvidence): string | undefined => {
    const value = start.ranking.find((story: Story) => story.rank === rank)?.[fact];
    return value === undefined ? undefined : String(value);
  };

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

/** The front page's row at `rank` and the subtext row under it, as a reader finds them. */
async function rowAt(page: Page, origin: string, rank: number) {
  await page.goto(`${origin}/news${rank > 30 ? `?p=${Math.ceil(rank / 30)}` : ''}`);
  const row = page.locator('tr.athing').filter({ has: page.locator('.rank', { hasText: new RegExp(`^${rank}\\.$`) }) });
  return { row, subtext: row.locator('xpath=following-sibling::tr[1]') };
}

const notListed = (rank: number) => ({ impossible: `the front page lists no story ranked ${rank}` });

/** The story ranked `rank` must be on the start's front page with the fact shown. */
const withFact = (rank: number, fact: Fact) => (start: unknown) =>
  (start as HnSnapshot).ranking.find((story) => story.rank === rank)?.[fact] === undefined ? `the story ranked ${rank} shows no ${fact === 'by' ? 'poster' : fact}` : undefined;

export const scoreOfRankOne = defineTask({
  name: 'score-of-rank-1',
  revision: 1,
  tags: ['information', 'navigation'],
  prompt: 'How many points does the story ranked first on the Hacker News front page have? Answer with the number only.',
  postconditions: [answered(factRanked(1, 'points'), { what: 'the points of the story ranked 1' })],
  whyNotApplicable: withFact(1, 'points'),
  async reference(page, site) {
    const { row, subtext } = await rowAt(page, site.origin, 1);
    if ((await row.count()) === 0) return notListed(1);
    const score = (await subtext.locator('.score').textContent()) ?? '';
    return { answer: score.replace(/\D+/g, '') };
  },
});

export const posterOfRankThree = defineTask({
  name: 'poster-of-rank-3',
  revision: 1,
  tags: ['information', 'navigation'],
  prompt: 'Which user posted the story ranked third on the Hacker News front page? Answer with the username only.',
  postconditions: [answered(factRanked(3, 'by'), { what: 'the poster of the story ranked 3' })],
  whyNotApplicable: withFact(3, 'by'),
  async reference(page, site) {
    const { row, subtext } = await rowAt(page, site.origin, 3);
    if ((await row.count()) === 0) return notListed(3);
    return { answer: ((await subtext.locator('a.hnuser').textContent()) ?? '').trim() };
  },
});

export const siteOfRankFive = defineTask({
  name: 'site-of-rank-5',
  revision: 1,
  tags: ['information', 'navigation'],
  prompt: 'Which site is the story ranked fifth on the Hacker News front page from (the domain shown in parentheses after its title)? Answer with the domain only.',
  postconditions: [answered(factRanked(5, 'site'), { what: 'the site of the story ranked 5' })],
  whyNotApplicable: withFact(5, 'site'),
  async reference(page, site) {
    const { row } = await rowAt(page, site.origin, 5);
    if ((await row.count()) === 0) return notListed(5);
    return { answer: ((await row.locator('.sitestr').textContent()) ?? '').trim() };
  },
});

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
