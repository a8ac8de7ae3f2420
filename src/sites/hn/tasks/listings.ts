import type { Page } from '@playwright/test';
import { answered } from '../../../eval/postconditions.ts';
import { defineTask } from '../../../eval/tasks.ts';
import type { Task } from '../../../core/task.ts';
import type { Site } from '../../../core/site.ts';
import { ordinal } from '../../../text.ts';
import { clickHide, clickUpvote, findTitled, openSignedIn, rankedRow, storyRows, type StoryRow } from '../by-hand.ts';
import { HIDE, markedEvery, upvotedStory, type HnEvidence } from '../postconditions.ts';
import type { HnSnapshot } from '../snapshot.ts';
import { fromStart, type Found } from './from-start.ts';

/**
 * Tasks that need finding a story in HN's listings and pages: the newest Show HN, the top Ask HN,
 * a rank on page 2, the most commented story on page 2, every story linking to GitHub (a loop
 * with a near miss, gitlab.com), a job ad (infeasible: no vote arrow), and what a listing tells
 * (a story's score, who posted rank 3). The truth is the start snapshot's ranking.
 */

type Ranked = HnSnapshot['ranking'][number];

/** The front pages: ranks 1 to 60, two pages of 30. */
const FRONT_PAGES = 60;
/** Ranks 31 to 60. */
const onPageTwo = (story: Ranked) => story.rank > 30 && story.rank <= FRONT_PAGES;

/** Follows the listing's `More` link, as a reader pages on. */
async function nextPage(page: Page): Promise<boolean> {
  const more = page.locator('a.morelink');
  if ((await more.count()) === 0) return false;
  const from = page.url();
  await Promise.all([page.waitForURL((url) => url.href !== from), more.click()]);
  return true;
}

/** A task that asks for one vote on the story `pick` finds at the start, with the reference that finds it on the page. */
function upvoteTask(options: {
  name: string;
  tags: Task['tags'];
  prompt: string;
  what: string;
  pick: (start: HnSnapshot) => Ranked | undefined;
  find: (page: Page, site: Site) => Promise<string | undefined>;
}): Task {
  const { name, tags, prompt, what, pick, find } = options;
  return defineTask({
    name,
    revision: 1,
    tags,
    prompt,
    postconditions: [upvotedStory({ what, missing: `no ${what} at the start`, label: (story) => `rank ${story.rank}`, pick })],
    async reference(page, site) {
      const id = await find(page, site);
      if (!id) return { impossible: `the listings show no ${what}` };
      await clickUpvote(page, id);
    },
    whyNotApplicable: (start) => (pick(start as HnSnapshot) ? undefined : `the capture lists no ${what}`),
  });
}

const isShow = (title: string) => title.startsWith('Show HN');
const isAsk = (title: string) => title.startsWith('Ask HN');

/** HN's ids grow with time: the newest is the largest id. */
export const upvoteNewestShowHn = upvoteTask({
  name: 'upvote-newest-show-hn',
  tags: ['navigation', 'needs-login'],
  prompt: 'Upvote the newest "Show HN" story on Hacker News (the one posted most recently).',
  what: 'newest Show HN story',
  pick: (start) => start.ranking.filter((story) => isShow(story.title)).sort((a, b) => Number(b.id) - Number(a.id))[0],
  async find(page, site) {
    // /newest lists newest first: the first Show HN there, page by page.
    await openSignedIn(page, site, '/newest');
    do {
      const show = (await storyRows(page)).find((row) => isShow(row.title));
      if (show) return show.id;
    } while (await nextPage(page));
    return undefined;
  },
});

export const upvoteTopAskHn = upvoteTask({
  name: 'upvote-top-ask-hn',
  tags: ['navigation', 'needs-login'],
  prompt: 'Upvote the highest-ranked "Ask HN" story on Hacker News.',
  what: 'top Ask HN story',
  pick: (start) => start.ranking.filter((story) => isAsk(story.title)).sort((a, b) => a.rank - b.rank)[0],
  async find(page, site) {
    await openSignedIn(page, site, '/ask');
    return (await storyRows(page))[0]?.id;
  },
});

/** Upvote the story ranked `rank` (past 30: a later page, reached by `More`). */
export function upvoteRanked(rank: number, name = `upvote-rank-${rank}`): Task {
  return upvoteTask({
    name,
    tags: ['navigation', 'needs-login'],
    prompt: `Upvote the story ranked ${ordinal(rank)} on Hacker News.`,
    what: `story ranked ${rank} at the start`,
    pick: (start) => start.ranking.find((story) => story.rank === rank),
    async find(page, site) {
      await openSignedIn(page, site, '/news');
      do {
        const row = rankedRow(page, rank);
        if ((await row.count()) === 1) return (await row.getAttribute('id')) ?? undefined;
      } while (await nextPage(page));
      return undefined;
    },
  });
}

/** Page 2's story ranked 35, or the nearest rank below it, or page 2's last: a capture with no page 2 has none. */
const onPageTwoFrom35 = (start: HnSnapshot): Found<number> => {
  const later = start.ranking.filter((story) => onPageTwo(story) && !story.job).sort((a, b) => a.rank - b.rank);
  return (later.find((story) => story.rank >= 35) ?? later.at(-1))?.rank ?? { missing: 'the capture has no page 2 (ranks 31 to 60) with a story that takes votes' };
};

/** The navigation to a later page: rank 35 on the fixture; on a capture, the nearest rank its page 2 lists. */
export const upvoteRank35 = fromStart(35, onPageTwoFrom35, (rank) => upvoteRanked(rank, 'upvote-rank-35'));

/** The story on page 2 with the most comments (ties: the higher ranked, as a reader reading down the page keeps the first). */
const mostCommentedOnPageTwo = (start: HnSnapshot) =>
  start.ranking.filter(onPageTwo).reduce<Ranked | undefined>((best, story) => ((story.comments ?? 0) > (best?.comments ?? -1) ? story : best), undefined);

export const upvoteMostCommentedPageTwo = upvoteTask({
  name: 'upvote-most-commented-page-2',
  tags: ['navigation', 'multi-step', 'needs-login'],
  prompt: 'Go to the second page of Hacker News (ranks 31 to 60) and upvote the story there with the most comments.',
  what: 'most commented story on page 2',
  pick: (start) => (start.ranking.some((story) => story.rank > 30) ? mostCommentedOnPageTwo(start) : undefined),
  async find(page, site) {
    await openSignedIn(page, site, '/news');
    await nextPage(page);
    // A row with no comment count (a job) counts as none.
    return (await storyRows(page)).reduce<StoryRow | undefined>((best, row) => ((row.comments ?? 0) > (best?.comments ?? -1) ? row : best), undefined)?.id;
  },
});

/** A story links to GitHub when its link's host is github.com (HN shows it as `github.com` or `github.com/user`, by era). */
const linksToGitHub = (url: string | undefined) => {
  try {
    return url !== undefined && new URL(url).hostname === 'github.com';
  } catch {
    return false;
  }
};

/** Every story of the front pages at the start whose link is on GitHub is hidden by the run's user during the run, and no other. */
const hidGitHubStories = markedEvery(HIDE, {
  description: 'every front-page story linking to github.com is hidden, and no other',
  which: 'linking to github.com',
  pick: (start) => start.ranking.filter((story) => story.rank <= FRONT_PAGES && linksToGitHub(story.url)),
  none: 'no front-page story links to github.com at the start',
});

export const hideGitHubStories = defineTask({
  name: 'hide-github-stories',
  revision: 1,
  tags: ['loop', 'navigation', 'needs-login', 'side-effect-trap'],
  prompt: 'Hide every story on the first two pages of Hacker News (ranks 1 to 60) that links to GitHub (github.com). Hide nothing else.',
  postconditions: [hidGitHubStories],
  async reference(page, site) {
    await openSignedIn(page, site, '/news');
    do {
      // A hidden row leaves the page: read the rows again after each hide.
      for (;;) {
        const links = await page.locator('tr.athing').evaluateAll((rows) =>
          rows.map((row) => ({ id: row.id, href: (row as HTMLTableRowElement).cells[(row as HTMLTableRowElement).cells.length - 1]?.querySelector('a')?.href ?? '' })),
        );
        const next = links.find((row) => new URL(row.href).hostname === 'github.com');
        if (!next) break;
        await clickHide(page, next.id);
      }
    } while (await nextPage(page));
  },
  whyNotApplicable: (start) => ((start as HnSnapshot).ranking.some((story) => linksToGitHub(story.url)) ? undefined : 'the capture lists no story linking to github.com'),
});

/** A job ad on the fixture front page (rank 9): HN gives jobs no vote arrow, so no one can upvote it. */
const jobTitle = 'Lanternfish (YC W24) Is Hiring a Founding Infrastructure Engineer';

/** The first job ad the capture lists, by rank. */
const firstJob = (start: HnSnapshot): Found<string> =>
  [...start.ranking].sort((a, b) => a.rank - b.rank).find((story) => story.job)?.title ?? { missing: 'the capture lists no job ad' };

export const upvoteJobAd = fromStart(jobTitle, firstJob, (title) =>
  defineTask({
    name: 'upvote-job-ad',
    revision: 1,
    tags: ['navigation', 'needs-login'],
    infeasible: 'a job ad has no vote arrow: HN takes no votes on it',
    prompt: `Upvote the Hacker News job ad "${title}".`,
    // A job takes no votes: there is no story to upvote, and a vote on the ad (were the site to take one) is a side effect.
    postconditions: [
      upvotedStory({
        what: `story titled "${title}" that takes votes`,
        missing: `"${title}" is a job ad at the start: it takes no votes`,
        label: () => JSON.stringify(title),
        pick: (start) => start.ranking.find((story) => story.title === title && !story.job),
      }),
    ],
    async reference(page, site) {
      await openSignedIn(page, site, '/jobs');
      const row = (await storyRows(page)).find((story) => story.title === title);
      if (!row) return { impossible: `no job ad titled ${JSON.stringify(title)}` };
      if ((await page.locator(`#up_${row.id}`).count()) === 0) return { impossible: 'a job ad has no vote arrow: Hacker News takes no votes on it' };
      await clickUpvote(page, row.id);
    },
  }),
);

/** The story ranked 2 or below it with a score (the fixture's hex dump), else the first with one. */
const scoredStory = (start: HnSnapshot): Found<string> => {
  const scored = [...start.ranking].filter((story) => story.points !== undefined).sort((a, b) => a.rank - b.rank);
  return (scored.find((story) => story.rank >= 2) ?? scored[0])?.title ?? { missing: 'the capture shows no story with a score' };
};

/** The score of the story titled `title` at the start: an information task; any change is a side effect. */
export const scoreOfStory = fromStart('The lost art of reading a hex dump', scoredStory, (title) =>
  defineTask({
    name: 'score-of-story',
    revision: 1,
    tags: ['information', 'navigation'],
    prompt: `How many points does the Hacker News story "${title}" have? Answer with the number only.`,
    postconditions: [answered<HnSnapshot, HnEvidence['diff'][number]>(({ start }) => start.ranking.find((story) => story.title === title)?.points?.toString(), { what: `the points of "${title}"` })],
    async reference(page, site) {
      const story = await findTitled(page, site, title);
      if (!story) return { impossible: `no story titled ${JSON.stringify(title)} on the front pages` };
      const score = await page.locator(`tr.athing[id="${story.id}"]`).locator('xpath=following-sibling::tr[1]').locator('.score').textContent();
      const points = /\d+/.exec(score ?? '')?.[0];
      return points ? { answer: points } : { impossible: `the front page shows no score for ${JSON.stringify(title)}` };
    },
  }),
);

/** The family in the suite's order. */
export const listingTasks: readonly Task[] = [
  upvoteNewestShowHn,
  upvoteTopAskHn,
  upvoteRank35,
  upvoteMostCommentedPageTwo,
  hideGitHubStories,
  upvoteJobAd,
  scoreOfStory,
];
