import { createHmac } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import * as cheerio from 'cheerio';
import { setupServer } from 'msw/node';
import { createReplica, replicaHandlers, serveReplica } from '../src/sites/hn/index.ts';
import { sanitizeCapture } from '../src/sites/hn/sanitize.ts';
import { recordedHn } from '../src/sites/hn/site.ts';
import { bodyText, client, expect, firstStory, TOKEN, withoutMore } from './support.ts';
import { test } from '@playwright/test';

test.describe('pages', () => {
  test('front pages list 30 stories each, page 2 continues the ranks, past the end is empty', async () => {
    const hn = client(createReplica());
    const front = await hn.page('/news');
    expect(front('tr.athing').length).toBe(30);
    expect(front('span.rank').first().text()).toBe('1.');
    expect(front('span.pagetop a[href^="login"]').attr('href')).toBe('login?goto=news');
    expect((await hn.page('/'))('tr.athing').first().attr('id')).toBe(front('tr.athing').first().attr('id'));
    const second = await hn.page('/news?p=2');
    expect(second('span.rank').first().text()).toBe('31.');
    expect(second('tr.athing').first().attr('id')).not.toBe(front('tr.athing').first().attr('id'));
    const past = await hn.get('/news?p=9');
    expect(past.status).toBe(200);
    expect(cheerioRows(await past.text())).toBe(0);
  });

  test('an item page is derived from its front-page row; unknown ids and paths answer like HN', async () => {
    const replica = createReplica();
    const hn = client(replica);
    const story = firstStory(replica);
    const item = await hn.page(`/item?id=${story.id}`);
    expect(item(`table.fatitem tr.athing[id="${story.id}"]`).length).toBe(1);
    expect(item(`#up_${story.id}`).attr('href')).toBe(`vote?id=${story.id}&how=up&goto=item%3Fid%3D${story.id}`);
    expect(item('title').text()).toContain(story.title);
    expect(await (await hn.get('/item?id=1')).text()).toBe('No such item.');
    const unknown = await hn.get('/no-such-page');
    expect(await unknown.text()).toBe('Unknown.');
  });

  test('logged out, the page is served byte for byte as captured (a one-page capture: no More)', async () => {
    const replica = createReplica({ capture: 'fixtures/hn/2025/news.html' });
    const { readFileSync } = await import('node:fs');
    const captured = readFileSync('fixtures/hn/2025/news.html', 'utf8');
    expect(withoutMore(captured).length).toBeLessThan(captured.length);
    expect(await (await client(replica).get('/news')).text()).toBe(withoutMore(captured));
  });

  // The fixtures hold a captured token or two (the favorite link's): the logged-out page is the capture without them.
  test('logged out, every fixture era\'s front pages and item page are served byte for byte, hide and favorite slots included (the last page: no More)', async () => {
    for (const year of [2017, 2020, 2025] as const) {
      const hn = client(createReplica({ faults: { markupYear: year } }));
      for (const [path, file] of [['/news', 'news.html'], ['/news?p=2', 'news-p2.html'], ['/item?id=46194762', 'item-46194762.html']] as const) {
        const captured = sanitizeCapture(readFileSync(`fixtures/hn/${year}/${file}`, 'utf8'));
        const expected = file === 'news-p2.html' ? withoutMore(captured) : captured;
        if (file === 'news-p2.html') expect(expected.length, `${year}: the More link is cut`).toBeLessThan(captured.length);
        expect(await (await hn.get(path)).text(), `${year} ${path}`).toBe(expected);
      }
    }
  });
});

test.describe('login', () => {
  test('the login form posts acct, pw and goto; a wrong password answers "Bad login."', async () => {
    const hn = client(createReplica());
    const form = await hn.page('/login?goto=news%3Fp%3D2');
    expect(form('input[name="acct"]').length).toBe(2);
    expect(form('input[type="password"][name="pw"]').length).toBe(2);
    expect(form('input[name="goto"]').first().val()).toBe('news?p=2');
    const bad = await hn.post('/login', { acct: 'harness', pw: 'wrong', goto: 'news' });
    expect(bad.status).toBe(200);
    expect(bad.headers.get('set-cookie')).toBeNull();
    expect(bodyText(await bad.text())).toMatch(/^Bad login\./);
  });

  test('a good login sets the user cookie and redirects 302 to goto, never off the site', async () => {
    const hn = client(createReplica());
    const ok = await hn.post('/login', { acct: 'harness', pw: 'battery-staple-42', goto: 'news?p=2' });
    expect(ok.status).toBe(302);
    expect(ok.headers.get('location')).toBe('/news?p=2');
    expect(ok.headers.get('set-cookie')).toMatch(/^user=harness&[0-9a-f]{40}; Path=\//);
    const offsite = await hn.post('/login', { acct: 'harness', pw: 'battery-staple-42', goto: 'https://evil.example/' });
    expect(offsite.headers.get('location')).toBe('/news');
  });

  test('HN_USERNAME / HN_PASSWORD override the default account', async () => {
    const previous = { ...process.env };
    process.env.HN_USERNAME = 'alice';
    process.env.HN_PASSWORD = 'correct-horse';
    try {
      const hn = client(createReplica());
      await expect(hn.login()).rejects.toThrow('login failed');
      expect(await hn.login('news', { username: 'alice', password: 'correct-horse' })).toMatch(/^user=alice&/);
    } finally {
      for (const key of ['HN_USERNAME', 'HN_PASSWORD'] as const) {
        if (previous[key] === undefined) delete process.env[key];
        else process.env[key] = previous[key];
      }
    }
  });

  test('a session is a replica\'s own: its cookie logs in to no other replica of the same seed, and no id follows from another', async () => {
    const [one, other] = [client(createReplica()), client(createReplica())];
    const cookies = [await one.login(), await one.login()];
    // The other replica has sessions of its own: a cookie that matched one of them would log in.
    const others = [await other.login(), await other.login()];
    for (const cookie of cookies) {
      expect((await one.page('/news', cookie))('a#me').text()).toBe('harness');
      expect((await other.page('/news', cookie))('a#me').length).toBe(0);
    }
    const ids = [...cookies, ...others].map((cookie) => cookie.split('&')[1]!);
    for (const id of ids) expect(id).toMatch(TOKEN);
    expect(new Set(ids).size).toBe(ids.length);
    // Sessions as a fixed secret and a counter would make them (HMAC('hn-replica:<seed>', 'session\nharness\n<n>')): none is one.
    const counted = [1, 2, 3, 4].map((n) => createHmac('sha1', 'hn-replica:1').update(`session\nharness\n${n}`).digest('hex'));
    for (const id of ids) expect(counted).not.toContain(id);
    for (const forged of counted) expect((await other.page('/news', `user=harness&${forged}`))('a#me').length).toBe(0);
  });

  test('logged in, the top bar shows the user, karma and a logout link that needs its token', async () => {
    const hn = client(createReplica());
    const cookie = await hn.login();
    const page = await hn.page('/news', cookie);
    expect(page('a#me').text()).toBe('harness');
    expect(page('span#karma').text()).toBe('1');
    const logout = page('a#logout').attr('href')!;
    expect(new URLSearchParams(logout.split('?')[1]).get('auth')).toMatch(TOKEN);
    await hn.get('/logout?auth=0000&goto=news', cookie);
    expect((await hn.page('/news', cookie))('a#me').length).toBe(1);
    const out = await hn.get(`/${logout}`, cookie);
    expect(out.headers.get('set-cookie')).toMatch(/^user=; .*Max-Age=0/);
    expect((await hn.page('/news', cookie))('a#me').length).toBe(0);
  });
});

test.describe('voting', () => {
  test('logged in, vote links carry a 40-hex token bound to user and item', async () => {
    const replica = createReplica();
    const hn = client(replica);
    const page = await hn.page('/news', await hn.login());
    const tokens = page('a[id^="up_"]').map((_, link) => new URLSearchParams(link.attribs.href!.split('?')[1]).get('auth')).get();
    expect(tokens.length).toBe(29);
    for (const token of tokens) expect(token).toMatch(TOKEN);
    expect(new Set(tokens).size).toBe(tokens.length);
    expect(page('a[id^="up_"]').first().attr('class')).toBe('clicky');
    expect(replica.state.authToken('harness', '1')).not.toBe(replica.state.authToken('other', '1'));
  });

  test('logged out, a vote answers the login wall; logging in from it completes the vote', async () => {
    const replica = createReplica();
    const hn = client(replica);
    const story = firstStory(replica);
    const wall = await hn.get(`/vote?id=${story.id}&how=up&goto=news`);
    const text = await wall.text();
    expect(bodyText(text)).toMatch(/^You have to be logged in to vote\./);
    const goto = (await hn.page(`/vote?id=${story.id}&how=up&goto=news`))('input[name="goto"]').first().val() as string;
    expect(goto).toBe(`vote?id=${story.id}&how=up&goto=news`);
    expect(replica.truth().votes).toEqual({});
    const cookie = await hn.login(goto);
    expect(replica.truth().votes).toEqual({ harness: [story.id] });
    const page = await hn.page('/news', cookie);
    expect(page(`#up_${story.id}`).hasClass('nosee')).toBe(true);
    expect(page(`#un_${story.id}`).text()).toBe('unvote');
    expect(page(`#score_${story.id}`).text()).toBe(`${story.points! + 1} points`);
  });

  test('a vote with a missing or wrong token changes nothing', async () => {
    const replica = createReplica();
    const hn = client(replica);
    const story = firstStory(replica);
    const cookie = await hn.login();
    for (const auth of ['', '&auth=', `&auth=${'0'.repeat(40)}`, `&auth=${replica.state.authToken('someone-else', story.id)}`]) {
      const response = await hn.get(`/vote?id=${story.id}&how=up${auth}&goto=news`, cookie);
      expect(await response.text()).toBe("Can't make that vote.");
    }
    expect(replica.truth().votes).toEqual({});
  });

  test('a vote registers, redirects to goto, and how=un undoes it', async () => {
    const replica = createReplica();
    const hn = client(replica);
    const story = firstStory(replica);
    const cookie = await hn.login();
    const up = (await hn.page('/news', cookie))(`#up_${story.id}`).attr('href')!;
    const voted = await hn.get(`/${up}`, cookie);
    expect(voted.status).toBe(302);
    expect(voted.headers.get('location')).toBe('/news');
    expect(replica.truth().votes.harness).toEqual([story.id]);
    const after = await hn.page('/news', cookie);
    expect(after(`#score_${story.id}`).text()).toBe(`${story.points! + 1} points`);
    await hn.get(`/${after(`#un_${story.id}`).attr('href')}`, cookie);
    expect(replica.truth().votes).toEqual({});
    const undone = await hn.page('/news', cookie);
    expect(undone(`#up_${story.id}`).hasClass('nosee')).toBe(false);
    expect(undone(`#un_${story.id}`).length).toBe(0);
    expect(undone(`#score_${story.id}`).text()).toBe(`${story.points} points`);
  });

  test('a background vote (js=t) answers 200 with no redirect', async () => {
    const replica = createReplica();
    const hn = client(replica);
    const story = firstStory(replica);
    const cookie = await hn.login();
    const response = await hn.get(`/vote?id=${story.id}&how=up&auth=${replica.state.authToken('harness', story.id)}&goto=news&js=t`, cookie);
    expect(response.status).toBe(200);
    expect(replica.truth().votes.harness).toEqual([story.id]);
  });

  test('the request log counts page requests and never holds a token', async () => {
    const replica = createReplica();
    const hn = client(replica);
    const story = firstStory(replica);
    const cookie = await hn.login();
    await hn.get('/news.css');
    await hn.get(`/vote?id=${story.id}&how=up&auth=${replica.state.authToken('harness', story.id)}&goto=news`, cookie);
    expect(replica.truth().requests).toBe(2);
    expect(JSON.stringify(replica.state.requests)).not.toMatch(/[0-9a-f]{40}/);
    expect(JSON.stringify(replica.state.requests)).not.toContain('battery-staple-42');
  });
});

/** Signs in over plain HTTP with the vote waiting in `goto`, as a login wall's form does. */
function signInAndVote(url: string, story: string): Promise<Response> {
  return fetch(`${url}/login`, {
    method: 'POST',
    body: new URLSearchParams({ acct: 'harness', pw: 'battery-staple-42', goto: `vote?id=${story}&how=up&goto=news` }),
    redirect: 'manual',
  });
}

test.describe('adapters', () => {
  test('the standalone server serves pages, cookies over plain HTTP and ground truth as JSON', async () => {
    const replica = createReplica();
    const server = await serveReplica(replica, { port: 0 });
    try {
      const story = firstStory(replica);
      const login = await signInAndVote(server.url, story.id);
      expect(login.status).toBe(302);
      expect(login.headers.get('set-cookie')).not.toContain('Secure');
      const state = await (await fetch(`${server.url}/__harness/state`)).json();
      expect(state).toEqual({ votes: { harness: [story.id] }, hidden: {}, faves: {}, comments: replica.capture.comments, submissions: [], profiles: {}, requests: 1, ranking: expect.any(Array) });
    } finally {
      await server.close();
    }
  });

  test('/__harness/state lists the front pages\' ranking as the pages show it, the same the site\'s snapshot reads', async () => {
    const replica = createReplica();
    const server = await serveReplica(replica, { port: 0 });
    try {
      const { ranking } = (await (await fetch(`${server.url}/__harness/state`)).json()) as { ranking: Array<{ rank: number; id: string; title: string }> };
      for (const [page, offset] of [['/news', 0], ['/news?p=2', 30]] as const) {
        const $ = cheerio.load(await (await fetch(`${server.url}${page}`)).text());
        const shown = $('tr.athing')
          .toArray()
          .map((row, index) => ({ rank: offset + index + 1, id: $(row).attr('id'), title: $(row).find('td.title').last().find('a').first().text() }));
        expect(ranking.slice(offset, offset + 30).map(({ rank, id, title }) => ({ rank, id, title }))).toEqual(shown);
      }
      expect(ranking).toHaveLength(60);
      expect((await recordedHn().snapshot()).ranking).toEqual(ranking);
    } finally {
      await server.close();
    }
  });

  test('POST /__harness/reset answers 204 and puts the replica back as it started: votes, sessions, request log, fault counters', async () => {
    const replica = createReplica({ faults: { rateLimitAfter: 3 } });
    const server = await serveReplica(replica, { port: 0 });
    const state = async () => (await (await fetch(`${server.url}/__harness/state`)).json()) as { votes: Record<string, string[]>; requests: number };
    const signedIn = async (cookie: string) => (await (await fetch(`${server.url}/news`, { headers: { cookie } })).text()).includes("id='me'");
    try {
      const story = firstStory(replica);
      const login = await signInAndVote(server.url, story.id);
      const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
      expect(await signedIn(cookie)).toBe(true);
      expect(await state()).toMatchObject({ votes: { harness: [story.id] }, requests: 2 });
      expect((await fetch(`${server.url}/news`)).status).toBe(200);
      expect((await fetch(`${server.url}/news`)).status).toBe(503);

      const reset = await fetch(`${server.url}/__harness/reset`, { method: 'POST' });
      expect(reset.status).toBe(204);
      expect(await reset.text()).toBe('');
      expect(await state()).toMatchObject({ votes: {}, requests: 0 });
      // The session the reset ended stays ended, even after a new login.
      expect((await fetch(`${server.url}/login`, { method: 'POST', body: new URLSearchParams({ acct: 'harness', pw: 'battery-staple-42', goto: 'news' }), redirect: 'manual' })).status).toBe(302);
      expect(await signedIn(cookie)).toBe(false);
      expect((await fetch(`${server.url}/news`)).status).toBe(200);
    } finally {
      await server.close();
    }
  });

  test('reset goes back to the votes and sessions a stateFile held at the start, and writes them back', async () => {
    const stateFile = test.info().outputPath('state.json');
    const earlier = { sessions: { saved: { user: 'harness', requests: 0 } }, votes: { harness: ['46194762'] }, sessionCount: 1 };
    writeFileSync(stateFile, JSON.stringify(earlier));
    const replica = createReplica({ stateFile, faults: { sessionExpiresAfter: 2 } });
    const http = client(replica);
    const signedIn = async () => (await http.page('/news', 'user=harness&saved'))('#me').length === 1;
    expect([await signedIn(), await signedIn(), await signedIn()]).toEqual([true, true, false]);
    await http.login(`vote?id=${[...replica.capture.items.values()].find((item) => item.rank === 2)!.id}&how=up&goto=news`);
    expect(replica.truth().votes.harness).toHaveLength(2);
    replica.reset();
    expect(replica.truth().votes).toEqual(earlier.votes);
    // The saved session is back as it started: its requests count from 0 again.
    expect([await signedIn(), await signedIn(), await signedIn()]).toEqual([true, true, false]);
    replica.reset();
    // An older file's session counter is not written back: session ids are random, nothing counts them.
    const { sessionCount: _, ...kept } = earlier;
    expect(JSON.parse(readFileSync(stateFile, 'utf8'))).toEqual({ ...kept, hidden: {}, faves: {}, comments: [], submissions: [], profiles: {}, postCount: 0 });
  });

  test('the server survives malformed requests: bad query, huge body, unknown methods', async () => {
    const server = await serveReplica(createReplica(), { port: 0 });
    try {
      expect((await fetch(`${server.url}/item?id=%E0%A4%A&&=&%`)).status).toBe(200);
      expect((await fetch(`${server.url}/login`, { method: 'POST', body: 'x'.repeat(200_000) })).status).toBe(413);
      expect((await fetch(`${server.url}/news`, { method: 'DELETE' })).status).toBe(405);
      expect((await fetch(`${server.url}/news`, { method: 'PROPFIND' })).status).toBe(405);
      expect((await fetch(`${server.url}/login`, { method: 'POST', body: '%%%=&&acct' })).status).toBe(200);
      expect((await fetch(`${server.url}/news`)).status).toBe(200);
    } finally {
      await server.close();
    }
  });

  test('the msw handler answers fetches to news.ycombinator.com from the same replica', async () => {
    const replica = createReplica();
    const server = setupServer(...replicaHandlers(replica));
    server.listen({ onUnhandledRequest: 'error' });
    try {
      const html = await (await fetch('https://news.ycombinator.com/news')).text();
      expect(cheerioRows(html)).toBe(30);
      const login = await fetch('https://news.ycombinator.com/login', {
        method: 'POST',
        body: new URLSearchParams({ acct: 'harness', pw: 'battery-staple-42', goto: 'news' }),
        redirect: 'manual',
      });
      expect(login.status).toBe(302);
      expect(replica.state.sessions.size).toBe(1);
    } finally {
      server.close();
    }
  });
});

function cheerioRows(html: string): number {
  return (html.match(/<tr class='athing/g) ?? []).length;
}
