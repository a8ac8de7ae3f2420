import type { Page } from '@playwright/test';
import type { Site } from '../site.ts';
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
}

/** The stories the page lists, in order: each row's id, and the first link of its last cell (the title). */
export function storyRows(page: Page): Promise<StoryRow[]> {
  return page.locator('tr.athing').evaluateAll((rows) =>
    rows.map((row) => {
      const cells = (row as HTMLTableRowElement).cells;
      return { id: row.id, title: cells[cells.length - 1]?.querySelector('a')?.textContent?.trim() ?? '' };
    }),
  );
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

/** Signs the page's context in (outside the page) and opens the front page: where every reference that votes starts. */
export async function frontPage(page: Page, site: Site): Promise<StoryRow[]> {
  await signIn(page.context(), site);
  await page.goto(`${site.origin}/news`);
  return storyRows(page);
}
