import { test, expect, type BrowserContext, type Page } from '@playwright/test';
import { parseCookies } from '../../src/http.ts';
import { createReplica, HN_ORIGIN, markupYears, routeReplica, type HnReplica } from '../../src/sites/hn/index.ts';

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
    await test.step('log in, outside the page', async () => {
      await signIn(context, site);
      await page.goto(`${HN_ORIGIN}/news`);
    });
    await test.step('click the arrow again; the vote lands', async () => {
      // Newer markups vote in the background and hide the arrow at once: wait for the site's answer.
      const vote = page.waitForResponse((response) => new URL(response.url()).pathname === '/vote');
      await page.locator(`#up_${first}`).click();
      await vote;
      await expect(page.locator(`#up_${first}`)).toBeHidden();
    });
    // The judge is the site's own state, never the page.
    expect(site.truth().votes).toEqual({ [site.options.account.username]: [first] });
  });
}

/**
 * Signs in with the site's own HTTP and hands the session cookie to the browser, as the `login`
 * layer does: the password is never typed into the page, so Playwright's trace (which records what
 * `fill` types and every request body) cannot hold it.
 */
async function signIn(context: BrowserContext, site: HnReplica): Promise<void> {
  const { username, password } = site.options.account;
  const response = await site.handle(
    new Request(`${HN_ORIGIN}/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ acct: username, pw: password, goto: 'news' }),
      redirect: 'manual',
    }),
  );
  const session = parseCookies(response.headers.getSetCookie().map((header) => header.split(';')[0]!)).get('user');
  if (!session) throw new Error(`the site refused the account's login (HTTP ${response.status})`);
  await context.addCookies([{ name: 'user', value: session, url: HN_ORIGIN }]);
}

async function firstStoryId(page: Page): Promise<string> {
  const id = await page.locator('tr.athing').first().getAttribute('id');
  if (!id) throw new Error('no story rows on the front page');
  return id;
}
