import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Page } from '@playwright/test';
import * as cheerio from 'cheerio';
import { readFileSync } from 'node:fs';
import { classifyHn } from '../src/sites/hn/classify.ts';
import { modernizeLegacy } from '../src/sites/hn/legacy.ts';
import { createReplica, type HnReplica } from '../src/sites/hn/replica.ts';
import { sanitizeCapture } from '../src/sites/hn/sanitize.ts';
import type { HnSnapshot } from '../src/sites/hn/snapshot.ts';
import { account, expect, test } from './support.ts';

/**
 * A capture in HN's pre-2014 markup (news.arc's tables, no `tr.athing`): the project's own
 * synthetic 2011 page 2 (ranks 31 to 60) and one item page. The replica reads it as it reads the
 * later eras, serves it as page 2, and the page's own `vote(this)` script votes through it.
 */
const dir = fileURLToPath(new URL('fixtures/captures-2011/', import.meta.url));
const PAGE2 = join(dir, 'news2.html');
const STORY = '2864324';
const HN = 'https://news.ycombinator.com';

async function get(replica: HnReplica, path: string, cookie?: string) {
  const response = await replica.handle(new Request(`${HN}${path}`, { headers: cookie ? { cookie } : {} }));
  return { response, $: cheerio.load(await response.text()) };
}

test.describe('reading a 2011 capture', () => {
  test('the page-2 capture: thirty stories ranked 31 to 60, a job, a text post, a GitHub link and a "discuss"', async () => {
    const snapshot = (await createReplica({ capture: PAGE2 }).snapshot()) as HnSnapshot;
    expect(snapshot.ranking.map((story) => story.rank)).toEqual(Array.from({ length: 30 }, (_, index) => index + 31));
    const byTitle = (prefix: string) => snapshot.ranking.find((story) => story.title.startsWith(prefix))!;
    expect(byTitle('Quarry (YC S11)')).toMatchObject({ id: '2865210', job: true, rank: 40 });
    expect(byTitle('Quarry (YC S11)').points).toBeUndefined();
    expect(byTitle('Ask HN: How do you keep')).toMatchObject({ points: 63, comments: 88 });
    expect(byTitle('Ask HN: How do you keep').url ?? byTitle('Ask HN: How do you keep').site).toBeUndefined();
    expect(byTitle('Lantern:')).toMatchObject({ rank: 31, site: 'github.com', url: 'https://github.com/pebblestack/lantern', by: 'oyelaran', points: 211, comments: 39 });
    expect(byTitle('The economics of rural broadband')).toMatchObject({ comments: 0 });
  });

  test('the item page: its story, and its comments with their authors, texts and nesting', async () => {
    const snapshot = (await createReplica({ capture: join(dir, `item-${STORY}.html`) }).snapshot()) as HnSnapshot;
    expect(snapshot.ranking).toMatchObject([{ id: STORY, rank: 1, title: 'A field guide to writing small compilers in Lisp', points: 184, comments: 57, by: 'hpetrakis' }]);
    expect(snapshot.comments!.map(({ id, parent, by }) => [id, parent, by])).toEqual([
      ['2864601', STORY, 'abelqvist'],
      ['2864633', '2864601', 'gquine'],
      ['2864650', '2864633', 'abelqvist'],
      ['2864612', STORY, 'lpaxson'],
      ['2864620', STORY, 'nbaraka'],
      ['2864671', '2864620', 'fetterly'],
    ]);
    expect(snapshot.comments![4]!.text).toBe('Does anyone know of a similar guide for ML-family languages?');
  });

  test('served as page 2: /news says page 1 was not captured and links on; /news?p=2 and news2 list ranks 31 to 60, with no More', async () => {
    const replica = createReplica({ capture: PAGE2 });
    const first = await get(replica, '/news');
    expect(first.$('body').text()).toContain('This capture starts at page 2 of the front page (rank 31): page 1 was not captured.');
    expect(first.$('a.morelink').attr('href')).toBe('news?p=2');
    for (const path of ['/news?p=2', '/news2']) {
      const { $ } = await get(replica, path);
      expect($('span.rank').first().text()).toBe('31.');
      expect($('span.rank').last().text()).toBe('60.');
      expect($('a:contains("More")').length, path).toBe(0);
      // The era's page as captured: its own vote script, and arrows that go back to page 2.
      expect($('script').text()).toContain('function vote(node)');
      expect($('#up_2864317').attr('href')).toBe('vote?for=2864317&dir=up&whence=news%3Fp%3D2');
      // The era's images came from ycombinator.com: the replica serves them.
      expect($('#up_2864317 img').attr('src')).toBe('grayarrow.gif');
    }
  });

  test('a capture set (page 2 and an item page): the thread is page 2\'s story, with its comment form', async () => {
    const replica = createReplica({ capture: dir });
    const snapshot = (await replica.snapshot()) as HnSnapshot;
    expect(snapshot.ranking).toHaveLength(30);
    expect(snapshot.ranking.find((story) => story.id === STORY)!.rank).toBe(32);
    const { $ } = await get(replica, `/item?id=${STORY}`);
    expect($('form[action="comment"] textarea[name="text"]').length).toBe(1);
    expect($('input[type="submit"]').attr('value')).toBe('add comment');
    const arrow = await replica.handle(new Request(`${HN}/grayarrow.gif`));
    expect([arrow.status, arrow.headers.get('content-type')]).toEqual([200, 'image/svg+xml']);
  });
});

test('a page-2 capture in later markup is page 2 as well: /news says so, /news?p=2 lists ranks 31 to 60', async () => {
  const replica = createReplica({ capture: fileURLToPath(new URL('../fixtures/hn/2025/news-p2.html', import.meta.url)) });
  expect((await get(replica, '/news')).$('body').text()).toContain('This capture starts at page 2 of the front page (rank 31): page 1 was not captured.');
  const { $ } = await get(replica, '/news?p=2');
  expect([$('span.rank').first().text(), $('span.rank').last().text()]).toEqual(['31.', '60.']);
  expect($('a.morelink').length).toBe(0);
});

test('a logged-in 2011 page reads as the logged-out one: no name, no karma, no by= or auth= on its votes, no flag links', () => {
  const loggedOut = readFileSync(PAGE2, 'utf8');
  const loggedIn = loggedOut
    .replace(/<a href="\/x\?fnid=\w+">login<\/a>/, '<a href="user?id=harness">harness</a>&nbsp;(41)&nbsp;|&nbsp;<a href="/x?fnid=Zq81">logout</a>')
    .replace(/(vote\?for=\d+&dir=up)(&whence=)/g, '$1&by=harness&auth=0f3a9c$2')
    .replace(/( \| <a href="item\?id=\d+">)/g, ' | <a href="/r?fnid=Kx2">flag</a>$1');
  expect(loggedIn).not.toBe(loggedOut);
  const served = (page: string) => modernizeLegacy(sanitizeCapture(page));
  expect(served(loggedIn)).toBe(served(loggedOut));
  expect(served(loggedIn)).not.toMatch(/harness|auth=|fnid/);
});

test('an era vote link is a vote to the classifier, as a later one is', () => {
  expect(classifyHn({ method: 'GET', url: `${HN}/vote?for=2864317&dir=up&by=harness&auth=0f3a&whence=news2` })).toMatchObject({ kind: 'vote', target: '2864317' });
  expect(classifyHn({ method: 'GET', url: `${HN}/vote?for=2864317&dir=un&whence=news2` })).toMatchObject({ kind: 'unvote', target: '2864317' });
});

async function logIn(page: Page, goto = 'news?p=2') {
  await page.goto(`${HN}/login?goto=${encodeURIComponent(goto)}`);
  await page.locator('input[name="acct"]').first().fill(account.username);
  await page.locator('input[name="pw"]').first().fill(account.password);
  await page.locator('input[value="login"]').click();
}

test.describe('the 2011 capture in a browser', () => {
  test.use({ replicaOptions: { capture: dir } });

  test('logged out, the era\'s vote link is a login wall, and logging in casts the vote', async ({ page, replica }) => {
    await page.goto(`${HN}/vote?for=2864317&dir=up&whence=news%3Fp%3D2`);
    await expect(page.locator('body')).toContainText('You have to be logged in to vote.');
    await page.locator('input[name="acct"]').first().fill(account.username);
    await page.locator('input[name="pw"]').first().fill(account.password);
    await page.locator('input[value="login"]').click();
    expect(replica.truth().votes).toEqual({ harness: ['2864317'] });
  });

  test("HN's own vote(this) script votes through the replica: the arrows go, the page stays, the vote counts; the replica's unvote takes it back", async ({ page, replica }) => {
    await logIn(page);
    const arrow = page.locator('#up_2864317');
    await expect(arrow).toHaveAttribute('onclick', 'return vote(this)');
    await expect(arrow).toHaveAttribute('href', /^vote\?for=2864317&dir=up&by=harness&auth=[0-9a-f]+&whence=news%3Fp%3D2$/);
    const ping = page.waitForRequest((request) => request.url().includes('/vote?for=2864317'));
    await arrow.click();
    await ping;
    await expect(arrow).toBeHidden();
    await expect(page).toHaveURL(`${HN}/news?p=2`);
    await expect.poll(() => replica.truth().votes).toEqual({ harness: ['2864317'] });
    await page.reload();
    await expect(arrow).toBeHidden();
    await expect(page.locator('#score_2864317')).toHaveText('212 points');
    await page.locator('#un_2864317').click();
    await expect.poll(() => replica.truth().votes).toEqual({});
    await expect(page.locator('#up_2864317')).toBeVisible();
  });

  test("a vote link with another user's name in `by` is refused", async ({ page, replica }) => {
    await logIn(page);
    const href = await page.locator('#up_2864317').getAttribute('href');
    await page.goto(`${HN}/${href!.replace('by=harness', 'by=someone')}`);
    await expect(page.locator('body')).toHaveText("Can't make that vote.");
    expect(replica.truth().votes).toEqual({});
  });

  test("the era's comment form posts a comment; the replica's own hide link hides a row", async ({ page, replica }) => {
    await logIn(page, `item?id=${STORY}`);
    await page.locator('textarea[name="text"]').fill('A comment through the 2011 form.');
    await page.locator('input[value="add comment"]').click();
    expect(replica.truth().comments).toMatchObject([{ parent: STORY, story: STORY, by: 'harness', text: 'A comment through the 2011 form.' }]);
    await expect(page.locator('body')).toContainText('A comment through the 2011 form.');
    await page.goto(`${HN}/news?p=2`);
    await page.locator('tr.athing[id="2864331"] + tr a:text-is("hide")').click();
    await expect(page.locator('tr.athing[id="2864331"]')).toHaveCount(0);
    expect(replica.truth().hidden).toEqual({ harness: ['2864331'] });
  });
});
