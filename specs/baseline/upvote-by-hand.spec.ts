import { test, expect, type Page } from '@playwright/test';
import { createReplica, HN_ORIGIN, markupYears, routeReplica } from '../../src/sites/hn/index.ts';

/**
 * The classic task done by a plain Playwright script, no model and no harness: the baseline that
 * harness runs are compared with, and proof that the recorded site lets the task succeed.
 */
for (const markupYear of markupYears) {
  test(`upvote the first Hacker News post by hand (${markupYear} markup)`, async ({ context, page }) => {
    const site = createReplica({ faults: { markupYear } });
    await routeReplica(context, site);
    await page.goto(`${HN_ORIGIN}/news`);
    const first = await firstStoryId(page);

    await test.step('click the arrow and meet the login wall', async () => {
      await page.locator(`#up_${first}`).click();
      await expect(page.locator('body')).toContainText('You have to be logged in to vote.');
    });
    await test.step('log in; the pending vote completes', async () => {
      await page.locator('input[name="acct"]').first().fill(site.options.account.username);
      await page.locator('input[name="pw"]').first().fill(site.options.account.password);
      await page.locator('input[value="login"]').click();
      await expect(page.locator(`#up_${first}`)).toBeHidden();
    });
    // The judge is the site's own state, never the page.
    expect(site.truth().votes).toEqual({ [site.options.account.username]: [first] });
  });
}

async function firstStoryId(page: Page): Promise<string> {
  const id = await page.locator('tr.athing').first().getAttribute('id');
  if (!id) throw new Error('no story rows on the front page');
  return id;
}
