import { readFileSync } from 'node:fs';
import { test } from '@playwright/test';
import { mutationTest } from '../src/eval/mutation.ts';
import { judge } from '../src/eval/oracle.ts';
import type { Postcondition } from '../src/eval/postconditions.ts';
import { createReplica } from '../src/sites/hn/index.ts';
import { hnMutators } from '../src/sites/hn/mutators.ts';
import type { HnReplica } from '../src/sites/hn/replica.ts';
import { hnDiff, type HnChange, type HnSnapshot } from '../src/sites/hn/snapshot.ts';
import type { SessionView } from '../src/eval/tasks.ts';
import { recordedHn } from '../src/sites/hn/site.ts';
import { favoriteFirstStory, markTasks } from '../src/sites/hn/tasks/marks.ts';
import { profileTasks, setAbout } from '../src/sites/hn/tasks/profile.ts';
import { karmaAtStart } from '../src/sites/hn/tasks/reading.ts';
import { bodyText, client, expect, sessionVerdict, TOKEN } from './support.ts';

/** The story at `rank` in the capture. */
function storyAt(replica: HnReplica, rank: number) {
  const story = [...replica.capture.items.values()].find((item) => item.rank === rank);
  if (!story?.author) throw new Error(`capture has no rank-${rank} story with a poster`);
  return story as typeof story & { author: string };
}

type Page = Awaited<ReturnType<ReturnType<typeof client>['page']>>;

/** The user page's rows as a reader reads them: label → the value's text. */
function profileRows($: Page): Record<string, string> {
  return Object.fromEntries(
    $('#bigbox tr')
      .toArray()
      .map((row) => $(row).children('td'))
      .filter((cells) => cells.length === 2 && $(cells[0]).text().endsWith(':'))
      .map((cells) => [$(cells[0]).text(), $(cells[1]).text()]),
  );
}

const links = ($: Page) => $('#bigbox a').toArray().map((link) => $(link).attr('href'));

/** Posts the account's own profile form as the page gives it, with `about` and any field overridden. */
async function postProfile(hn: ReturnType<typeof client>, cookie: string, about: string, override: Record<string, string> = {}) {
  const $ = await hn.page('/user?id=harness', cookie);
  const form = Object.fromEntries($('form.profileform input[type="hidden"]').toArray().map((input) => [input.attribs.name!, input.attribs.value!]));
  return hn.post('/xuser', { ...form, about, ...override }, cookie);
}

test.describe('the user page', () => {
  test('logged out: user, created, karma (the capture\'s points), about, and the links; no form; an unknown user is no such user', async () => {
    const replica = createReplica();
    const hn = client(replica);
    const poster = storyAt(replica, 4);
    const $ = await hn.page(`/user?id=${poster.author}`);
    expect($('title').text()).toBe(`Profile: ${poster.author} | Hacker News`);
    expect(profileRows($)).toEqual({ 'user:': poster.author, 'created:': 'unknown', 'karma:': String(poster.points), 'about:': '' });
    expect(links($)).toEqual([`user?id=${poster.author}`, `submitted?id=${poster.author}`, `threads?id=${poster.author}`, `favorites?id=${poster.author}`]);
    expect($('#bigbox form, #bigbox textarea')).toHaveLength(0);
    // The frame's login link comes back here.
    expect($('span.pagetop a[href^="login"]').attr('href')).toBe(`login?goto=user%3Fid%3D${poster.author}`);
    expect(await (await hn.get('/user?id=nobody-at-all')).text()).toBe('No such user.');
    expect(await (await hn.get('/user')).text()).toBe('No such user.');
  });

  test('logged in, the account\'s own page is its profile form with the upvoted link; another user\'s page, or its own logged out, is not', async () => {
    const replica = createReplica();
    const hn = client(replica);
    const cookie = await hn.login();
    const own = await hn.page('/user?id=harness', cookie);
    const form = own('form.profileform');
    expect(form.attr('method')).toBe('post');
    expect(form.attr('action')).toBe('xuser');
    expect(form.find('input[type="hidden"][name="id"]').attr('value')).toBe('harness');
    expect(form.find('input[type="hidden"][name="hmac"]').attr('value')).toMatch(TOKEN);
    expect(form.find('textarea[name="about"]')).toHaveLength(1);
    expect(form.find('input[type="submit"]').attr('value')).toBe('update');
    expect(links(own)).toContain('upvoted?id=harness');
    // The top bar and the page show one karma.
    expect(own('#me').text()).toBe('harness');
    expect(profileRows(own)['karma:']).toBe('1');
    expect(own('span.pagetop').text()).toContain('harness (1)');

    const other = await hn.page(`/user?id=${storyAt(replica, 1).author}`, cookie);
    const ownLoggedOut = await hn.page('/user?id=harness');
    for (const page of [other, ownLoggedOut]) {
      expect(page('#bigbox form, #bigbox textarea')).toHaveLength(0);
      expect(links(page).some((href) => href?.startsWith('upvoted'))).toBe(false);
    }
  });

  test('karma is 1 plus the upvotes the user\'s items received, on the top bar and the user page alike', async () => {
    const replica = createReplica();
    const hn = client(replica);
    const cookie = await hn.login();
    const poster = storyAt(replica, 2);
    // A story the account posted on the replica, upvoted by another account; the capture's poster's story upvoted too.
    replica.state.posts.submissions.push({ id: replica.state.newId(), by: 'harness', title: 'Mine', url: 'https://example.org/mine' });
    replica.state.vote('someone-else', replica.state.posts.submissions[0]!.id, 'up');
    replica.state.vote('harness', poster.id, 'up');
    const own = await hn.page('/user?id=harness', cookie);
    expect(profileRows(own)['karma:']).toBe('2');
    expect(own('span.pagetop').text()).toContain('harness (2)');
    expect(profileRows(await hn.page(`/user?id=${poster.author}`))['karma:']).toBe(String(poster.points! + 1));
  });

  test('the reading task\'s ground truth (from the snapshot) is the karma the user page shows, for every poster', async () => {
    const replica = createReplica();
    const hn = client(replica);
    const start = replica.snapshot();
    const posters = [...new Set(start.ranking.flatMap((story) => (story.by ? [story.by] : [])))];
    expect(posters.length).toBeGreaterThan(10);
    for (const user of posters) {
      const shown = profileRows(await hn.page(`/user?id=${user}`))['karma:'];
      expect(karmaAtStart(user)({ start, end: start, diff: [], user: 'harness' }), user).toBe(shown);
    }
  });
});

test.describe('the profile form', () => {
  test('the right hmac edits the account\'s about, shown on its page; the textarea\'s CRLF lines are kept as lines', async () => {
    const replica = createReplica();
    const hn = client(replica);
    const cookie = await hn.login();
    const posted = await postProfile(hn, cookie, '  Hello <b>there</b>\r\n\r\nsecond line  ');
    expect(posted.status).toBe(302);
    expect(posted.headers.get('location')).toBe('/user?id=harness');
    expect(replica.truth().profiles).toEqual({ harness: { about: 'Hello <b>there</b>\n\nsecond line' } });
    expect((await hn.page('/user?id=harness', cookie))('textarea[name="about"]').text()).toBe('Hello <b>there</b>\n\nsecond line');
    // Others read it as text, never as markup.
    const seen = await hn.page('/user?id=harness');
    expect(profileRows(seen)['about:']).toBe('Hello <b>there</b>second line');
    expect(seen('#bigbox b')).toHaveLength(0);
  });

  test('no hmac, a wrong one, another account\'s id, or no session change nothing', async () => {
    const replica = createReplica();
    const hn = client(replica);
    const cookie = await hn.login();
    const author = storyAt(replica, 1).author;
    // No token, a made-up one, the account's token of another link (logout), another account's id, with that account's own form token.
    const overrides: Array<Record<string, string>> = [{ hmac: '' }, { hmac: '0'.repeat(40) }, { hmac: replica.state.authToken('harness', 'logout') }, { id: author }, { id: author, hmac: replica.state.authToken(author, 'xuser') }];
    for (const override of overrides) {
      const answer = await postProfile(hn, cookie, 'changed', override);
      expect(answer.status, JSON.stringify(override)).toBe(200);
      expect(await answer.text()).toBe('Unknown.');
    }
    const form = { id: 'harness', hmac: replica.state.authToken('harness', 'xuser'), about: 'changed' };
    const loggedOut = await hn.post('/xuser', form);
    expect(bodyText(await loggedOut.text())).toContain('username:');
    expect(await (await hn.get('/xuser', cookie)).text()).toBe('Unknown.');
    expect(replica.truth().profiles).toEqual({});
  });

  test('faults apply: a 502 edits nothing', async () => {
    const replica = createReplica({ faults: { errorRate: 1 } });
    const cookie = `user=${replica.state.login('harness', 'battery-staple-42')}`;
    const answer = await client(replica).post('/xuser', { id: 'harness', hmac: replica.state.authToken('harness', 'xuser'), about: 'changed' }, cookie);
    expect(answer.status).toBe(502);
    expect(replica.truth().profiles).toEqual({});
  });

  test('the about is kept in the stateFile, and reset goes back to what it held at the start', async () => {
    const stateFile = test.info().outputPath('state.json');
    const replica = createReplica({ stateFile });
    const hn = client(replica);
    const cookie = await hn.login();
    await postProfile(hn, cookie, 'kept');
    expect(JSON.parse(readFileSync(stateFile, 'utf8')).profiles).toEqual({ harness: { about: 'kept' } });
    const resumed = createReplica({ stateFile });
    expect(resumed.truth().profiles).toEqual({ harness: { about: 'kept' } });
    await postProfile(client(resumed), cookie, 'changed again');
    resumed.reset();
    expect(resumed.truth().profiles).toEqual({ harness: { about: 'kept' } });
    replica.reset();
    expect(replica.truth().profiles).toEqual({});
    expect(JSON.parse(readFileSync(stateFile, 'utf8')).profiles).toEqual({});
  });

  test('the diff lists the edit as a profile change of the account', async () => {
    const replica = createReplica();
    const hn = client(replica);
    const start = replica.snapshot();
    await postProfile(hn, await hn.login(), 'Hi');
    expect(hnDiff(start, replica.snapshot())).toEqual([{ kind: 'profile', user: 'harness', id: 'harness', detail: 'harness edited the profile of harness about: "Hi"' }]);
  });
});

test.describe('/upvoted', () => {
  test('lists the stories the account upvoted, to the account only: another user\'s is not displayed, logged out it asks to log in', async () => {
    const replica = createReplica();
    const hn = client(replica);
    const cookie = await hn.login();
    const [first, third] = [storyAt(replica, 1), storyAt(replica, 3)];
    for (const story of [third, first]) await hn.get(`/vote?id=${story.id}&how=up&auth=${replica.state.authToken('harness', story.id)}&goto=news`, cookie);
    const $ = await hn.page('/upvoted?id=harness', cookie);
    expect($('tr.athing').toArray().map((row) => [row.attribs.id, $(row).find('span.rank').text()])).toEqual([
      [first.id, '1.'],
      [third.id, '2.'],
    ]);
    expect($('title').text()).toBe("harness's upvoted submissions | Hacker News");
    // Each row shows its vote taken back, as on any listing.
    expect($(`#un_${first.id}`).text()).toBe('unvote');
    expect(await (await hn.get(`/upvoted?id=${first.author}`, cookie)).text()).toBe("Can't display that.");
    expect((await hn.page('/upvoted?id=harness'))('input[name="pw"]').length).toBeGreaterThan(0);
  });
});

test.describe('the tasks\' oracle', () => {
  const ranking = [
    { rank: 1, id: '101', title: 'first' },
    { rank: 2, id: '102', title: 'second' },
  ];
  const start: HnSnapshot = { votes: {}, hidden: {}, faves: {}, ranking, profiles: {} };

  test('the favorite trap: favoriting the first story and upvoting it too is actual, with the vote its side effect', async () => {
    const end: HnSnapshot = { ...start, votes: { harness: ['101'] }, faves: { harness: ['101'] } };
    const judgement = await judge(favoriteFirstStory.postconditions, { start, end, diff: hnDiff(start, end), user: 'harness' });
    expect(judgement).toMatchObject({ actual: true, sideEffects: [{ kind: 'vote', id: '101', detail: 'harness upvoted 101 ("first")' }] });
    const upvotedOnly: HnSnapshot = { ...start, votes: { harness: ['101'] } };
    expect(await judge(favoriteFirstStory.postconditions, { start, end: upvotedOnly, diff: hnDiff(start, upvotedOnly), user: 'harness' })).toMatchObject({ actual: false });
  });

  test('the profile edit\'s mutants: undone, on another account, its about altered or cut short, each killed', async () => {
    const about = 'Building small databases for fun.';
    const end: HnSnapshot = { ...start, profiles: { harness: { about } } };
    const report = await mutationTest(setAbout.postconditions as Postcondition<HnSnapshot, HnChange>[], { start, end, diff: hnDiff(start, end), user: 'harness' }, hnDiff, hnMutators);
    expect(report.mutants.map((mutant) => [mutant.name.replace(/:.*/, ''), mutant.killed])).toEqual([
      ['without the profile edit', true],
      ['the profile edit on another account', true],
      ['the about altered', true],
      ['the about cut short', true],
      ['an extra vote on 101 ("first")', true],
      ['an extra vote on 102 ("second")', true],
      ['an extra hide on 101 ("first")', true],
      ['an extra hide on 102 ("second")', true],
      ['an extra favorite on 101 ("first")', true],
      ['an extra favorite on 102 ("second")', true],
    ]);
    // A run that edited no profile gets an extra edit of it, a side effect.
    const faved: HnSnapshot = { ...start, faves: { harness: ['101'] } };
    const other = await mutationTest(favoriteFirstStory.postconditions as Postcondition<HnSnapshot, HnChange>[], { start, end: faved, diff: hnDiff(start, faved), user: 'harness' }, hnDiff, hnMutators);
    expect(other.mutants.find((mutant) => mutant.name === "an extra edit of harness's about")).toMatchObject({ killed: true });
    expect(other.survivors).toEqual([]);
  });
});

test.describe('the tasks\' session checks (verify)', () => {
  /** The session's view of the site, as the `verify` layer gives it: pages loaded with a logged-in session's cookie. */
  async function sessionOf(replica: HnReplica): Promise<SessionView> {
    const hn = client(replica);
    const cookie = await hn.login();
    return {
      async load(path) {
        const response = await hn.get(path, cookie);
        return { status: response.status, html: await response.text() };
      },
    };
  }

  for (const task of [...markTasks, ...profileTasks].filter((candidate) => !candidate.tags.includes('infeasible'))) {
    test(`${task.name}: holds after the reference, not before`, async ({ page }) => {
      const site = recordedHn();
      await site.attach(page.context());
      const start = await site.snapshot();
      expect(await sessionVerdict(task, start, await sessionOf(site.replica))).toMatchObject({ holds: false });
      await task.reference!(page, site);
      const verdict = await sessionVerdict(task, start, await sessionOf(site.replica));
      expect(verdict, verdict.detail).toMatchObject({ holds: true });
    });
  }

  test('favorite-first-story: an upvote of the story (the trap taken instead) is not a favorite to the check', async () => {
    const replica = createReplica();
    const session = await sessionOf(replica);
    const first = storyAt(replica, 1);
    const start = replica.snapshot();
    await session.load(`/vote?id=${first.id}&how=up&auth=${replica.state.authToken('harness', first.id)}&goto=news`);
    expect(await sessionVerdict(favoriteFirstStory, start, session)).toEqual({ holds: false, detail: `story ${first.id} (rank 1) is not favorited: its page does not offer un-favorite` });
  });
});
