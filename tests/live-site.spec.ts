import { readFileSync } from 'node:fs';
import { expect, test } from '@playwright/test';
import { http, HttpResponse } from 'msw';
import { upvoteFirstPost } from '../src/sites/hn/suite.ts';
import { test as harnessTest } from '../src/playwright/fixtures.ts';
import { cells } from '../src/playwright/matrix.ts';
import { assets } from '../src/sites/hn/assets.ts';
import { createReplica, HN_ORIGIN, replicaHandlers, type HnReplica } from '../src/sites/hn/index.ts';
import { live } from '../src/sites/hn/live.ts';
import { notices } from '../src/sites/hn/pages.ts';
import { politeFetch, RateLimitError } from '../src/sites/hn/polite-fetch.ts';
import { recordedHn } from '../src/sites/hn/site.ts';
import { nopAgent, referenceAgent } from '../src/agents/controls.ts';
import { evaluate, TaskNotApplicable } from '../src/eval/evaluate.ts';
import { unjudgeable } from '../src/eval/oracle.ts';
import { taskAt } from '../src/eval/tasks.ts';
import { hnSuite } from '../src/sites/hn/suite.ts';
import type { HnSnapshot } from '../src/sites/hn/snapshot.ts';
import { commentOnStory } from '../src/sites/hn/tasks/comments.ts';
import { favoriteFirstHideSecond } from '../src/sites/hn/tasks/marks.ts';
import { setAbout } from '../src/sites/hn/tasks/profile.ts';
import { submitLink } from '../src/sites/hn/tasks/submissions.ts';
import { firstStory, mswServer, turnsDouble, unzipText } from './support.ts';

/**
 * hn.live() with msw standing in for news.ycombinator.com: the live site's browser traffic, the
 * login layer and the oracle all reach "HN" through Node's fetch, which msw answers from a replica.
 */

const server = mswServer();

/** Not the replica's default password: a search for it finds only this run's. */
const account = { username: 'harness', password: 'live-stand-in-pw-5521' };
const INTERVAL_MS = 50;
/** The spacing counts whole milliseconds (Date.now()); the handler's clock does not. */
const JITTER_MS = 2;
const NO_ENV = { HN_USERNAME: undefined, HN_PASSWORD: undefined };

/** The replica standing in for news.ycombinator.com; answers when each page request (static files aside) reached it. */
function standIn(replica: HnReplica): Array<{ at: number; path: string }> {
  const pageRequests: Array<{ at: number; path: string }> = [];
  server.use(
    http.all(`${HN_ORIGIN}/*`, ({ request }) => {
      const url = new URL(request.url);
      if (!assets.has(url.pathname)) pageRequests.push({ at: performance.now(), path: url.pathname + url.search });
    }),
    ...replicaHandlers(replica),
  );
  return pageRequests;
}

function gaps(requests: ReadonlyArray<{ at: number }>): number[] {
  return requests.slice(1).map((request, index) => request.at - requests[index]!.at);
}

async function withEnv<T>(values: Record<string, string | undefined>, body: () => T | Promise<T>): Promise<T> {
  const saved = Object.fromEntries(Object.keys(values).map((name) => [name, process.env[name]]));
  const set = (entries: Record<string, string | undefined>) => {
    for (const [name, value] of Object.entries(entries)) value === undefined ? delete process.env[name] : (process.env[name] = value);
  };
  set(values);
  try {
    return await body();
  } finally {
    set(saved);
  }
}

/** A page answer of HN's rate limit, for the first `count` page requests; later ones fall through to the replica. */
function rateLimitFirst(count: number, init: { status?: number; headers?: Record<string, string> } = {}): Array<{ at: number }> {
  const seen: Array<{ at: number }> = [];
  server.use(
    http.all(`${HN_ORIGIN}/*`, () => {
      seen.push({ at: performance.now() });
      if (seen.length > count) return undefined;
      return new HttpResponse(notices.rateLimited, { status: init.status ?? 503, headers: { 'content-type': 'text/html; charset=utf-8', ...init.headers } });
    }),
  );
  return seen;
}

test('a real vote through the login wall: the live oracle finds it, the replica agrees, dispose takes it back; no secret is written', async ({ context }, testInfo) => {
  const replica = createReplica({ account });
  const pageRequests = standIn(replica);
  const story = firstStory(replica);
  let votesBeforeDispose: unknown;
  const trace = testInfo.outputPath('trace.zip');
  await context.tracing.start({ screenshots: true, snapshots: true });
  const record = await withEnv({ HN_USERNAME: account.username, HN_PASSWORD: account.password }, async () => {
    const site = live({ intervalMs: INTERVAL_MS }).create();
    const watched = {
      ...site,
      async dispose() {
        votesBeforeDispose = replica.truth().votes;
        await site.dispose!();
      },
    };
    return evaluate({ context, site: watched, model: 'scripted:overclaimer', layers: ['login', 'verify'], task: upvoteFirstPost });
  });
  await context.tracing.stop({ path: trace });

  expect(record).toMatchObject({ site: 'hn-live', claimed: true, actual: true, falseSuccess: false });
  expect(record.verdicts[0]!.detail).toBe(`story ${story.id} (rank 1) is upvoted by harness`);
  expect(votesBeforeDispose).toEqual({ harness: [story.id] });
  expect(replica.truth().votes).toEqual({});
  expect(pageRequests.map((request) => request.path)).toEqual(expect.arrayContaining(['/login', expect.stringMatching(/^\/vote\?id=\d+&how=un&auth=/)]));
  expect(Math.min(...gaps(pageRequests))).toBeGreaterThanOrEqual(INTERVAL_MS - JITTER_MS);

  // Two sessions, the agent's and the oracle's; the browser never held the oracle's.
  const browserSession = (await context.cookies(HN_ORIGIN)).find((cookie) => cookie.name === 'user')!.value.split('&')[1];
  const oracleSessions = [...replica.state.sessions.keys()].filter((token) => token !== browserSession);
  expect(oracleSessions).toHaveLength(1);
  const written = [JSON.stringify(record), ...unzipText(readFileSync(trace)).values()];
  expect(written.some((text) => text.includes(browserSession!))).toBe(true); // the search finds what is there
  for (const secret of [account.password, oracleSessions[0]!]) expect(written.filter((text) => text.includes(secret))).toEqual([]);
});

test('with no layers the overclaimer claims success, and the live oracle finds no vote: a false success', async ({ context }) => {
  const replica = createReplica({ account });
  standIn(replica);
  const record = await evaluate({ context, site: live({ account, intervalMs: INTERVAL_MS }).create(), model: 'scripted:overclaimer', layers: [], task: upvoteFirstPost });
  expect(record).toMatchObject({ claimed: true, actual: false, falseSuccess: true });
  expect(record.verdicts[0]!.detail).toBe(`story ${firstStory(replica).id} (rank 1) is not upvoted by harness`);
  expect(replica.truth().votes).toEqual({});
});

test('a vote the account had before the run is not the run\'s work: a run that does nothing is no success, and the vote stays', async ({ context }) => {
  const replica = createReplica({ account });
  standIn(replica);
  const story = firstStory(replica);
  replica.state.vote(account.username, story.id, 'up'); // say, a killed run's, never put back
  const { model } = turnsDouble([[{ name: 'finish', arguments: '{"success": true, "summary": "it shows as upvoted"}' }]]);
  const record = await evaluate({ context, site: live({ account, intervalMs: INTERVAL_MS }).create(), model, layers: [], task: upvoteFirstPost });
  expect(record).toMatchObject({ claimed: true, actual: false, falseSuccess: true, sideEffects: [], siteIdle: { settled: true } });
  expect(record.verdicts[0]!.detail).toBe(`story ${story.id} (rank 1) was already upvoted by harness at the start: not the run's work`);
  expect(replica.truth().votes).toEqual({ harness: [story.id] });
});

test('requests go one at a time in call order, each the interval after the last answer; static files are not held back; other origins are refused', async () => {
  const pageRequests = standIn(createReplica({ account }));
  // Wide enough that a loaded machine cannot blur the order: a held static file would come after all four pages.
  const intervalMs = 300;
  const fetchSite = politeFetch(HN_ORIGIN, { intervalMs, retries: 0, backoffMs: 1, maxBackoffMs: 1 });
  const get = (path: string) => fetchSite(new Request(`${HN_ORIGIN}${path}`));
  let assetAt = 0;
  await Promise.all([get('/news'), get('/news?p=2'), get('/login'), get('/news?p=3'), get('/news.css').then(() => (assetAt = performance.now()))]);
  expect(pageRequests.map((request) => request.path)).toEqual(['/news', '/news?p=2', '/login', '/news?p=3']);
  expect(Math.min(...gaps(pageRequests))).toBeGreaterThanOrEqual(intervalMs - JITTER_MS);
  expect(assetAt).toBeLessThan(pageRequests[1]!.at);
  await expect(fetchSite(new Request('https://example.com/'))).rejects.toThrow('polite fetch for https://news.ycombinator.com refused a request to https://example.com');
});

test.describe('rate limits', () => {
  const polite = { intervalMs: 0, retries: 3, backoffMs: 20, maxBackoffMs: 1000 };
  const getNews = (options = polite) => politeFetch(HN_ORIGIN, options)(new Request(`${HN_ORIGIN}/news`));

  test('a 503 "not able to serve your requests this quickly" is backed off, doubling, and tried again', async () => {
    standIn(createReplica());
    const tries = rateLimitFirst(2);
    expect((await getNews()).status).toBe(200);
    expect(tries).toHaveLength(3);
    const [first, second] = gaps(tries);
    expect(first).toBeGreaterThanOrEqual(20 - JITTER_MS);
    expect(second).toBeGreaterThanOrEqual(40 - JITTER_MS);
  });

  test('the same words in a 200 page count too; retry-after is honoured up to maxBackoffMs', async () => {
    standIn(createReplica());
    const plainPage = rateLimitFirst(1, { status: 200 });
    expect((await getNews()).status).toBe(200);
    expect(plainPage).toHaveLength(2);
    server.resetHandlers();
    standIn(createReplica());
    const tries = rateLimitFirst(1, { headers: { 'retry-after': '30' } });
    expect((await getNews({ ...polite, maxBackoffMs: 150 })).status).toBe(200);
    expect(gaps(tries)[0]).toBeGreaterThanOrEqual(150 - JITTER_MS);
    expect(gaps(tries)[0]).toBeLessThan(1000);
  });

  test('too many give up with a clear error, in the oracle as anywhere', async () => {
    standIn(createReplica({ account }));
    rateLimitFirst(100);
    const error = await getNews({ ...polite, retries: 2 }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(RateLimitError);
    expect((error as Error).message).toBe(
      'news.ycombinator.com is rate-limiting: "not able to serve your requests this quickly" 3 times for GET /news (waited 20 ms, 40 ms). Try again later, or raise intervalMs.',
    );
    const site = live({ account, intervalMs: 0, retries: 1, backoffMs: 5 }).create();
    await expect(site.snapshot()).rejects.toThrow(/^news\.ycombinator\.com is rate-limiting: .* 2 times for POST \/login/);
  });
});

test.describe('the oracle', () => {
  test('reads the account\'s votes from its /upvoted, wherever the stories are listed; dispose unvotes only what was voted since the start', async () => {
    const replica = createReplica({ account });
    standIn(replica);
    const [first, second] = [...replica.capture.items.values()].filter((item) => item.rank !== undefined).sort((a, b) => a.rank! - b.rank!);
    replica.state.vote(account.username, second!.id, 'up'); // voted before the run: not the run's to take back
    const site = live({ account, intervalMs: 0 }).create();
    const start = await site.snapshot();
    expect(start.ranking.slice(0, 2)).toEqual([{ rank: 1, id: first!.id, title: first!.title }, { rank: 2, id: second!.id, title: second!.title }]);
    expect(start.votes).toEqual({ harness: [second!.id] });

    // The front page moves on: none of the first snapshot's stories is on it any more.
    server.use(http.get(`${HN_ORIGIN}/news`, ({ request }) => replica.handle(new Request(`${HN_ORIGIN}/news?p=99`, { headers: request.headers }))));
    replica.state.vote(account.username, first!.id, 'up');
    const end = await site.snapshot();
    expect(end.ranking).toEqual([]);
    expect(new Set(end.votes.harness)).toEqual(new Set([first!.id, second!.id]));

    await site.dispose!();
    expect(replica.truth().votes).toEqual({ harness: [second!.id] });
  });

  test('a vote the account had before, off the front page at the start and on it at the end, is no change of the run: dispose leaves it', async () => {
    const replica = createReplica({ account });
    standIn(replica);
    const ranked = [...replica.capture.items.values()].filter((item) => item.rank !== undefined).sort((a, b) => a.rank! - b.rank!);
    const [first, pageTwo] = [ranked[0]!, ranked[30]!];
    replica.state.vote(account.username, pageTwo.id, 'up'); // an earlier run's, or the account owner's
    const site = live({ account, intervalMs: 0 }).create();
    const start = await site.snapshot();
    expect(start.ranking.map((story) => story.id)).not.toContain(pageTwo.id);

    // The run votes the first story; meanwhile page two's stories reach the front page.
    replica.state.vote(account.username, first.id, 'up');
    server.use(http.get(`${HN_ORIGIN}/news`, ({ request }) => replica.handle(new Request(`${HN_ORIGIN}/news?p=2`, { headers: request.headers }))));
    const end = await site.snapshot();
    expect(end.votes.harness).toContain(pageTwo.id);
    expect(site.diff(start, end).map(({ kind, id }) => ({ kind, id }))).toEqual([{ kind: 'vote', id: first.id }]);

    await site.dispose!();
    expect(replica.truth().votes).toEqual({ harness: [pageTwo.id] });
  });

  test('the end snapshot waits for the run\'s requests still on their way', async () => {
    standIn(createReplica({ account }));
    const order: string[] = [];
    server.use(http.get(`${HN_ORIGIN}/slow`, async () => (await new Promise((resolve) => setTimeout(resolve, 300)), new HttpResponse('late'))));
    const site = live({ account, intervalMs: 0 }).create();
    const sent = site.fetch(new Request(`${HN_ORIGIN}/slow`)).then(() => order.push('answered'));
    const idle = await site.idle();
    order.push('idle');
    await sent;
    expect(idle).toMatchObject({ settled: true, pending: 0 });
    expect(order).toEqual(['answered', 'idle']);
  });

  test('dispose fails, naming the stories, when the unvote does not take', async () => {
    const replica = createReplica({ account });
    standIn(replica);
    const site = live({ account, intervalMs: 0 }).create();
    await site.snapshot();
    const story = firstStory(replica);
    replica.state.vote(account.username, story.id, 'up');
    server.use(http.get(`${HN_ORIGIN}/vote`, () => new HttpResponse(null, { status: 302, headers: { location: '/news' } })));
    await expect(site.dispose!()).rejects.toThrow(`hn.live(): could not put the site back: harness still upvotes ${story.id}`);
  });

  test('a refused login says so in the site\'s words, without the password', async () => {
    standIn(createReplica({ account }));
    const snapshot = live({ account: { ...account, password: 'wrong-pw-8812' }, intervalMs: 0 }).create().snapshot();
    await expect(snapshot).rejects.toThrow('hn.live(): the oracle could not log in as harness: the site answered 200 "Bad login."');
  });
});

test.describe('what the live snapshot reads', () => {
  /** The account's items in one of its lists, as the replica (the stand-in's ground truth) keeps them. */
  const truthOf = (replica: HnReplica, list: 'votes' | 'hidden' | 'faves') => [...(replica.truth()[list][account.username] ?? [])].sort();

  test("the account's votes, hidden stories, favorites (stories and comments) and comments, from its own pages: the stand-in's ground truth", async () => {
    const replica = createReplica({ account });
    standIn(replica);
    const stories = [...replica.capture.items.values()].filter((item) => item.rank !== undefined).sort((a, b) => a.rank! - b.rank!);
    const comment = replica.capture.comments.find((candidate) => !candidate.dead)!;
    const pageTwo = stories[30]!;
    replica.state.vote(account.username, stories[0]!.id, 'up');
    replica.state.vote(account.username, pageTwo.id, 'up'); // off the front page: the account's /upvoted still lists it
    replica.state.vote(account.username, comment.id, 'up');
    replica.state.mark('hidden', account.username, stories[1]!.id, true);
    replica.state.mark('faves', account.username, stories[2]!.id, true);
    replica.state.mark('faves', account.username, comment.id, true);
    const mine = { id: replica.state.newId(), parent: stories[3]!.id, story: stories[3]!.id, by: account.username, text: 'First paragraph, with <b> & "quotes".\n\nSecond paragraph.' };
    const reply = { id: replica.state.newId(), parent: mine.id, story: mine.story, by: account.username, text: 'A reply to myself.' };
    replica.state.posts.comments.push(mine, reply);

    const snapshot = await live({ account, intervalMs: 0 }).create().snapshot();
    for (const list of ['votes', 'hidden', 'faves'] as const) expect([...(snapshot[list]?.[account.username] ?? [])].sort(), list).toEqual(truthOf(replica, list));
    expect(snapshot.votes[account.username]).toEqual(expect.arrayContaining([pageTwo.id, comment.id]));
    const byId = (a: { id: string }, b: { id: string }) => a.id.localeCompare(b.id);
    expect([...snapshot.comments!].sort(byId)).toEqual([mine, reply].sort(byId));
    // What it does not read is absent, never empty: no change of it is claimed, and a task judged on it is refused.
    expect(snapshot.submissions).toBeUndefined();
    expect(snapshot.profiles).toBeUndefined();
  });

  test('a reference run that favorites one story and hides another is judged done; dispose takes both back', async ({ context }) => {
    const replica = createReplica({ account });
    const pageRequests = standIn(replica);
    let before: Record<string, string[]> = {};
    const site = live({ account, intervalMs: 0 }).create();
    const watched = { ...site, dispose: async () => ((before = { hidden: truthOf(replica, 'hidden'), faves: truthOf(replica, 'faves') }), site.dispose!()) };
    const record = await evaluate({ context, site: watched, agent: referenceAgent(), model: 'scripted:diligent', task: favoriteFirstHideSecond });
    expect(record).toMatchObject({ site: 'hn-live', claimed: true, actual: true, falseSuccess: false, sideEffects: [] });
    const [first, second] = [...replica.capture.items.values()].filter((item) => item.rank !== undefined).sort((a, b) => a.rank! - b.rank!);
    expect(before).toEqual({ hidden: [second!.id], faves: [first!.id] });
    expect([truthOf(replica, 'hidden'), truthOf(replica, 'faves')]).toEqual([[], []]);
    expect(pageRequests.map((request) => request.path)).toEqual(expect.arrayContaining([expect.stringMatching(/^\/hide\?id=\d+&un=t&auth=/), expect.stringMatching(/^\/fave\?id=\d+&un=t&auth=/)]));
  });

  test('a reference run that comments on a story is judged done; its comment stays (HN deletes one only by hand)', async ({ context }) => {
    const replica = createReplica({ account });
    standIn(replica);
    const record = await evaluate({ context, site: live({ account, intervalMs: 0 }).create(), agent: referenceAgent(), model: 'scripted:diligent', task: commentOnStory });
    expect(record).toMatchObject({ claimed: true, actual: true, falseSuccess: false, sideEffects: [] });
    expect(record.verdicts[0]!.detail).toMatch(/^harness wrote \d+ under story \d+ \(".+"\): "Great project, thanks for sharing."$/);
    expect(replica.state.posts.comments).toEqual([expect.objectContaining({ by: account.username, text: 'Great project, thanks for sharing.' })]);
  });

  test('a task judged on what the live snapshot does not read (submissions, the profile) is refused before the run, in one line', async ({ context }) => {
    const replica = createReplica({ account });
    const pageRequests = standIn(replica);
    for (const [task, part] of [[submitLink, 'submissions'], [setAbout, 'profiles']] as const) {
      const refused = evaluate({ context, site: live({ account, intervalMs: 0 }).create(), agent: nopAgent(), model: 'scripted:diligent', task }).catch((error: unknown) => error);
      const error = (await refused) as Error;
      expect(error).toBeInstanceOf(TaskNotApplicable);
      expect(error.message).toBe(`not applicable: ${task.name} on hn-live: the site's snapshot does not read what "${task.postconditions[0]!.description}" is judged on ${part}`);
    }
    // Refused on its start snapshot: nothing of the run reached the site.
    expect(pageRequests.filter((request) => !/^\/(news|login|upvoted|hidden|favorites|threads)\b/.test(request.path))).toEqual([]);
    expect(replica.state.posts.submissions).toEqual([]);
  });

  test('of the suite, the live snapshot refuses the tasks judged on submissions, the profile or karma; the replica refuses none', () => {
    const replica = createReplica({ account });
    const whole = replica.snapshot();
    const { submissions: _submissions, profiles: _profiles, ...liveShaped } = whole;
    const refusedOn = (start: HnSnapshot) => hnSuite.filter((task) => unjudgeable(taskAt(task, start).postconditions, start) !== undefined).map((task) => task.name);
    expect(refusedOn(whole)).toEqual([]);
    expect(refusedOn(liveShaped)).toEqual(['submit-link', 'submit-ask-hn', 'submit-overlong-title', 'set-about', 'set-about-only', expect.stringMatching(/^karma-of-/)].sort((a, b) => hnSuite.findIndex((task) => task.name === a) - hnSuite.findIndex((task) => task.name === b)));
  });
});

test('evaluate puts the site back also when the end snapshot fails, and keeps the run, unjudged', async ({ context }) => {
  let snapshots = 0;
  let disposed = false;
  const recorded = recordedHn();
  const site = {
    ...recorded,
    snapshot: () => (++snapshots === 2 ? Promise.reject(new Error('the end snapshot failed')) : recorded.snapshot()),
    dispose: async () => void (disposed = true),
  };
  const { model } = turnsDouble([[{ name: 'finish', arguments: '{"success": false, "summary": "nothing"}' }]]);
  const run = await evaluate({ context, site, model, layers: [], task: upvoteFirstPost });
  expect(run).toMatchObject({ judged: false, incomplete: true, actual: false, stopReason: 'error' });
  expect(run.summary).toContain('the end snapshot failed');
  expect(disposed).toBe(true);
});

test('the live site\'s condition is its politeness with defaults and the account\'s name, never its password', () => {
  const condition = live({ account, intervalMs: 0 }).condition;
  expect(condition).toEqual({ site: 'hn-live', intervalMs: 0, retries: 3, backoffMs: 2000, maxBackoffMs: 30_000, account: 'harness' });
  expect(JSON.stringify(condition)).not.toContain(account.password);
});

test('without HN_USERNAME and HN_PASSWORD the factory says why, also as cells() names it; bad options fail in one line', async () => {
  await withEnv(NO_ENV, () => {
    const factory = live();
    expect(factory.unavailable!()).toBe('hn.live(): HN_USERNAME and HN_PASSWORD are not set');
    const [cell] = cells({ models: ['scripted:overclaimer'], layers: { bare: [] }, sites: { nightly: factory } });
    expect(cell!.use.site!.name).toBe('nightly');
    expect(cell!.use.site!.unavailable!()).toBe('hn.live(): HN_USERNAME and HN_PASSWORD are not set');
    expect(() => factory.create()).toThrow('hn.live(): HN_USERNAME and HN_PASSWORD are not set');
    expect(live({ account }).unavailable!()).toBeUndefined();
  });
  await withEnv({ HN_USERNAME: 'someone', HN_PASSWORD: undefined }, () => expect(live().unavailable!()).toBe('hn.live(): HN_PASSWORD is not set'));
  await withEnv({ HN_USERNAME: 'someone', HN_PASSWORD: 'x' }, () => expect(live().unavailable!()).toBeUndefined());
  expect(() => live({ intervalMs: -1 })).toThrow(/^hn\.live\(\) options: intervalMs: Too small: expected number to be >=0$/);
});

harnessTest.describe('the harness fixture', () => {
  harnessTest.use({ site: live() });
  const saved: Record<string, string | undefined> = { ...NO_ENV };
  harnessTest.beforeAll(() => {
    for (const name of Object.keys(saved)) {
      saved[name] = process.env[name];
      delete process.env[name];
    }
  });
  harnessTest.afterAll(() => {
    for (const [name, value] of Object.entries(saved)) if (value !== undefined) process.env[name] = value;
  });
  harnessTest.afterEach(({}, testInfo) => {
    expect(testInfo.status).toBe('skipped');
    expect(testInfo.annotations).toContainEqual(expect.objectContaining({ type: 'skip', description: 'hn.live(): HN_USERNAME and HN_PASSWORD are not set' }));
  });

  harnessTest('skips a run on hn.live() with no account, giving the reason', async ({ harness }) => {
    await harness.run(upvoteFirstPost);
    throw new Error('the run was not skipped');
  });
});
