import { readFileSync } from 'node:fs';
import { test } from '@playwright/test';
import type { CheerioAPI } from 'cheerio';
import type { SessionView } from '../src/eval/tasks.ts';
import { createReplica } from '../src/sites/hn/index.ts';
import { recordedHn } from '../src/sites/hn/site.ts';
import { listingTasks } from '../src/sites/hn/tasks/listings.ts';
import { voteTasks } from '../src/sites/hn/tasks/votes.ts';
import { submissionTasks, submittedUnlessPosted } from '../src/sites/hn/tasks/submissions.ts';
import { mutationTest } from '../src/eval/mutation.ts';
import { judge } from '../src/eval/oracle.ts';
import type { Postcondition } from '../src/eval/postconditions.ts';
import { hnMutators } from '../src/sites/hn/mutators.ts';
import type { HnChange, HnSnapshot } from '../src/sites/hn/snapshot.ts';
import { markupYears } from '../src/sites/hn/options.ts';
import type { HnReplica } from '../src/sites/hn/replica.ts';
import { hnDiff } from '../src/sites/hn/snapshot.ts';
import { bodyText, client, expect, sessionVerdict, TOKEN } from './support.ts';

/**
 * The replica's derived listings (`/newest`, `/ask`, `/show`, `/jobs`, `/from`, `/submitted`),
 * paging (`More`), and submissions (`/submit`, `POST /r`), as HN answers them. Expected rows come
 * from the capture's items (what the fixture pages list), never from the listing code.
 */

type Hn = ReturnType<typeof client>;

/** The stories of the capture, in front-page rank order. */
function stories(replica: HnReplica) {
  return [...replica.capture.items.values()].filter((item) => item.rank !== undefined).sort((a, b) => a.rank! - b.rank!);
}

/** Each story row a page shows: id, the rank it shows, and its title link. */
function rowsOf($: CheerioAPI) {
  return $('tr.athing')
    .toArray()
    .map((row) => {
      const link = $(row).children('td').last().find('a').first();
      return { id: row.attribs.id!, rank: $(row).find('span.rank').text(), title: link.text(), href: link.attr('href') };
    });
}

const idsOf = ($: CheerioAPI) => rowsOf($).map((row) => row.id);
const byIdDescending = (a: { id: string }, b: { id: string }) => Number(b.id) - Number(a.id);

/** The submit form's fields as the session sees them. */
async function submitForm(hn: Hn, cookie: string): Promise<{ fnid: string; fnop: string }> {
  const form = await hn.page('/submit', cookie);
  return { fnid: form('form[action="r"] input[name="fnid"]').val() as string, fnop: form('form[action="r"] input[name="fnop"]').val() as string };
}

async function signedIn(replica: HnReplica) {
  const hn = client(replica);
  const cookie = await hn.login();
  return { hn, cookie, form: await submitForm(hn, cookie) };
}

test.describe('listings', () => {
  test('/newest lists every story newest first (HN ids grow), 30 a page; page 1 has More to p=2, which numbers from 31 and has no More', async () => {
    const replica = createReplica();
    const hn = client(replica);
    const newest = [...stories(replica)].sort(byIdDescending);
    expect(newest).toHaveLength(60);
    const first = await hn.page('/newest');
    expect(idsOf(first)).toEqual(newest.slice(0, 30).map((story) => story.id));
    expect(rowsOf(first)[0]!.rank).toBe('1.');
    expect(first('a.morelink').attr('href')).toBe('newest?p=2');
    expect(first('title').text()).toBe('New Links | Hacker News');
    const second = await hn.page('/newest?p=2');
    expect(idsOf(second)).toEqual(newest.slice(30).map((story) => story.id));
    expect(rowsOf(second)[0]!.rank).toBe('31.');
    expect(second('a.morelink')).toHaveLength(0);
    expect(idsOf(await hn.page('/newest?p=3'))).toEqual([]);
  });

  test('the front pages page as HN does: /news has More to p=2; the last captured page, p=2, has none (p=3 is empty)', async () => {
    const replica = createReplica();
    const hn = client(replica);
    expect((await hn.page('/news'))('a.morelink').attr('href')).toMatch(/^(news)?\?p=2$/);
    const second = await hn.page('/news?p=2');
    expect(idsOf(second)).toHaveLength(30);
    expect(second('a.morelink')).toHaveLength(0);
    expect(idsOf(await hn.page('/news?p=3'))).toEqual([]);
  });

  test('/ask and /show list the titles starting "Ask HN" and "Show HN" in rank order, numbered from 1', async () => {
    const replica = createReplica();
    const hn = client(replica);
    for (const [path, prefix] of [['/ask', 'Ask HN'], ['/show', 'Show HN']] as const) {
      const expected = stories(replica).filter((story) => story.title!.startsWith(prefix));
      expect(expected.length, prefix).toBeGreaterThan(1);
      const rows = rowsOf(await hn.page(path));
      expect(rows.map((row) => row.id)).toEqual(expected.map((story) => story.id));
      expect(rows.map((row) => row.rank)).toEqual(expected.map((_, index) => `${index + 1}.`));
    }
  });

  test('/jobs lists the job ads, with no vote arrow and no score; a vote on a job is refused and changes nothing, logged in or through the login wall', async () => {
    const replica = createReplica();
    const hn = client(replica);
    const jobs = stories(replica).filter((story) => story.job);
    expect(jobs.map((job) => job.rank)).toEqual([9, 40]);
    const cookie = await hn.login();
    const page = await hn.page('/jobs', cookie);
    expect(idsOf(page)).toEqual(jobs.map((job) => job.id));
    expect(page('a[id^="up_"]')).toHaveLength(0);
    expect(page('span.score')).toHaveLength(0);
    const job = jobs[0]!;
    const vote = await hn.get(`/vote?id=${job.id}&how=up&auth=${replica.state.authToken('harness', job.id)}&goto=news`, cookie);
    expect(await vote.text()).toBe("Can't make that vote.");
    // Logging in from the vote's login wall casts the vote waiting in goto: not on a job.
    await hn.login(`vote?id=${job.id}&how=up&goto=news`);
    expect(replica.truth().votes).toEqual({});
  });

  test('/from?site= lists the stories shown with exactly that site, newest first; /submitted?id= a user\'s stories; an unknown user is "No such user."', async () => {
    const replica = createReplica();
    const hn = client(replica);
    const site = stories(replica).find((story) => story.rank === 1)!.site!;
    const fromSite = stories(replica).filter((story) => story.site === site).sort(byIdDescending);
    expect(idsOf(await hn.page(`/from?site=${site}`))).toEqual(fromSite.map((story) => story.id));
    // The 2025 capture shows GitHub stories as github.com/USER: github.com alone lists none of them.
    expect(stories(replica).filter((story) => story.site?.startsWith('github.com/')).length).toBeGreaterThan(1);
    expect(idsOf(await hn.page('/from?site=github.com'))).toEqual([]);

    const third = stories(replica).find((story) => story.rank === 3)!;
    const byPoster = stories(replica).filter((story) => story.author === third.author).sort(byIdDescending);
    const submitted = await hn.page(`/submitted?id=${third.author}`);
    expect(idsOf(submitted)).toEqual(byPoster.map((story) => story.id));
    expect(submitted('title').text()).toBe(`${third.author}'s submissions | Hacker News`);
    expect(idsOf(await hn.page('/submitted?id=harness'))).toEqual([]);
    expect(await (await hn.get('/submitted?id=nobody-here')).text()).toBe('No such user.');
  });

  test('listings keep the logged-in slots (vote and hide links with tokens) and leave out what the user hid', async () => {
    const replica = createReplica();
    const hn = client(replica);
    const cookie = await hn.login();
    const show = stories(replica).find((story) => story.title!.startsWith('Show HN'))!;
    const page = await hn.page('/show', cookie);
    const vote = new URLSearchParams(page(`#up_${show.id}`).attr('href')!.replace(/^vote\?/, ''));
    expect(vote.get('auth')).toMatch(TOKEN);
    expect(vote.get('goto')).toBe('show');
    const hide = page(`a[href^="hide?id=${show.id}&"]`).attr('href')!;
    expect((await hn.get(`/${hide}`, cookie)).headers.get('location')).toBe('/show');
    expect(idsOf(await hn.page('/show', cookie))).not.toContain(show.id);
    expect(idsOf(await hn.page('/newest', cookie))).not.toContain(show.id);
    // Hidden from this user only.
    expect(idsOf(await hn.page('/show'))).toContain(show.id);
  });
});

test.describe('submissions', () => {
  test('/submit: logged out, the login page whose goto is submit; logged in, the form with a session-bound fnid and fnop=submit-page', async () => {
    const replica = createReplica();
    const hn = client(replica);
    const loggedOut = await hn.page('/submit');
    expect(loggedOut('input[name="pw"]').length).toBeGreaterThan(0);
    expect(loggedOut('input[name="goto"]').first().val()).toBe('submit');
    const cookie = await hn.login();
    const form = await hn.page('/submit', cookie);
    expect(form('a#me').text()).toBe('harness');
    expect(form('form[action="r"][method="post"] input[name="title"], form[action="r"] input[name="url"], form[action="r"] textarea[name="text"]')).toHaveLength(3);
    const { fnid, fnop } = await submitForm(hn, cookie);
    expect(fnid).toMatch(TOKEN);
    expect(fnop).toBe('submit-page');
    // Another session has another token.
    const other = await hn.login();
    expect((await submitForm(hn, other)).fnid).not.toBe(fnid);
  });

  test('POST /r with a missing or wrong fnid (or another session\'s, or no session, or a wrong fnop) is "Unknown." and submits nothing', async () => {
    const replica = createReplica();
    const { hn, cookie, form } = await signedIn(replica);
    const other = await hn.login();
    const story = { title: 'A fine story', url: 'https://example.org/fine' };
    const attempts: Array<[Record<string, string>, string | undefined]> = [
      [{ ...story, fnop: form.fnop }, cookie],
      [{ ...story, fnid: '', fnop: form.fnop }, cookie],
      [{ ...story, fnid: '0'.repeat(40), fnop: form.fnop }, cookie],
      [{ ...story, fnid: form.fnid, fnop: form.fnop }, other],
      [{ ...story, fnid: form.fnid, fnop: form.fnop }, undefined],
      [{ ...story, fnid: form.fnid, fnop: 'vote' }, cookie],
    ];
    for (const [fields, session] of attempts) {
      const answer = await hn.post('/r', fields, session);
      expect(await answer.text(), JSON.stringify(fields)).toBe('Unknown.');
    }
    expect(replica.truth().submissions).toEqual([]);
    // The session's own form is taken.
    expect((await hn.post('/r', { ...story, ...form }, cookie)).headers.get('location')).toBe('/newest');
    expect(replica.truth().submissions).toMatchObject([story]);
  });

  test('an empty or too long title, or a url that is not a web link, gives the form again with the reason and the fields kept; nothing is submitted', async () => {
    const replica = createReplica();
    const { hn, cookie, form } = await signedIn(replica);
    const cases = [
      [{ title: '   ', url: 'https://example.org/x' }, 'Please give the story a title.'],
      [{ title: 'x'.repeat(81), url: 'https://example.org/x' }, 'Please make title < 80 characters.'],
      [{ title: 'Fine', url: 'javascript:alert(1)' }, "That's not a valid url."],
    ] as const;
    for (const [fields, reason] of cases) {
      const answer = await hn.post('/r', { ...form, ...fields }, cookie);
      expect(answer.status).toBe(200);
      const page = (await import('cheerio')).load(await answer.text());
      expect(page('body').text()).toContain(reason);
      expect(page('input[name="url"]').val()).toBe(fields.url);
      expect(page('input[name="fnid"]').val()).toBe(form.fnid);
    }
    expect(replica.truth().submissions).toEqual([]);
  });

  test('a link already on the site goes to that story and submits nothing: scheme, host case, www. and a trailing slash do not count; the path\'s case and the query do', async () => {
    const replica = createReplica();
    const { hn, cookie, form } = await signedIn(replica);
    const third = stories(replica).find((story) => story.rank === 3)!;
    expect(third.url).toBe('https://github.com/tamsinreyes/driftwood');
    for (const url of ['https://github.com/tamsinreyes/driftwood', 'http://GitHub.com/tamsinreyes/driftwood/', 'https://www.github.com/tamsinreyes/driftwood#readme']) {
      const answer = await hn.post('/r', { ...form, title: 'Driftwood again', url }, cookie);
      expect([answer.status, answer.headers.get('location')], url).toEqual([302, `/item?id=${third.id}`]);
    }
    expect(replica.truth().submissions).toEqual([]);
    for (const url of ['https://github.com/tamsinreyes/Driftwood', 'https://github.com/tamsinreyes/driftwood?tab=readme']) {
      expect((await hn.post('/r', { ...form, title: 'Not the same link', url }, cookie)).headers.get('location'), url).toBe('/newest');
    }
    // An earlier submission counts as well.
    const first = replica.truth().submissions[0]!;
    expect((await hn.post('/r', { ...form, title: 'Again', url: first.url! }, cookie)).headers.get('location')).toBe(`/item?id=${first.id}`);
    expect(replica.truth().submissions).toHaveLength(2);
  });

  test('a submitted story: kept with a new id, first on /newest and on /submitted, with an item page; it takes votes (1 point, then 2) and hides; the diff lists it', async () => {
    const replica = createReplica();
    const { hn, cookie, form } = await signedIn(replica);
    const start = replica.snapshot();
    const answer = await hn.post('/r', { ...form, title: '  Show HN: A tiny thing  ', url: 'https://example.org/tiny', text: '' }, cookie);
    expect([answer.status, answer.headers.get('location')]).toEqual([302, '/newest']);
    const [story] = replica.truth().submissions;
    const newestCaptured = Math.max(...stories(replica).map((item) => Number(item.id)));
    expect(story).toEqual({ id: expect.any(String), by: 'harness', title: 'Show HN: A tiny thing', url: 'https://example.org/tiny' });
    expect(Number(story!.id)).toBeGreaterThan(newestCaptured);

    const newest = await hn.page('/newest', cookie);
    expect(rowsOf(newest)[0]).toEqual({ id: story!.id, rank: '1.', title: 'Show HN: A tiny thing', href: 'https://example.org/tiny' });
    expect(newest(`#score_${story!.id}`).text()).toBe('1 point');
    expect(newest(`tr.athing[id="${story!.id}"] + tr a.hnuser`).text()).toBe('harness');
    expect(newest(`tr.athing[id="${story!.id}"] .sitestr`).text()).toBe('example.org');
    expect(idsOf(await hn.page('/newest?p=2'))).toHaveLength(30);
    expect((await hn.page('/newest'))('a.morelink').attr('href')).toBe('newest?p=2');
    expect(idsOf(await hn.page('/submitted?id=harness'))).toEqual([story!.id]);
    expect(idsOf(await hn.page('/from?site=example.org'))).toEqual([story!.id]);
    expect(idsOf(await hn.page('/show')).at(-1)).toBe(story!.id);

    const item = await hn.page(`/item?id=${story!.id}`, cookie);
    expect(item('table.fatitem tr.athing').attr('id')).toBe(story!.id);
    expect(item('title').text()).toBe('Show HN: A tiny thing | Hacker News');
    const up = item(`#up_${story!.id}`).attr('href')!;
    expect((await hn.get(`/${up}`, cookie)).status).toBe(302);
    expect(replica.truth().votes).toEqual({ harness: [story!.id] });
    expect((await hn.page(`/item?id=${story!.id}`, cookie))(`#score_${story!.id}`).text()).toBe('2 points');
    const hide = newest(`a[href^="hide?id=${story!.id}&"]`).attr('href')!;
    await hn.get(`/${hide}`, cookie);
    expect(idsOf(await hn.page('/newest', cookie))).not.toContain(story!.id);

    expect(hnDiff(start, replica.snapshot()).map((change) => [change.kind, change.user, change.id])).toEqual([
      ['vote', 'harness', story!.id],
      ['hide', 'harness', story!.id],
      ['submission', 'harness', story!.id],
    ]);
    // A text post (no url) links to its own page and shows no site.
    await hn.post('/r', { ...form, title: 'Ask HN: Anyone?', text: 'Just asking.' }, cookie);
    const ask = replica.truth().submissions[1]!;
    expect(ask).toMatchObject({ title: 'Ask HN: Anyone?', text: 'Just asking.' });
    expect(ask.url).toBeUndefined();
    const asked = await hn.page('/newest', cookie);
    expect(rowsOf(asked)[0]).toMatchObject({ id: ask.id, href: `item?id=${ask.id}` });
    expect(asked(`tr.athing[id="${ask.id}"] .sitestr`)).toHaveLength(0);
    expect((await hn.page(`/item?id=${ask.id}`))('.fatitem .toptext').text()).toBe('Just asking.');
  });

  test('submissions are kept in the stateFile, and reset goes back to what it held at the start; ids keep growing', async () => {
    const stateFile = test.info().outputPath('state.json');
    const replica = createReplica({ stateFile });
    const { hn, cookie, form } = await signedIn(replica);
    await hn.post('/r', { ...form, title: 'Kept', url: 'https://example.org/kept' }, cookie);
    const [kept] = replica.truth().submissions;
    expect(JSON.parse(readFileSync(stateFile, 'utf8')).submissions).toEqual([kept]);

    const resumed = createReplica({ stateFile });
    expect(resumed.truth().submissions).toEqual([kept]);
    const again = await signedIn(resumed);
    expect(idsOf(await again.hn.page('/newest'))[0]).toBe(kept!.id);
    await again.hn.post('/r', { ...again.form, title: 'Later', url: 'https://example.org/later' }, again.cookie);
    const later = resumed.truth().submissions[1]!;
    expect(Number(later.id)).toBeGreaterThan(Number(kept!.id));
    resumed.reset();
    expect(resumed.truth().submissions).toEqual([kept]);
    expect(JSON.parse(readFileSync(stateFile, 'utf8')).submissions).toEqual([kept]);
  });

  test('a capture of item pages only: its front page lists their stories, ranked as captured; a submitted story is made from that row', async () => {
    const replica = createReplica({ capture: 'fixtures/hn/2025/item-46194762.html' });
    const { hn, cookie, form } = await signedIn(replica);
    const front = await hn.page('/news', cookie);
    expect(front('tr.athing').map((_, row) => row.attribs.id).get()).toEqual(['46194762']);
    expect(front('span.rank').text()).toBe('1.');
    expect(front('a[href^="fave?"]').length).toBe(0);
    expect(front('title').text()).toBe('Hacker News');
    expect(replica.snapshot().ranking.map(({ rank, id }) => ({ rank, id }))).toEqual([{ rank: 1, id: '46194762' }]);
    expect((await hn.post('/r', { ...form, title: 'Kept anyway', url: 'https://example.org/kept' }, cookie)).headers.get('location')).toBe('/newest');
    const [kept] = replica.truth().submissions;
    expect((await hn.page('/newest', cookie))(`tr.athing[id="${kept!.id}"]`).length).toBe(1);
    expect((await hn.page(`/item?id=${kept!.id}`))('table.fatitem').length).toBe(1);
  });

  test('the snapshot\'s stories carry their link (none on a text post)', async () => {
    const ranking = createReplica().snapshot().ranking;
    expect(ranking.find((story) => story.rank === 3)?.url).toBe('https://github.com/tamsinreyes/driftwood');
    expect(ranking.find((story) => story.title.startsWith('Ask HN'))?.url).toBeUndefined();
  });

  for (const markupYear of markupYears) {
    test(`${markupYear} markup: a submitted story's row is in the era's markup, votable from /newest`, async () => {
      const replica = createReplica({ faults: { markupYear } });
      const { hn, cookie, form } = await signedIn(replica);
      await hn.post('/r', { ...form, title: 'Era & markup', url: 'https://example.org/era' }, cookie);
      const [story] = replica.truth().submissions;
      const newest = await hn.page('/newest', cookie);
      expect(rowsOf(newest)[0]).toEqual({ id: story!.id, rank: '1.', title: 'Era & markup', href: 'https://example.org/era' });
      // The row's classes are the capture's: 2025 `athing submission`, earlier `athing`.
      expect(newest(`tr[id="${story!.id}"]`).attr('class')).toBe(newest('tr.athing').eq(1).attr('class'));
      expect(newest(`tr[id="${story!.id}"] .titleline, tr[id="${story!.id}"] a.storylink`)).toHaveLength(1);
      const up = newest(`#up_${story!.id}`).attr('href')!;
      expect((await hn.get(`/${up}`, cookie)).headers.get('location')).toBe('/newest');
      expect(replica.truth().votes).toEqual({ harness: [story!.id] });
      expect(bodyText(await (await hn.get(`/item?id=${story!.id}`)).text())).toContain('Era & markup');
    });
  }
});

test.describe('the tasks\' session checks (verify): what the session sees', () => {
  for (const task of [...voteTasks, ...submissionTasks, ...listingTasks].filter((known) => !known.tags.includes('information'))) {
    const infeasible = task.tags.includes('infeasible');
    test(`${task.name}: ${infeasible ? 'never holds, the reference having found nothing to do' : 'does not hold before the reference, holds after it'}`, async ({ context }) => {
      const site = recordedHn();
      await site.attach(context);
      // The session as the browser holds it: its cookies, sent with each load.
      const session: SessionView = {
        async load(path) {
          const cookie = (await context.cookies(site.origin)).map(({ name, value }) => `${name}=${value}`).join('; ');
          const response = await site.fetch(new Request(new URL(path, site.origin), { headers: cookie ? { cookie } : {} }));
          return { status: response.status, html: await response.text() };
        },
      };
      const page = await context.newPage();
      await page.goto(`${site.origin}/news`);
      const start = await site.snapshot();
      expect(await sessionVerdict(task, start, session), 'before').toMatchObject({ holds: false });
      await task.reference!(page, site);
      await site.idle();
      const after = await sessionVerdict(task, start, session);
      expect(after, after.detail).toMatchObject({ holds: !infeasible });
    });
  }
});

test.describe('submit a link, or upvote it when it is already posted', () => {
  const url = 'https://example.org/posted';
  const ranking = [
    { rank: 1, id: '101', title: 'Posted before', url },
    { rank: 2, id: '102', title: 'Another' },
  ];
  const wanted = submittedUnlessPosted({ title: 'My title', url });
  const evidence = (start: HnSnapshot, end: HnSnapshot) => ({ start, end, diff: hnDiff(start, end), user: 'harness' });
  const base: HnSnapshot = { votes: {}, ranking, submissions: [] };

  test('posted at the start: the vote is the task, and a repost is a side effect; a lax postcondition (any submission expected) lets the repost survive', async () => {
    const voted: HnSnapshot = { ...base, votes: { harness: ['101'] } };
    expect(await judge([wanted], evidence(base, voted))).toMatchObject({ actual: true, sideEffects: [] });
    const reposted: HnSnapshot = { ...voted, submissions: [{ id: '900', by: 'harness', title: 'My title', url }] };
    expect((await judge([wanted], evidence(base, reposted))).sideEffects.map((change) => change.kind)).toEqual(['submission']);
    expect(await judge([wanted], evidence(base, { ...base, submissions: reposted.submissions }))).toMatchObject({ actual: false });

    const lax: Postcondition<HnSnapshot, HnChange> = { ...wanted, expects: (change, all) => change.kind === 'submission' || wanted.expects(change, all) };
    const report = await mutationTest([lax], evidence(base, voted), hnDiff, hnMutators);
    expect(report.survivors.map((mutant) => mutant.name)).toEqual([`an extra submission ("An extra story no one asked for")`, `a repost of 101's link (${url})`]);
    expect((await mutationTest([wanted], evidence(base, voted), hnDiff, hnMutators)).survivors).toEqual([]);
  });

  test('not posted at the start: the submission is the task, once, exactly as asked', async () => {
    const start: HnSnapshot = { ...base, ranking: [ranking[1]!] };
    const once: HnSnapshot = { ...start, submissions: [{ id: '900', by: 'harness', title: 'My title', url }] };
    expect(await judge([wanted], evidence(start, once))).toMatchObject({ actual: true, sideEffects: [] });
    const twice: HnSnapshot = { ...start, submissions: [...once.submissions!, { id: '901', by: 'harness', title: 'My title', url }] };
    expect((await judge([wanted], evidence(start, twice))).verdicts[0]!.detail).toBe(`harness submitted "My title" (${url}) 2 times`);
    const retitled: HnSnapshot = { ...start, submissions: [{ id: '900', by: 'harness', title: 'My title, shortened', url }] };
    expect(await judge([wanted], evidence(start, retitled))).toMatchObject({ actual: false, sideEffects: [expect.objectContaining({ kind: 'submission' })] });
  });
});
