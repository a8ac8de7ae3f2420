import { test, expect } from '@playwright/test';
import { clickUpvote, storyRows } from '../../src/sites/hn/by-hand.ts';
import { createReplica, HN_ORIGIN, markupYears, routeReplica } from '../../src/sites/hn/index.ts';
import { signIn } from '../../src/sites/hn/sign-in.ts';

/**
 * The classic task done by a plain Playwright script, no model and no harness: the baseline that
 * harness runs are compared with, and proof that the recorded site lets the task succeed.
 */
for (const markupYear of markupYears) {
  test(`upvote the first Hacker News post by hand (${markupYear} markup)`, async ({ context, page }) => {
    const site = createReplica({ faults: { markupYear } });
    await routeReplica(context, site);
    await page.goto(`${HN_ORIGIN}/news`);
    const [first] = await storyRows(page);
    if (!first) throw new Error('no story rows on the front page');

    await test.step('click the arrow and meet the login wall', async () => {
      await page.locator(`#up_${first.id}`).click();
      await expect(page.locator('body')).toContainText('You have to be logged in to vote.');
    });
    await test.step('log in, outside the page', async () => {
      // The password is never typed into the page: Playwright's trace records what `fill` types.
      await signIn(context, { origin: HN_ORIGIN, account: site.options.account, fetch: (request) => site.handle(request) });
      await page.goto(`${HN_ORIGIN}/news`);
    });
    await test.step('click the arrow again; the vote lands', async () => {
      await clickUpvote(page, first.id);
    });
    // The judge is the site's own state, never the page.
    expect(site.truth().votes).toEqual({ [site.options.account.username]: [first.id] });
  });
}
