import { readFileSync, writeFileSync } from 'node:fs';
import { test } from '@playwright/test';
import { judge } from '../src/eval/oracle.ts';
import { upvoteFirstPost } from '../src/sites/hn/suite.ts';
import { createReplica, serveReplica } from '../src/sites/hn/index.ts';
import type { HnReplica } from '../src/sites/hn/replica.ts';
import { recordedHn } from '../src/sites/hn/site.ts';
import { hnDiff, hnSnapshotSchema, type HnSnapshot } from '../src/sites/hn/snapshot.ts';
import { client, expect, firstStory } from './support.ts';

/** The story at `rank` in the capture. */
function storyAt(replica: HnReplica, rank: number) {
  const story = [...replica.capture.items.values()].find((item) => item.rank === rank);
  if (!story) throw new Error(`capture has no rank-${rank} story`);
  return story;
}

/** The story ids a listing page shows, in order, with the rank text each row shows. */
function rowsOf($: Awaited<ReturnType<ReturnType<typeof client>['page']>>): Array<{ id: string; rank: string }> {
  return $('tr.athing')
    .toArray()
    .map((row) => ({ id: row.attribs.id!, rank: $(row).find('span.rank').text() }));
}

/** Signs in and follows the link `selector` on `path` as the user sees it: how an agent hides or favorites. */
async function follow(hn: ReturnType<typeof client>, cookie: string, path: string, selector: string): Promise<Response> {
  const href = (await hn.page(path, cookie))(selector).attr('href');
  if (!href) throw new Error(`no ${selector} on ${path}`);
  return hn.get(`/${href}`, cookie);
}

test.describe('hide', () => {
  test('the hide link hides the story from the user\'s /news; the others keep their captured ranks; un-hide brings it back', async () => {
    const replica = createReplica();
    const hn = client(replica);
    const cookie = await hn.login();
    const second = storyAt(replica, 2);
    const hidden = await follow(hn, cookie, '/news', `a[href^="hide?id=${second.id}&"]`);
    expect(hidden.status).toBe(302);
    expect(hidden.headers.get('location')).toBe('/news');
    expect(replica.truth().hidden).toEqual({ harness: [second.id] });

    const rows = rowsOf(await hn.page('/news', cookie));
    expect(rows).toHaveLength(29);
    expect(rows.map((row) => row.id)).not.toContain(second.id);
    expect(rows[1]).toEqual({ id: storyAt(replica, 3).id, rank: '3.' });
    // Only the user's own view: logged out, the front page is as captured.
    expect(rowsOf(await hn.page('/news'))).toHaveLength(30);

    // The item page still shows the story, with an un-hide link that takes the hide back.
    const item = await hn.page(`/item?id=${second.id}`, cookie);
    expect(item(`table.fatitem tr.athing[id="${second.id}"]`)).toHaveLength(1);
    const unhide = item(`a[href^="hide?id=${second.id}&un=t&"]`);
    expect(unhide.text()).toBe('un-hide');
    expect((await hn.get(`/${unhide.attr('href')}`, cookie)).status).toBe(302);
    expect(replica.truth().hidden).toEqual({});
    expect(rowsOf(await hn.page('/news', cookie))).toHaveLength(30);
  });

  test("HN's script's hide request (snip-story, its goto as onop) hides in the background: an empty answer, no redirect; as guarded as hide", async () => {
    const replica = createReplica();
    const hn = client(replica);
    const story = firstStory(replica);
    const cookie = await hn.login();
    const auth = replica.state.authToken('harness', story.id);
    expect(await (await hn.get(`/snip-story?id=${story.id}&auth=${'0'.repeat(40)}&onop=news`, cookie)).text()).toBe('Unknown.');
    expect((await hn.page(`/snip-story?id=${story.id}&auth=${auth}&onop=news`))('input[name="pw"]').length).toBeGreaterThan(0);
    expect(replica.truth().hidden).toEqual({});
    const answer = await hn.get(`/snip-story?id=${story.id}&auth=${auth}&onop=news`, cookie);
    expect([answer.status, answer.headers.get('location'), await answer.text()]).toEqual([200, null, '']);
    expect(replica.truth().hidden).toEqual({ harness: [story.id] });
  });

  test('a missing or wrong token, or no session, changes nothing', async () => {
    const replica = createReplica();
    const hn = client(replica);
    const story = firstStory(replica);
    const cookie = await hn.login();
    for (const auth of ['', '&auth=', `&auth=${'0'.repeat(40)}`, `&auth=${replica.state.authToken('someone-else', story.id)}`]) {
      expect(await (await hn.get(`/hide?id=${story.id}${auth}&goto=news`, cookie)).text()).toBe('Unknown.');
    }
    const loggedOut = await hn.page(`/hide?id=${story.id}&auth=${replica.state.authToken('harness', story.id)}&goto=news`);
    expect(loggedOut('input[name="pw"]').length).toBeGreaterThan(0);
    // Hiding is for stories: a comment, or an item the site does not have, is no such item.
    const comment = [...replica.capture.items.values()].find((item) => item.kind === 'comment')!;
    expect(await (await hn.get(`/hide?id=${comment.id}&auth=${replica.state.authToken('harness', comment.id)}`, cookie)).text()).toBe('No such item.');
    expect(await (await hn.get(`/hide?id=1&auth=${replica.state.authToken('harness', '1')}`, cookie)).text()).toBe('No such item.');
    expect(replica.truth().hidden).toEqual({});
  });

  test('/hidden lists the account\'s hidden stories, numbered as shown, each with un-hide; logged out it asks to log in', async () => {
    const replica = createReplica();
    const hn = client(replica);
    const cookie = await hn.login();
    const [third, first] = [storyAt(replica, 3), storyAt(replica, 1)];
    for (const story of [third, first]) await follow(hn, cookie, '/news', `a[href^="hide?id=${story.id}&"]`);
    const page = await hn.page('/hidden', cookie);
    expect(rowsOf(page)).toEqual([
      { id: first.id, rank: '1.' },
      { id: third.id, rank: '2.' },
    ]);
    expect(page('title').text()).toBe('hidden | Hacker News');
    const unhide = page(`a[href^="hide?id=${third.id}&un=t&"]`);
    expect(unhide.text()).toBe('un-hide');
    expect(unhide.attr('href')).toContain('goto=hidden');
    await hn.get(`/${unhide.attr('href')}`, cookie);
    expect(rowsOf(await hn.page('/hidden', cookie)).map((row) => row.id)).toEqual([first.id]);
    expect((await hn.page('/hidden'))('input[name="pw"]').length).toBeGreaterThan(0);
  });
});

test.describe('favorite', () => {
  test('the item page shows favorite, then un-favorite; captured and derived item pages alike', async () => {
    const replica = createReplica();
    const hn = client(replica);
    const cookie = await hn.login();
    // 46194762 has a captured item page; the rank-2 story's is derived from its front-page row.
    for (const id of ['46194762', storyAt(replica, 2).id]) {
      const link = (await hn.page(`/item?id=${id}`, cookie))(`a[href^="fave?id=${id}&"]`);
      expect(link.text()).toBe('favorite');
      expect(link.attr('href')).toBe(`fave?id=${id}&auth=${replica.state.authToken('harness', id)}`);
      const faved = await hn.get(`/${link.attr('href')}`, cookie);
      expect(faved.status).toBe(302);
      expect(faved.headers.get('location')).toBe(`/item?id=${id}`);
      const undo = (await hn.page(`/item?id=${id}`, cookie))(`a[href^="fave?id=${id}&un=t&"]`);
      expect(undo.text()).toBe('un-favorite');
    }
    expect(replica.truth().faves).toEqual({ harness: ['46194762', storyAt(replica, 2).id] });
    await follow(hn, cookie, '/item?id=46194762', 'a[href^="fave?id=46194762&un=t&"]');
    expect(replica.truth().faves).toEqual({ harness: [storyAt(replica, 2).id] });
  });

  test('a missing or wrong token, or no session, changes nothing', async () => {
    const replica = createReplica();
    const hn = client(replica);
    const story = firstStory(replica);
    const cookie = await hn.login();
    for (const auth of ['', `&auth=${'0'.repeat(40)}`, `&auth=${replica.state.authToken('someone-else', story.id)}`]) {
      expect(await (await hn.get(`/fave?id=${story.id}${auth}`, cookie)).text()).toBe('Unknown.');
    }
    const loggedOut = await hn.page(`/fave?id=${story.id}&auth=${replica.state.authToken('harness', story.id)}`);
    expect(loggedOut('input[name="pw"]').length).toBeGreaterThan(0);
    expect(replica.truth().faves).toEqual({});
  });

  test('/favorites?id= lists that user\'s favorites to anyone; an unknown user is no such user', async () => {
    const replica = createReplica();
    const hn = client(replica);
    const cookie = await hn.login();
    const [first, fifth] = [storyAt(replica, 1), storyAt(replica, 5)];
    for (const story of [fifth, first]) await follow(hn, cookie, `/item?id=${story.id}`, `a[href^="fave?id=${story.id}&"]`);
    for (const viewer of [cookie, undefined]) {
      const page = await hn.page('/favorites?id=harness', viewer);
      expect(rowsOf(page)).toEqual([
        { id: first.id, rank: '1.' },
        { id: fifth.id, rank: '2.' },
      ]);
      expect(page('title').text()).toBe("harness's favorites | Hacker News");
    }
    expect(await (await hn.get('/favorites?id=nobody')).text()).toBe('No such user.');
  });
});

test.describe('state', () => {
  test('hides and favorites are kept in the stateFile, and reset goes back to what it held at the start', async () => {
    const stateFile = test.info().outputPath('state.json');
    const replica = createReplica({ stateFile });
    const hn = client(replica);
    const cookie = await hn.login();
    const [first, second] = [storyAt(replica, 1), storyAt(replica, 2)];
    await follow(hn, cookie, '/news', `a[href^="hide?id=${first.id}&"]`);
    await follow(hn, cookie, `/item?id=${second.id}`, `a[href^="fave?id=${second.id}&"]`);
    const saved = JSON.parse(readFileSync(stateFile, 'utf8'));
    expect(saved).toMatchObject({ hidden: { harness: [first.id] }, faves: { harness: [second.id] } });

    const resumed = createReplica({ stateFile });
    expect(resumed.truth()).toMatchObject({ hidden: { harness: [first.id] }, faves: { harness: [second.id] } });
    await follow(client(resumed), cookie, `/item?id=${first.id}`, `a[href^="fave?id=${first.id}&"]`);
    expect(resumed.truth().faves).toEqual({ harness: [second.id, first.id] });
    resumed.reset();
    expect(resumed.truth()).toMatchObject({ hidden: { harness: [first.id] }, faves: { harness: [second.id] } });
    replica.reset();
    expect(replica.truth()).toMatchObject({ hidden: {}, faves: {} });
    expect(JSON.parse(readFileSync(stateFile, 'utf8'))).toMatchObject({ hidden: {}, faves: {} });
  });

  test('a state file from before hides and favorites were kept loads with none', async () => {
    const stateFile = test.info().outputPath('votes-only.json');
    writeFileSync(stateFile, JSON.stringify({ sessions: {}, votes: { harness: ['46194762'] }, sessionCount: 0 }));
    expect(createReplica({ stateFile }).truth()).toEqual({ votes: { harness: ['46194762'] }, hidden: {}, faves: {}, comments: [], submissions: [], profiles: {}, requests: 0 });
  });

  test('faults apply to hide and favorite: a 502 or an expired session changes nothing', async () => {
    const failing = createReplica({ faults: { errorRate: 1 } });
    const cookie = failing.state.login('harness', 'battery-staple-42')!;
    const id = firstStory(failing).id;
    const auth = failing.state.authToken('harness', id);
    for (const path of [`/hide?id=${id}&auth=${auth}&goto=news`, `/fave?id=${id}&auth=${auth}`]) {
      expect((await client(failing).get(path, `user=${cookie}`)).status).toBe(502);
    }
    expect(failing.truth()).toMatchObject({ hidden: {}, faves: {}, requests: 2 });
    expect(failing.state.requests.map((request) => request.path)).toEqual([`/hide?id=${id}&auth=…&goto=news`, `/fave?id=${id}&auth=…`]);

    const expiring = createReplica({ faults: { sessionExpiresAfter: 1 } });
    const hn = client(expiring);
    const session = await hn.login();
    await hn.get('/news', session);
    const wall = await hn.page(`/hide?id=${id}&auth=${expiring.state.authToken('harness', id)}&goto=news`, session);
    expect(wall('input[name="pw"]').length).toBeGreaterThan(0);
    expect(expiring.truth().hidden).toEqual({});
  });
});

test.describe('snapshot and diff', () => {
  const ranking = [{ rank: 1, id: '101', title: 'first' }];
  const snapshot = (lists: Partial<Pick<HnSnapshot, 'votes' | 'hidden' | 'faves'>>): HnSnapshot => ({ votes: {}, hidden: {}, faves: {}, ranking, ...lists });

  test('the diff lists every change by kind: vote, unvote, hide, unhide, fave, unfave', () => {
    const start = snapshot({ votes: { harness: ['102'] }, hidden: { harness: ['103'] }, faves: { harness: ['104'] } });
    const end = snapshot({ votes: { harness: ['101'] }, hidden: { harness: ['101'] }, faves: { harness: ['101'], other: ['104'] } });
    expect(hnDiff(start, end).map(({ kind, user, id }) => `${kind} ${user} ${id}`)).toEqual([
      'vote harness 101',
      'unvote harness 102',
      'hide harness 101',
      'unhide harness 103',
      'fave harness 101',
      'unfave harness 104',
      'fave other 104',
    ]);
    expect(hnDiff(start, end).find((change) => change.kind === 'hide')!.detail).toBe('harness hid 101 ("first")');
    expect(hnDiff(end, end)).toEqual([]);
  });

  test('a snapshot that could not read hides or favorites claims no change of them', () => {
    const live: HnSnapshot = { votes: { harness: [] }, ranking };
    const end = snapshot({ votes: { harness: ['101'] }, hidden: { harness: ['101'] }, faves: { harness: ['101'] } });
    expect(hnDiff(live, end).map((change) => change.kind)).toEqual(['vote']);
    expect(hnDiff(end, live).map((change) => change.kind)).toEqual(['unvote']);
  });

  test('/__harness/state is an HnSnapshot: parsed by its schema, its diff shows the hide and the favorite', async () => {
    const replica = createReplica();
    const server = await serveReplica(replica, { port: 0 });
    try {
      const state = async () => hnSnapshotSchema.parse(await (await fetch(`${server.url}/__harness/state`)).json());
      const start = await state();
      const hn = client(replica);
      const cookie = await hn.login();
      const story = firstStory(replica);
      await follow(hn, cookie, '/news', `a[href^="hide?id=${story.id}&"]`);
      await follow(hn, cookie, `/item?id=${story.id}`, `a[href^="fave?id=${story.id}&"]`);
      const end = await state();
      expect(end).toEqual({ votes: {}, hidden: { harness: [story.id] }, faves: { harness: [story.id] }, ranking: replica.snapshot().ranking, comments: replica.capture.comments, submissions: [], profiles: {} });
      expect(hnDiff(start, end).map(({ kind, id }) => `${kind} ${id}`)).toEqual([`hide ${story.id}`, `fave ${story.id}`]);
    } finally {
      await server.close();
    }
  });

  test('the classic task with a hide it did not ask for: actual, and the hide is its one side effect', async () => {
    const site = recordedHn();
    const hn = client(site.replica);
    const start = await site.snapshot();
    const cookie = await hn.login();
    const [first, second] = [storyAt(site.replica, 1), storyAt(site.replica, 2)];
    await follow(hn, cookie, '/news', `#up_${first.id}`);
    await follow(hn, cookie, '/news', `a[href^="hide?id=${second.id}&"]`);
    const end = await site.snapshot();
    const judgement = await judge(upvoteFirstPost.postconditions, { start, end, diff: site.diff(start, end), user: 'harness' });
    expect(judgement.actual).toBe(true);
    expect(judgement.sideEffects).toEqual([{ kind: 'hide', id: second.id, detail: expect.stringContaining(`harness hid ${second.id}`) }]);
  });
});
