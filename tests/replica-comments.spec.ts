import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type BrowserContext } from '@playwright/test';
import type { SessionView } from '../src/eval/tasks.ts';
import { createReplica } from '../src/sites/hn/index.ts';
import { recordedHn } from '../src/sites/hn/site.ts';
import { commentTasks, replyThanks } from '../src/sites/hn/tasks/comments.ts';
import type { HnReplica } from '../src/sites/hn/replica.ts';
import { hnDiff } from '../src/sites/hn/snapshot.ts';
import { judge } from '../src/eval/oracle.ts';
import { account, client, expect, referenceDir, sessionVerdict } from './support.ts';

/** Fixture stories with captured threads (fixtures/hn/stories.json). */
const ZIG = '46194762'; // rank 1: two comments, each with one reply
const FONTS = '46192362'; // rank 28: a dead comment with a live reply
const DEAD = '46193015';
const TOP_FONTS = '46192511';
const YEARS = [2017, 2020, 2025] as const;

type Hn = ReturnType<typeof client>;

/** The comment form on `path` as the user sees it, filled in with `text`, and posted. */
async function postForm(hn: Hn, cookie: string, path: string, text: string, change: Record<string, string> = {}): Promise<Response> {
  const page = await hn.page(path, cookie);
  const form = page('form[action="comment"]');
  const fields = Object.fromEntries(form.find('input[type="hidden"]').toArray().map((input) => [input.attribs.name!, input.attribs.value ?? '']));
  return hn.post('/comment', { ...fields, text, ...change }, cookie);
}

/** The comment rows of an item page in order: id, indent (from the spacer's width) and text. */
async function thread(hn: Hn, id: string, cookie?: string) {
  const page = await hn.page(`/item?id=${id}`, cookie);
  return page('tr.athing.comtr')
    .toArray()
    .map((row) => {
      // A paragraph leaves 2017–2020's span.commtext open around the reply link.
      const text = page(row).find('.commtext').clone();
      text.find('.reply').remove();
      return { id: row.attribs.id!, indent: Number(page(row).find('td.ind img').attr('width')) / 40, text: text.text().trim() };
    });
}

/** The "N comments" link of story `id` on `path`. */
async function countOn(hn: Hn, path: string, id: string, cookie?: string): Promise<string> {
  const page = await hn.page(path, cookie);
  return page(`tr.athing[id="${id}"]`).next('tr').find(`a[href="item?id=${id}"]`).last().text().replace(/\u00a0/g, ' ');
}

function replicaOf(year: (typeof YEARS)[number] = 2020): HnReplica {
  return createReplica({ faults: { markupYear: year } });
}

for (const year of YEARS) {
  test.describe(`${year} markup`, () => {
    test('the capture reads every comment: parent from the indent, text with its paragraphs, the dead one as [dead]; counts agree with the threads', () => {
      const { comments, ranking } = replicaOf(year).snapshot();
      expect(comments!.filter((comment) => comment.story === FONTS)).toEqual([
        { id: TOP_FONTS, parent: FONTS, story: FONTS, by: 'fontwalker', text: expect.stringMatching(/^The timetable for the Rhaetian line/) },
        { id: '46192790', parent: TOP_FONTS, story: FONTS, by: 'mirela_t', text: expect.stringMatching(/^Drawn at roughly twice/) },
        { id: DEAD, parent: FONTS, story: FONTS, by: 'quietbyte', text: '[dead]', dead: true },
        { id: '46193240', parent: DEAD, story: FONTS, by: 'ledger_and_line', text: expect.any(String) },
        { id: '46193588', parent: FONTS, story: FONTS, by: 'harpsichordist', text: expect.any(String) },
        { id: '46193901', parent: '46193588', story: FONTS, by: 'fontwalker', text: expect.any(String) },
      ]);
      expect(comments!.find((comment) => comment.id === '46196217')?.text).toBe(
        "It's full scans all the way down, which is honestly fine for a teaching project.\n\nAdding a B-tree index would probably double the line count, and that's the next post.",
      );
      for (const story of new Set(comments!.map((comment) => comment.story))) {
        const live = comments!.filter((comment) => comment.story === story && !comment.dead).length;
        expect(ranking.find((entry) => entry.id === story)?.comments, `story ${story}`).toBe(live);
      }
      expect(new Set(comments!.map((comment) => comment.story)).size).toBeGreaterThanOrEqual(4);
      expect(ranking.find((entry) => comments!.some((comment) => comment.story === entry.id) && entry.rank > 30)).toBeDefined();
    });

    test('a reply goes right under its parent, one indent deeper; the count is one more on the item page and the listing; /threads lists it', async () => {
      const replica = replicaOf(year);
      const hn = client(replica);
      const cookie = await hn.login();
      const before = await thread(hn, ZIG, cookie);
      const top = before[0]!;
      const reply = await hn.page(`/reply?id=${top.id}&goto=${encodeURIComponent(`item?id=${ZIG}`)}%23${top.id}`, cookie);
      expect(reply('.commtext').text()).toBe(top.text);
      expect(reply('form[action="comment"] input[type="submit"]').attr('value')).toBe('reply');
      expect(reply('input[name="parent"]').attr('value')).toBe(top.id);
      expect(reply('input[name="hmac"]').attr('value')).toBe(replica.state.authToken('harness', top.id));

      const posted = await postForm(hn, cookie, `/reply?id=${top.id}&goto=item%3Fid%3D${ZIG}%23${top.id}`, '  Thanks for\r\n\r\nthe write-up.  ');
      const [mine] = replica.state.posts.comments;
      expect(mine).toEqual({ id: expect.any(String), parent: top.id, story: ZIG, by: 'harness', text: 'Thanks for\n\nthe write-up.' });
      expect(Number(mine!.id)).toBeGreaterThan(Math.max(...[...replica.capture.items.keys()].map(Number)));
      expect(posted.status).toBe(302);
      expect(posted.headers.get('location')).toBe(`/item?id=${ZIG}#${mine!.id}`);

      const after = await thread(hn, ZIG, cookie);
      expect(after.map((row) => row.id)).toEqual([top.id, mine!.id, ...before.slice(1).map((row) => row.id)]);
      expect(after[1]).toEqual({ id: mine!.id, indent: top.indent + 1, text: 'Thanks forthe write-up.' });
      // Everyone sees it, logged out too, and the count is one more wherever it shows.
      expect((await thread(hn, ZIG)).map((row) => row.id)).toContain(mine!.id);
      expect(await countOn(hn, `/item?id=${ZIG}`, ZIG)).toBe('5 comments');
      expect(await countOn(hn, '/news', ZIG, cookie)).toBe('5 comments');
      expect(replica.snapshot().ranking.find((story) => story.id === ZIG)?.comments).toBe(5);

      // A reply to the new comment goes under it, deeper still.
      await postForm(hn, cookie, `/reply?id=${mine!.id}`, 'And a follow-up.');
      const deeper = replica.state.posts.comments[1]!;
      expect((await thread(hn, ZIG, cookie)).slice(1, 3)).toEqual([
        { id: mine!.id, indent: top.indent + 1, text: expect.any(String) },
        { id: deeper.id, indent: top.indent + 2, text: 'And a follow-up.' },
      ]);
      const threads = await hn.page('/threads?id=harness');
      expect(threads('tr.athing.comtr').toArray().map((row) => row.attribs.id)).toEqual([deeper.id, mine!.id]);
      expect(threads('.onstory a').first().text()).toBe(replica.capture.items.get(ZIG)!.title);
      // Each row links to its parent, as HN's do: the reply's is the comment it answers.
      expect(threads(`tr[id="${deeper.id}"] .navs a`).first().attr('href')).toBe(`item?id=${deeper.parent}`);
    });
  });
}

test.describe('comment on a story', () => {
  test('the item page form carries an hmac for the user and the story; a new comment goes atop the thread', async () => {
    const replica = replicaOf(2025);
    const hn = client(replica);
    const cookie = await hn.login();
    const page = await hn.page(`/item?id=${FONTS}`, cookie);
    expect(page('form[action="comment"] input[name="hmac"]').attr('value')).toBe(replica.state.authToken('harness', FONTS));
    // Every live comment has a reply link; the dead one none (nor a vote arrow).
    const replies = page('a[href^="reply?id="]').toArray().map((link) => new URLSearchParams(link.attribs.href!.slice(6)).get('id'));
    expect(replies).toHaveLength(5);
    expect(replies).not.toContain(DEAD);
    expect(page(`#up_${DEAD}`)).toHaveLength(0);

    await postForm(hn, cookie, `/item?id=${FONTS}`, 'Lovely plates.');
    const [mine] = replica.state.posts.comments;
    expect(mine).toMatchObject({ parent: FONTS, story: FONTS, text: 'Lovely plates.' });
    expect((await thread(hn, FONTS, cookie))[0]).toEqual({ id: mine!.id, indent: 0, text: 'Lovely plates.' });
    expect(await countOn(hn, `/item?id=${FONTS}`, FONTS, cookie)).toBe('6 comments');
  });

  test('a story without a captured thread: its derived item page takes a comment, and "discuss" becomes "1 comment"', async () => {
    const replica = replicaOf(2020);
    const hn = client(replica);
    const cookie = await hn.login();
    const quiet = replica.snapshot().ranking.find((story) => story.comments === 0)!;
    expect(await countOn(hn, '/news', quiet.id, cookie)).toBe('discuss');
    expect((await postForm(hn, cookie, `/item?id=${quiet.id}`, 'First!')).status).toBe(302);
    expect((await thread(hn, quiet.id, cookie)).map((row) => row.text)).toEqual(['First!']);
    expect(await countOn(hn, '/news', quiet.id, cookie)).toBe('1 comment');
  });

  test('a missing or wrong hmac, an empty text, no session, a dead or unknown parent: nothing changes', async () => {
    const replica = replicaOf(2020);
    const hn = client(replica);
    const cookie = await hn.login();
    const path = `/item?id=${FONTS}`;
    for (const hmac of ['', '0'.repeat(40), replica.state.authToken('someone-else', FONTS), replica.state.authToken('harness', ZIG)]) {
      expect(await (await postForm(hn, cookie, path, 'Hello', { hmac })).text()).toBe('Unknown.');
    }
    const { hmac: _, ...noHmac } = { parent: FONTS, goto: `item?id=${FONTS}`, hmac: '', text: 'Hello' };
    expect(await (await hn.post('/comment', noHmac, cookie)).text()).toBe('Unknown.');
    for (const text of ['', '   \r\n ']) expect((await postForm(hn, cookie, path, text)).status).toBe(302);
    // Logged out: the login page, and nothing posted.
    const loggedOut = await hn.post('/comment', { parent: FONTS, goto: `item?id=${FONTS}`, hmac: replica.state.authToken('harness', FONTS), text: 'Hello' });
    expect(await loggedOut.text()).toContain('name="pw"');
    // A dead comment cannot be answered, even with a right hmac; an unknown item neither.
    const dead = await hn.post('/comment', { parent: DEAD, goto: `item?id=${FONTS}`, hmac: replica.state.authToken('harness', DEAD), text: 'Hello' }, cookie);
    expect(await dead.text()).toBe("You can't reply to that item.");
    expect(await (await hn.post('/comment', { parent: '1', goto: 'news', hmac: replica.state.authToken('harness', '1'), text: 'Hello' }, cookie)).text()).toBe('No such item.');
    expect(replica.state.posts.comments).toEqual([]);
    expect(await countOn(hn, path, FONTS, cookie)).toBe('5 comments');
  });

  test('/reply: logged out the login page, a dead comment cannot be replied to, an unknown one is no such item', async () => {
    const replica = replicaOf(2025);
    const hn = client(replica);
    const loggedOut = await hn.page(`/reply?id=${TOP_FONTS}&goto=item%3Fid%3D${FONTS}%23${TOP_FONTS}`);
    expect(loggedOut('input[name="pw"]').length).toBeGreaterThan(0);
    expect(loggedOut('input[name="goto"]').first().attr('value')).toBe(`reply?id=${TOP_FONTS}&goto=item%3Fid%3D${FONTS}%23${TOP_FONTS}`);
    const cookie = await hn.login();
    expect(await (await hn.get(`/reply?id=${DEAD}`, cookie)).text()).toBe("You can't reply to that item.");
    expect(await (await hn.get('/reply?id=1', cookie)).text()).toBe('No such item.');
  });
});

test.describe('comments in the state', () => {
  test('a stateFile keeps the comments between replicas; reset clears them; the diff lists each as a comment by its user', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hn-comments-'));
    try {
      const stateFile = join(dir, 'state.json');
      const replica = createReplica({ stateFile });
      const start = replica.snapshot();
      const hn = client(replica);
      const cookie = await hn.login();
      await postForm(hn, cookie, `/item?id=${ZIG}`, 'Kept.');
      const [mine] = replica.state.posts.comments;
      expect(hnDiff(start, replica.snapshot())).toEqual([{ kind: 'comment', id: mine!.id, user: 'harness', detail: `harness commented ${mine!.id} on ${ZIG}: "Kept."` }]);

      const reopened = createReplica({ stateFile });
      expect(reopened.state.posts.comments).toEqual([mine]);
      expect((await thread(client(reopened), ZIG)).map((row) => row.text)).toContain('Kept.');
      // The next id follows on: a comment after a restart never reuses one.
      const again = client(reopened);
      await postForm(again, await again.login(), `/item?id=${ZIG}`, 'Second.');
      expect(Number(reopened.state.posts.comments[1]!.id)).toBe(Number(mine!.id) + 1);

      replica.reset();
      expect(replica.state.posts.comments).toEqual([]);
      expect(hnDiff(start, replica.snapshot())).toEqual([]);
      expect(createReplica({ stateFile }).state.posts.comments).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

test.describe('a comment\'s own page', () => {
  test('its age links to it: the comment, favorite (then un-favorite) and a reply form; a dead one has no form', async () => {
    const replica = replicaOf(2025);
    const hn = client(replica);
    const cookie = await hn.login();
    const item = await hn.page(`/item?id=${FONTS}`, cookie);
    expect(item(`tr[id="${TOP_FONTS}"] .age a`).attr('href')).toBe(`item?id=${TOP_FONTS}`);
    const page = await hn.page(`/item?id=${TOP_FONTS}`, cookie);
    expect(page('.commtext').text()).toMatch(/^The timetable for the Rhaetian line/);
    expect(page('form[action="comment"] input[name="hmac"]').attr('value')).toBe(replica.state.authToken('harness', TOP_FONTS));
    const fave = page(`a[href^="fave?id=${TOP_FONTS}&"]`);
    expect(fave.text()).toBe('favorite');
    expect((await hn.get(`/${fave.attr('href')}`, cookie)).headers.get('location')).toBe(`/item?id=${TOP_FONTS}`);
    expect(replica.truth().faves).toEqual({ harness: [TOP_FONTS] });
    expect((await hn.page(`/item?id=${TOP_FONTS}`, cookie))(`a[href^="fave?id=${TOP_FONTS}&un=t&"]`).text()).toBe('un-favorite');
    // A reply from the comment's page goes back to it.
    await postForm(hn, cookie, `/item?id=${TOP_FONTS}`, 'From its own page.');
    expect(replica.state.posts.comments[0]).toMatchObject({ parent: TOP_FONTS, story: FONTS, text: 'From its own page.' });
    const dead = await hn.page(`/item?id=${DEAD}`, cookie);
    expect(dead('.commtext').text()).toBe('[dead]');
    expect(dead('form[action="comment"]')).toHaveLength(0);
  });
});

/** What the context's own session sees: a page loaded with its cookies, as the verify layer loads it. */
function sessionOf(context: BrowserContext, site: ReturnType<typeof recordedHn>): SessionView {
  return {
    async load(path) {
      const cookie = (await context.cookies(site.origin)).map(({ name, value }) => `${name}=${value}`).join('; ');
      const response = await site.fetch(new Request(new URL(path, site.origin), { headers: { cookie } }));
      return { status: response.status, html: await response.text() };
    },
  };
}

test.describe('the comment tasks\' session checks', () => {
  for (const task of commentTasks.filter((candidate) => !candidate.tags.includes('information'))) {
    test(`${task.name}: not confirmed before the reference, confirmed after (unless no one can do it)`, async ({ browser }) => {
      for (const markupYear of YEARS) {
        const context = await browser.newContext();
        try {
          const site = recordedHn({ faults: { markupYear } });
          await site.attach(context);
          const session = sessionOf(context, site);
          const page = await context.newPage();
          const start = await site.snapshot();
          expect(await sessionVerdict(task, start, session), `${markupYear} before`).toMatchObject({ holds: false });
          await task.reference!(page, site);
          await site.idle();
          const after = await sessionVerdict(task, start, session);
          expect(after, `${markupYear} after: ${after.detail}`).toMatchObject({ holds: !task.tags.includes('infeasible') });
        } finally {
          await context.close();
        }
      }
    });
  }
});

test('two identical replies: the task asked for one, the second is a side effect; an upvote on the comment answered is one too', async () => {
  const replica = replicaOf(2025);
  const start = replica.snapshot();
  const hn = client(replica);
  const cookie = await hn.login();
  for (let copy = 0; copy < 2; copy += 1) await postForm(hn, cookie, `/reply?id=${TOP_FONTS}`, 'thanks');
  const vote = (await hn.page(`/item?id=${FONTS}`, cookie))(`#up_${TOP_FONTS}`).attr('href')!;
  await hn.get(`/${vote}`, cookie);
  const end = replica.snapshot();
  const [first, second] = replica.state.posts.comments;
  const judgement = await judge(replyThanks.postconditions, { start, end, diff: hnDiff(start, end), user: 'harness' });
  expect(judgement.actual).toBe(true);
  expect(judgement.sideEffects.map(({ kind, id }) => `${kind} ${id}`)).toEqual([`vote ${TOP_FONTS}`, `comment ${second!.id}`]);
  expect(judgement.verdicts[0]!.detail).toContain(first!.id);
});

test('the 2026 reference item page (124 comments): its thread read whole, and a reply lands under its parent there too', async () => {
  const replica = createReplica({ capture: join(referenceDir, 'item-2026-harrisjose-easyhn.html') });
  const { comments } = replica.snapshot();
  const story = [...replica.capture.items.values()].find((item) => item.kind === 'story')!.id;
  expect(comments).toHaveLength(124);
  expect(comments!.filter((comment) => comment.parent === story).length).toBeGreaterThan(1);
  // Every parent is the story or a comment listed before it.
  comments!.forEach((comment, index) => expect([story, ...comments!.slice(0, index).map((earlier) => earlier.id)]).toContain(comment.parent));
  const hn = client(replica);
  const cookie = await hn.login();
  const second = comments![1]!;
  await postForm(hn, cookie, `/reply?id=${second.id}`, 'A reply deep in the thread.');
  const rows = await thread(hn, story, cookie);
  const at = rows.findIndex((row) => row.id === second.id);
  expect(rows[at + 1]).toEqual({ id: replica.state.posts.comments[0]!.id, indent: rows[at]!.indent + 1, text: 'A reply deep in the thread.' });
  expect(rows).toHaveLength(125);
});

test('the faults apply to comments: a 502 or an expired session posts nothing', async () => {
  const failing = createReplica({ faults: { errorRate: 1 } });
  const hn = client(failing);
  const form = { parent: ZIG, goto: `item?id=${ZIG}`, hmac: failing.state.authToken('harness', ZIG), text: 'Hello' };
  // Logged in behind the fault's back: every request answers 502.
  const cookie = `user=${failing.state.login(account.username, account.password)}`;
  expect((await hn.post('/comment', form, cookie)).status).toBe(502);
  expect(failing.state.posts.comments).toEqual([]);

  const expiring = createReplica({ faults: { sessionExpiresAfter: 1 } });
  const again = client(expiring);
  const session = await again.login();
  const page = await again.page(`/item?id=${ZIG}`, session); // the session's one request
  const hmac = page('form[action="comment"] input[name="hmac"]').attr('value')!;
  const expired = await again.post('/comment', { parent: ZIG, goto: `item?id=${ZIG}`, hmac, text: 'Hello' }, session);
  expect(await expired.text()).toContain('name="pw"');
  expect(expiring.state.posts.comments).toEqual([]);
});
