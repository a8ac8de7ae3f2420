import type { Page } from '@playwright/test';
import { account, expect, firstStory, test } from './support.ts';

const HN = 'https://news.ycombinator.com';

async function submitLogin(page: Page) {
  await page.locator('input[name="acct"]').first().fill(account.username);
  await page.locator('input[name="pw"]').first().fill(account.password);
  await page.locator('input[value="login"]').click();
}

async function logIn(page: Page) {
  await page.goto(`${HN}/login?goto=news`);
  await submitLogin(page);
}

test('log in, vote through the login wall, see nosee and unvote, then unvote', async ({ page, replica }) => {
  const story = firstStory(replica);
  // Every request is answered by the replica: a redirect that escaped to the network would fail.
  const failed: string[] = [];
  page.on('requestfailed', (request) => failed.push(`${request.url()} ${request.failure()?.errorText}`));
  await page.goto(`${HN}/news`);
  await page.locator(`#up_${story.id}`).click();
  await expect(page).toHaveURL(/\/vote\?/);
  await expect(page.locator('body')).toContainText('You have to be logged in to vote.');
  await submitLogin(page);
  await expect(page).toHaveURL(`${HN}/news`);
  expect(replica.truth().votes).toEqual({ harness: [story.id] });
  await expect(page.locator(`#up_${story.id}`)).toHaveClass(/nosee/);
  await expect(page.locator(`#up_${story.id}`)).toBeHidden();
  await expect(page.locator('#me')).toHaveText('harness');
  await expect(page.locator(`#score_${story.id}`)).toHaveText(`${story.points! + 1} points`);
  await Promise.all([page.waitForResponse(/how=un/), page.locator(`#un_${story.id}`).click()]);
  expect(replica.truth().votes).toEqual({});
  await expect(page.locator(`#up_${story.id}`)).toBeVisible();
  await expect(page.locator(`#un_${story.id}`)).toHaveCount(0);
  expect(failed).toEqual([]);
});

test('a click on a clicky arrow votes in the background and hides the arrow, staying on the page', async ({ page, replica }) => {
  const story = firstStory(replica);
  await logIn(page);
  await expect(page.locator(`#up_${story.id}`)).toHaveClass('clicky');
  await page.locator(`#up_${story.id}`).click();
  await expect(page.locator(`#up_${story.id}`)).toBeHidden();
  await expect(page).toHaveURL(`${HN}/news`);
  await expect.poll(() => replica.truth().votes).toEqual({ harness: [story.id] });
  await expect(page.locator(`#un_${story.id}`)).toHaveText('unvote');
  await page.reload();
  await expect(page.locator(`#up_${story.id}`)).toHaveClass('clicky nosee');
});

test.describe('with scripting off', () => {
  test.use({ javaScriptEnabled: false });
  test('the hide link navigates and redirects back', async ({ page, replica }) => {
    const story = firstStory(replica);
    await logIn(page);
    await page.locator(`tr.athing[id="${story.id}"] + tr a:text-is("hide")`).click();
    await expect(page.locator('html')).toHaveAttribute('op', 'news');
    await expect(page.locator(`tr.athing[id="${story.id}"]`)).toHaveCount(0);
    expect(replica.truth().hidden).toEqual({ harness: [story.id] });
  });
  test('the vote link navigates and redirects back', async ({ page, replica }) => {
    const story = firstStory(replica);
    await logIn(page);
    await page.locator(`#up_${story.id}`).click();
    // The front page again; its URL stays the vote's, as the route adapter's redirect note explains.
    await expect(page.locator('html')).toHaveAttribute('op', 'news');
    expect(replica.truth().votes).toEqual({ harness: [story.id] });
    await expect(page.locator(`#up_${story.id}`)).toBeHidden();
  });
});

test.describe('2020 markup', () => {
  test.use({ replicaOptions: { faults: { markupYear: 2020 } } });
  test("HN's hidestory link hides in the background: the rows go at once, the page stays, the site hides the story", async ({ page, replica }) => {
    const story = firstStory(replica);
    await logIn(page);
    const hide = page.locator(`tr.athing[id="${story.id}"] + tr a:text-is("hide")`);
    await expect(hide).toHaveAttribute('onclick', `return hidestory(event, this, ${story.id})`);
    const answer = await hideWithScript(page, story.id);
    expect(new URL(answer.url()).searchParams.get('onop')).toBe('news');
    expect(answer.status()).toBe(200);
    await expect(page).toHaveURL(`${HN}/news`);
    await expect(page.locator(`tr.athing[id="${story.id}"]`)).toHaveCount(0);
    expect(replica.truth().hidden).toEqual({ harness: [story.id] });
    // The item page's hide link is a plain one, as HN's: it loads `hide` and comes back.
    await page.goto(`${HN}/item?id=${story.id}`);
    await expect(page.locator('a:text-is("un-hide")')).not.toHaveAttribute('onclick', /./);
  });

  test('the onclick arrow votes in the background', async ({ page, replica }) => {
    const story = firstStory(replica);
    await logIn(page);
    await page.locator(`#up_${story.id}`).click();
    await expect(page.locator(`#up_${story.id}`)).toBeHidden();
    await expect(page).toHaveURL(`${HN}/news`);
    await expect.poll(() => replica.truth().votes).toEqual({ harness: [story.id] });
  });
});

/** Clicks story `id`'s hide link on the page and waits for the site's answer to the request HN's script sends for it. */
async function hideWithScript(page: Page, id: string) {
  const snip = page.waitForResponse((response) => new URL(response.url()).pathname === '/snip-story');
  await page.locator(`tr.athing[id="${id}"] + tr a:text-is("hide")`).click();
  return snip;
}

test('in the browser, hide takes the story off /news and /hidden lists it; favorite on its item page, listed on /favorites', async ({ page, replica }) => {
  const story = firstStory(replica);
  await logIn(page);
  await expect(page.locator(`tr.athing[id="${story.id}"] + tr a:text-is("hide")`)).toHaveClass('clicky hider');
  await hideWithScript(page, story.id);
  await expect(page).toHaveURL(`${HN}/news`);
  await expect(page.locator(`tr.athing[id="${story.id}"]`)).toHaveCount(0);
  await expect(page.locator('tr.athing')).toHaveCount(29);
  await page.goto(`${HN}/hidden`);
  await expect(page.locator('tr.athing')).toHaveCount(1);
  await expect(page.locator(`tr.athing[id="${story.id}"] span.rank`)).toHaveText('1.');
  await page.goto(`${HN}/item?id=${story.id}`);
  await page.getByRole('link', { name: 'favorite', exact: true }).click();
  await expect(page).toHaveURL(`${HN}/item?id=${story.id}`);
  await expect(page.getByRole('link', { name: 'un-favorite', exact: true })).toBeVisible();
  await page.goto(`${HN}/favorites?id=harness`);
  await expect(page.locator('tr.athing')).toHaveCount(1);
  expect(replica.truth()).toMatchObject({ hidden: { harness: [story.id] }, faves: { harness: [story.id] } });
});
