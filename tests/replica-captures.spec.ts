import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from '@playwright/test';
import * as cheerio from 'cheerio';
import { createReplica, sanitizeCapture } from '../src/sites/hn/index.ts';
import { hnSuite } from '../src/sites/hn/suite.ts';
import { client, expect, referenceDir, TOKEN, withoutMore } from './support.ts';

const reference = (name: string) => join(referenceDir, name);

test.describe('real captures from ../shared/hn-reference', () => {
  test.skip(!existsSync(referenceDir), 'no ../shared/hn-reference beside the project');

  test('2025 logged-out front page: served byte for byte (a one-page capture: no More), logged-in view derived, voting works', async () => {
    const file = reference('front-2025-euske-lofi.html');
    const replica = createReplica({ capture: file });
    const hn = client(replica);
    expect(await (await hn.get('/news')).text()).toBe(withoutMore(readFileSync(file, 'utf8')));
    const cookie = await hn.login();
    const page = await hn.page('/news', cookie);
    expect(page('tr.athing.submission').length).toBe(30);
    expect(page('a#me').text()).toBe('harness');
    expect(page('span#karma').length).toBe(1);
    const up = page('a[id^="up_"]').first();
    expect(up.attr('class')).toBe('clicky');
    const id = up.attr('id')!.slice(3);
    await hn.get(`/${up.attr('href')}`, cookie);
    const voted = await hn.page('/news', cookie);
    expect(voted(`#up_${id}`).attr('class')).toBe('clicky nosee');
    expect(voted(`#unv_${id} a#un_${id}`).text()).toBe('unvote');
    expect(replica.truth().votes).toEqual({ harness: [id] });
  });

  test('2025 logged-in front page: read back as logged-out, with no token or user name left', async () => {
    const file = reference('front-logged-in-2025-pixlie-PixlieAI.html');
    const clean = sanitizeCapture(readFileSync(file, 'utf8'));
    expect(clean).not.toMatch(/auth=/);
    expect(clean).not.toContain('brainless');
    expect(clean).not.toMatch(/clicky|>flag<|id='me'|id='logout'/);
    expect(clean).toContain('<a href="login?goto=news">login</a>');
    const hn = client(createReplica({ capture: file }));
    const page = await hn.page('/news', await hn.login());
    expect(page('tr.athing').length).toBe(30);
    expect(page('a[id^="up_"]').length).toBe(page('tr.athing').length - page('tr.athing:not(:has(a[id^="up_"]))').length);
    for (const link of page('a[id^="up_"]').toArray()) expect(new URL(link.attribs.href!, 'https://x/').searchParams.get('auth')).toMatch(TOKEN);
    expect(page('a[href^="flag?"]').length).toBeGreaterThan(20);
  });

  test('2026 item page with 124 comments: served as captured, comments can be voted', async () => {
    const replica = createReplica({ capture: reference('item-2026-harrisjose-easyhn.html') });
    const hn = client(replica);
    const story = [...replica.capture.items.values()].find((item) => item.kind === 'story')!;
    const page = await hn.page(`/item?id=${story.id}`);
    expect(page('tr.athing.comtr').length).toBe(124);
    const comment = page('tr.athing.comtr').first().attr('id')!;
    const cookie = await hn.login(`vote?id=${comment}&how=up&goto=item%3Fid%3D${story.id}`);
    const voted = await hn.page(`/item?id=${story.id}`, cookie);
    expect(voted(`#up_${comment}`).hasClass('nosee')).toBe(true);
    expect(replica.truth().votes).toEqual({ harness: [comment] });
  });

  test('2020 logged-in item page: vote state stripped, onclick voting derived again', async () => {
    const replica = createReplica({ capture: reference('item-logged-in-2020-goranmoomin-HNAPI.html') });
    expect(replica.capture.style).toBe('onclick');
    const hn = client(replica);
    const loggedOut = await hn.page('/item?id=1');
    expect(loggedOut('.nosee').length).toBe(0);
    expect(loggedOut('a[id^="un_"]').length).toBe(0);
    expect(loggedOut.html()).not.toContain('hntestacc');
    const page = await hn.page('/item?id=1', await hn.login());
    expect(page('#up_15').attr('onclick')).toBe('return vote(event, this, "up")');
    expect(page('#up_15').attr('href')).toMatch(/^vote\?id=15&how=up&auth=[0-9a-f]{40}&goto=item%3Fid%3D1#15$/);
  });

  test('2020 item page of a closed thread (no comment form, no reply link): the snapshot says so, and a comment posted anyway is refused', async () => {
    const replica = createReplica({ capture: reference('item-logged-in-2020-goranmoomin-HNAPI.html') });
    expect(replica.snapshot().ranking).toMatchObject([{ rank: 1, id: '1', closed: true }]);
    const hn = client(replica);
    const cookie = await hn.login();
    const answer = await hn.post('/comment', { parent: '1', goto: 'item?id=1', hmac: replica.state.authToken('harness', '1'), text: 'Too late.' }, cookie);
    expect(await answer.text()).toBe("You can't reply to that item.");
    expect(replica.truth().comments).toEqual([]);
    expect(createReplica({ capture: reference('item-2026-harrisjose-easyhn.html') }).snapshot().ranking[0]!.closed).toBeUndefined();
  });
});

test.describe('a capture set: a folder of pages is one site', () => {
  /** The own 2020 fixture's pages saved under other names, as by hand: names that sort page 2 before page 1, and a login page. */
  function savedByHand(): string {
    const dir = mkdtempSync(test.info().outputPath('by-hand-'));
    const own = (name: string) => readFileSync(join('fixtures/hn/2020', name), 'utf8');
    writeFileSync(join(dir, 'b-front.html'), own('news.html'));
    writeFileSync(join(dir, 'a-more.html'), own('news-p2.html'));
    for (const name of readdirSync('fixtures/hn/2020').filter((file) => file.startsWith('item-'))) writeFileSync(join(dir, `thread ${name.slice(5)}`), own(name));
    writeFileSync(join(dir, 'login.html'), '<html><body><b>Login</b><br><br><form method="post"><input type="text" name="acct"></form></body></html>');
    return dir;
  }

  test('front pages and item pages, whatever their names: the same site as the own fixture, its threads on its stories', async () => {
    const set = createReplica({ capture: savedByHand() }).snapshot();
    const own = createReplica({ faults: { markupYear: 2020 } }).snapshot();
    expect(set).toEqual(own);
    // Page 2 is page 2 by its ranks, not its name; the captured threads are the front pages' stories'.
    expect(set.ranking.map((story) => story.rank)).toEqual(own.ranking.map((story) => story.rank));
    const threads = new Set(set.comments?.map((comment) => comment.story));
    expect(threads.size).toBeGreaterThan(1);
    for (const id of threads) expect(set.ranking.some((story) => story.id === id), id).toBe(true);
    const notApplicable = hnSuite.flatMap((task) => task.whyNotApplicable?.(set) ?? []);
    expect(notApplicable).toEqual([]);
  });

  test('real item pages of two eras combine: one front page lists both stories, each thread served on its own', async () => {
    test.skip(!existsSync(referenceDir), 'no ../shared/hn-reference beside the project');
    const dir = mkdtempSync(test.info().outputPath('items-'));
    for (const name of ['item-2026-harrisjose-easyhn.html', 'item-logged-in-2020-goranmoomin-HNAPI.html']) writeFileSync(join(dir, name), readFileSync(reference(name), 'utf8'));
    const replica = createReplica({ capture: dir });
    const { ranking, comments } = replica.snapshot();
    expect(ranking.map((story) => [story.rank, story.id])).toEqual([[1, '48350598'], [2, '1']]);
    expect(new Set(comments?.map((comment) => comment.story))).toEqual(new Set(['48350598', '1']));
    const hn = client(replica);
    const front = await hn.page('/news');
    expect(front('tr.athing').not('.comtr').map((_, row) => row.attribs.id).get()).toEqual(['48350598', '1']);
    expect((await hn.page('/item?id=1'))('tr.athing.comtr').length).toBe(comments!.filter((comment) => comment.story === '1').length);
  });

  test('a real front page with item pages of stories it does not list: the page after it lists them, reached by More', async () => {
    test.skip(!existsSync(referenceDir), 'no ../shared/hn-reference beside the project');
    const dir = mkdtempSync(test.info().outputPath('set-'));
    for (const name of ['front-2025-euske-lofi.html', 'item-2026-harrisjose-easyhn.html', 'item-logged-in-2020-goranmoomin-HNAPI.html']) writeFileSync(join(dir, name), readFileSync(reference(name), 'utf8'));
    const replica = createReplica({ capture: dir });
    const { ranking } = replica.snapshot();
    expect(ranking.filter((story) => story.rank > 30).map((story) => [story.rank, story.id])).toEqual([[31, '48350598'], [32, '1']]);
    const hn = client(replica);
    const first = await hn.page('/news');
    expect(first('tr.athing').length).toBe(30);
    expect(first('a.morelink').attr('href')).toMatch(/\?p=2$/);
    const second = await hn.page('/news?p=2');
    expect(second('tr.athing').map((_, row) => [[second(row).find('span.rank').text(), row.attribs.id]]).get()).toEqual([['31.', '48350598'], ['32.', '1']]);
    expect(second('a.morelink').length).toBe(0);
    expect((await hn.page('/news?p=3'))('tr.athing').length).toBe(0);
  });
});

test.describe('bad input ends with one line naming the problem', () => {
  test('an unknown capture file', () => {
    expect(() => createReplica({ capture: 'nowhere/front.html' })).toThrow(/^capture not found: nowhere\/front\.html$/);
  });

  test('a capture with no story rows', () => {
    const dir = mkdtempSync(test.info().outputPath('hn-capture-'));
    writeFileSync(join(dir, 'empty.html'), '<html><body><table></table></body></html>');
    expect(() => createReplica({ capture: join(dir, 'empty.html') })).toThrow(/has no story rows \(tr\.athing, or before 2014 a row over a td\.subtext\)$/);
    expect(() => createReplica({ capture: dir })).toThrow(/^capture folder .* has no front or item page \(no \.html page with story rows: tr\.athing, or before 2014 a row over a td\.subtext\)$/);
  });

  test('bad option values name the field', () => {
    expect(() => createReplica({ faults: { errorRate: 1.5 } })).toThrow(/^hn replica options: faults\.errorRate: .*<=1/);
    expect(() => createReplica({ faults: { markupYear: 2019 as 2020 } })).toThrow(/faults\.markupYear/);
    expect(() => createReplica({ faults: { latency: 5 } as never })).toThrow(/faults: Unrecognized key: "latency"/);
    expect(() => createReplica({ faults: { rateLimitAfter: -1 } })).toThrow(/faults\.rateLimitAfter/);
  });

  test('error messages are single lines', () => {
    try {
      createReplica({ faults: { errorRate: -1, latencyMs: 1.5 } });
      throw new Error('no error');
    } catch (error) {
      expect((error as Error).message.split('\n')).toHaveLength(1);
      expect((error as Error).message).toMatch(/faults\.latencyMs.*faults\.errorRate|faults\.errorRate.*faults\.latencyMs/);
    }
  });
});

test("a logged-in capture's hidestory link reads back as the logged-out hide link", () => {
  const loggedIn = `<a href="hide?id=26000001&amp;auth=${'a'.repeat(40)}&amp;goto=news" onclick="return hidestory(event, this, 26000001)">hide</a>`;
  expect(sanitizeCapture(loggedIn)).toBe('<a href="hide?id=26000001&amp;goto=news">hide</a>');
});

test('captures of every markup year parse to the same stories', async () => {
  const ids = (year: number) => {
    const $ = cheerio.load(readFileSync(`fixtures/hn/${year}/news.html`, 'utf8'));
    return $('tr.athing').map((_, row) => row.attribs.id).get();
  };
  expect(ids(2017)).toEqual(ids(2025));
  expect(ids(2020)).toEqual(ids(2025));
});
