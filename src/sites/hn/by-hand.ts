import type { Page } from '@playwright/test';
import type { Site } from '../../core/site.ts';
import { pageOfRank } from './paging.ts';
import { signIn } from './sign-in.ts';

/**
 * Hacker News as a plain Playwright script reads and clicks it (the baseline spec, the tasks'
 * reference solutions). It reads the page on its own terms, not with the capture parser's
 * selectors: a reference that agreed with the oracle only through shared code would prove nothing.
 */

/** A story as its row on a front page shows it. */
export interface StoryRow {
  id: string;
  title: string;
  /** The "N comments" link of the line under the row ("discuss" is none); undefined with no such link (a job). */
  comments?: number;
}

/**
 * The stories the page lists, in order: each row's id, the first link of its last cell (the
 * title), and the comment count the last "comments" or "discuss" link of the line under it shows.
 */
export function storyRows(page: Page): Promise<StoryRow[]> {
  return page.locator('tr.athing').evaluateAll((rows) =>
    rows.map((row) => {
      const cells = (row as HTMLTableRowElement).cells;
      const counted = [...(row.nextElementSibling?.querySelectorAll('a') ?? [])].filter((link) => /comment|discuss/.test(link.textContent ?? '')).pop()?.textContent ?? undefined;
      const comments = counted === undefined ? undefined : /discuss/.test(counted) ? 0 : Number.parseInt(counted, 10);
      return { id: row.id, title: cells[cells.length - 1]?.querySelector('a')?.textContent?.trim() ?? '', comments };
    }),
  );
}

/** The row of the page whose rank reads `rank.` (none when the page does not list that rank). */
export function rankedRow(page: Page, rank: number) {
  return page.locator('tr.athing').filter({ has: page.locator('.rank', { hasText: new RegExp(`^${rank}\\.$`) }) });
}

/** Opens the front page that lists `rank` (`?p=2` past 30) and finds its row and the subtext row under it, as a reader does. */
export async function rowAt(page: Page, origin: string, rank: number) {
  const number = pageOfRank(rank);
  await page.goto(`${origin}/news${number > 1 ? `?p=${number}` : ''}`);
  const row = rankedRow(page, rank);
  return { row, subtext: row.locator('xpath=following-sibling::tr[1]') };
}

/**
 * Clicks story `id`'s up arrow and waits until the page shows the vote: newer markups vote in the
 * background and hide the arrow at once, older ones load the page again with the arrow hidden.
 */
export async function clickUpvote(page: Page, id: string): Promise<void> {
  const arrow = page.locator(`#up_${id}`);
  const vote = page.waitForResponse((response) => new URL(response.url()).pathname === '/vote');
  await arrow.click();
  await vote;
  await arrow.waitFor({ state: 'hidden' });
}

/**
 * Clicks the `hide` link under story `id`'s row and waits until the site has taken the hide and the
 * row is gone: HN's script hides in the background (`snip-story`), without it the link loads `hide`.
 */
export async function clickHide(page: Page, id: string): Promise<void> {
  const row = page.locator(`tr.athing[id="${id}"]`);
  const hidden = page.waitForResponse((response) => ['/hide', '/snip-story'].includes(new URL(response.url()).pathname));
  await row.locator('xpath=following-sibling::tr[1]').getByRole('link', { name: 'hide', exact: true }).click();
  await hidden;
  await row.waitFor({ state: 'detached' });
}

/** Opens item `id`'s page (a story's or a comment's) and clicks its `favorite` link, waiting until the page offers `un-favorite`. */
export async function clickFavorite(page: Page, origin: string, id: string): Promise<void> {
  await page.goto(`${origin}/item?id=${id}`);
  const fave = page.waitForResponse((response) => new URL(response.url()).pathname === '/fave');
  await page.getByRole('link', { name: 'favorite', exact: true }).click();
  await fave;
  await page.getByRole('link', { name: 'un-favorite', exact: true }).waitFor();
}

/** Signs the page's context in (outside the page) and opens `path`: where every reference that changes the site starts. */
export async function openSignedIn(page: Page, site: Site, path: string): Promise<void> {
  await signIn(page.context(), site);
  await page.goto(`${site.origin}${path}`);
}

/** Signs in and opens the front page: its stories, in order. */
export async function frontPage(page: Page, site: Site, number = 1): Promise<StoryRow[]> {
  await openSignedIn(page, site, number > 1 ? `/news?p=${number}` : '/news');
  return storyRows(page);
}

/**
 * Signs in and pages through the front pages (`/news`, `?p=2`, ...) as a reader does, following
 * `More` (a capture that starts at page 2 shows none on page 1), until a row is titled `title`
 * (the page stays on it) or a page has no `More`: that row, or undefined.
 */
export async function findTitled(page: Page, site: Site, title: string): Promise<StoryRow | undefined> {
  let rows = await frontPage(page, site);
  for (let p = 2; ; p += 1) {
    const story = rows.find((row) => row.title === title);
    if (story) return story;
    if ((await page.getByRole('link', { name: 'More', exact: true }).count()) === 0) return undefined;
    await page.goto(`${site.origin}/news?p=${p}`);
    rows = await storyRows(page);
  }
}
