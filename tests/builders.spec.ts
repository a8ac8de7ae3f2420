import type { BrowserContext } from '@playwright/test';
import { judge } from '../src/eval/oracle.ts';
import { evaluate } from '../src/eval/evaluate.ts';
import { defineTask, taskAt } from '../src/eval/tasks.ts';
import { InputError } from '../src/input.ts';
import { nopAgent } from '../src/agents/controls.ts';
import { hnBuilders } from '../src/sites/hn/builders.ts';
import type { HnPostcondition } from '../src/sites/hn/postconditions.ts';
import { createReplica, type HnReplica } from '../src/sites/hn/replica.ts';
import { recordedHn } from '../src/sites/hn/site.ts';
import { hnDiff, type HnSnapshot } from '../src/sites/hn/snapshot.ts';
import type { SessionView } from '../src/core/task.ts';
import { client, expect, test } from './support.ts';

/**
 * HN's postcondition builders (issue 33, item 7): one for every change the site's state records,
 * each judged from the state's diff, bound at the start to the item it names, checking itself on
 * the session's pages; and a target the start lacks is bad input, before any run.
 */

const USER = 'harness';
const { upvoted, unvoted, hidden, unhidden, favorited, unfavorited, commented, submitted, profileSet } = hnBuilders;

const storyAt = (replica: HnReplica, rank: number) => replica.snapshot().ranking.find((story) => story.rank === rank)!.id;
/** The top comments of the captured threads, in capture order. */
const topComments = (replica: HnReplica) => replica.snapshot().comments!.filter((comment) => comment.parent === comment.story && !comment.dead);

/** What the run's user does, straight on the site's state: what its pages and the snapshot then show. */
const acts = {
  vote: (replica: HnReplica, id: string) => replica.state.vote(USER, id, 'up'),
  unvote: (replica: HnReplica, id: string) => replica.state.vote(USER, id, 'un'),
  hide: (replica: HnReplica, id: string) => replica.state.mark('hidden', USER, id, true),
  unhide: (replica: HnReplica, id: string) => replica.state.mark('hidden', USER, id, false),
  fave: (replica: HnReplica, id: string) => replica.state.mark('faves', USER, id, true),
  unfave: (replica: HnReplica, id: string) => replica.state.mark('faves', USER, id, false),
  comment(replica: HnReplica, parent: string, text: string) {
    const story = replica.snapshot().comments!.find((comment) => comment.id === parent)?.story ?? parent;
    replica.state.posts.comments.push({ id: replica.state.newId(), parent, story, by: USER, text });
  },
  submit: (replica: HnReplica, title: string, url: string) => replica.state.posts.submissions.push({ id: replica.state.newId(), by: USER, title, url }),
  setAbout: (replica: HnReplica, about: string) => void (replica.state.posts.profiles[USER] = { about }),
};

/** The session's view of the site, as `verify` gives it: pages loaded with the run's user's cookie. */
async function sessionOf(replica: HnReplica): Promise<SessionView> {
  const hn = client(replica);
  const cookie = await hn.login();
  return {
    user: USER,
    async load(path) {
      const response = await hn.get(path, cookie);
      return { status: response.status, html: await response.text() };
    },
  };
}

interface Case {
  title: string;
  postcondition: (replica: HnReplica) => HnPostcondition;
  /** What the account had before the run. */
  before?: (replica: HnReplica) => void;
  done: (replica: HnReplica) => void;
  /** The same change on another item: not the one asked for. */
  wrong: (replica: HnReplica) => void;
}

const text = 'Thanks for writing this up.';
const link = { title: 'A replica of a website for testing agents', url: 'https://quietharbor.dev/notes/replica' };
const cases: Case[] = [
  { title: 'upvoted({ rank })', postcondition: () => upvoted({ rank: 2 }), done: (r) => acts.vote(r, storyAt(r, 2)), wrong: (r) => acts.vote(r, storyAt(r, 3)) },
  { title: 'upvoted({ id }) of a comment', postcondition: (r) => upvoted({ id: topComments(r)[0]!.id }), done: (r) => acts.vote(r, topComments(r)[0]!.id), wrong: (r) => acts.vote(r, topComments(r)[1]!.id) },
  {
    title: 'unvoted({ rank })',
    postcondition: () => unvoted({ rank: 2 }),
    before: (r) => (acts.vote(r, storyAt(r, 2)), acts.vote(r, storyAt(r, 3))),
    done: (r) => acts.unvote(r, storyAt(r, 2)),
    wrong: (r) => acts.unvote(r, storyAt(r, 3)),
  },
  { title: 'hidden({ rank })', postcondition: () => hidden({ rank: 5 }), done: (r) => acts.hide(r, storyAt(r, 5)), wrong: (r) => acts.hide(r, storyAt(r, 6)) },
  {
    title: 'unhidden({ title })',
    postcondition: (r) => unhidden({ title: r.snapshot().ranking.find((story) => story.rank === 5)!.title }),
    before: (r) => (acts.hide(r, storyAt(r, 5)), acts.hide(r, storyAt(r, 6))),
    done: (r) => acts.unhide(r, storyAt(r, 5)),
    wrong: (r) => acts.unhide(r, storyAt(r, 6)),
  },
  { title: 'favorited({ rank })', postcondition: () => favorited({ rank: 2 }), done: (r) => acts.fave(r, storyAt(r, 2)), wrong: (r) => acts.fave(r, storyAt(r, 3)) },
  { title: 'favorited({ id }) of a comment', postcondition: (r) => favorited({ id: topComments(r)[0]!.id }), done: (r) => acts.fave(r, topComments(r)[0]!.id), wrong: (r) => acts.fave(r, topComments(r)[1]!.id) },
  {
    title: 'unfavorited({ id }) of a story',
    postcondition: (r) => unfavorited({ id: storyAt(r, 2) }),
    before: (r) => (acts.fave(r, storyAt(r, 2)), acts.fave(r, storyAt(r, 3))),
    done: (r) => acts.unfave(r, storyAt(r, 2)),
    wrong: (r) => acts.unfave(r, storyAt(r, 3)),
  },
  { title: 'commented({ on: { rank } })', postcondition: () => commented({ on: { rank: 1 }, text }), done: (r) => acts.comment(r, storyAt(r, 1), text), wrong: (r) => acts.comment(r, storyAt(r, 2), text) },
  {
    title: 'commented({ on: { id } }): a reply',
    postcondition: (r) => commented({ on: { id: topComments(r)[0]!.id }, text }),
    done: (r) => acts.comment(r, topComments(r)[0]!.id, text),
    wrong: (r) => acts.comment(r, topComments(r)[1]!.id, text),
  },
  { title: 'submitted({ title, url })', postcondition: () => submitted(link), done: (r) => acts.submit(r, link.title, link.url), wrong: (r) => acts.submit(r, `${link.title}, again`, link.url) },
];

/** The postcondition bound to the start, the oracle's judgement of the run's change, and the session's check after it. */
async function judged({ postcondition, before }: Case, change?: (replica: HnReplica) => void) {
  const replica = createReplica();
  before?.(replica);
  const start = replica.snapshot();
  const unbound = postcondition(replica);
  // A submission or a profile names nothing the start must have: it has no binding to make.
  const bound = unbound.resolve?.(start) ?? unbound;
  change?.(replica);
  const end = replica.snapshot();
  const judgement = await judge([bound], { start, end, diff: hnDiff(start, end), user: USER });
  return { judgement, check: await bound.check!(await sessionOf(replica)) };
}

test.describe('each builder: done holds, not done fails, the same change on another item is a side effect', () => {
  for (const one of cases) {
    test(one.title, async () => {
      const done = await judged(one, one.done);
      expect(done.judgement, done.judgement.verdicts[0]!.detail).toMatchObject({ actual: true, sideEffects: [] });
      expect(done.check, done.check.detail).toMatchObject({ holds: true });

      const nothing = await judged(one);
      expect(nothing.judgement).toMatchObject({ actual: false, sideEffects: [] });
      expect(nothing.check, nothing.check.detail).toMatchObject({ holds: false });

      const wrong = await judged(one, one.wrong);
      expect(wrong.judgement).toMatchObject({ actual: false, sideEffects: [expect.objectContaining({ kind: expect.any(String) })] });
      expect(wrong.judgement.sideEffects).toHaveLength(1);
      expect(wrong.check, wrong.check.detail).toMatchObject({ holds: false });
    });
  }

  test('profileSet({ about }): the field set holds; another text fails (the edit is the one asked for, so no side effect)', async () => {
    const about = { title: 'profileSet', postcondition: () => profileSet({ about: 'Building small databases.' }), done: (r: HnReplica) => acts.setAbout(r, 'Building small databases.'), wrong: () => {} };
    const done = await judged(about, about.done);
    expect(done.judgement).toMatchObject({ actual: true, sideEffects: [], verdicts: [{ detail: 'harness\'s about is "Building small databases."' }] });
    expect(done.check).toMatchObject({ holds: true });
    const other = await judged(about, (r) => acts.setAbout(r, 'Something else.'));
    expect(other.judgement).toMatchObject({ actual: false, sideEffects: [] });
    expect(other.check).toMatchObject({ holds: false });
    expect((await judged(about)).judgement).toMatchObject({ actual: false, sideEffects: [] });
  });

  test('a change taken back needs the mark at the start: an unvote of what the account never voted cannot hold', async () => {
    const replica = createReplica();
    const start = replica.snapshot();
    const bound = unvoted({ rank: 2 }).resolve!(start);
    expect(await judge([bound], { start, end: start, diff: [], user: USER })).toMatchObject({
      actual: false,
      verdicts: [{ detail: `story ${storyAt(replica, 2)} (rank 2) was not upvoted by harness at the start: nothing to take back` }],
    });
    expect(await bound.check!(await sessionOf(replica))).toMatchObject({ holds: false, detail: expect.stringContaining('nothing to take back') });
  });
});

test.describe('a target the start lacks is bad input: one line, when the postcondition is resolved', () => {
  const start = (): HnSnapshot => createReplica().snapshot();

  test('a rank, a title, an id, a comment where only a story will do: each names the call, the value and what the site has', () => {
    const at = start();
    const listed = `${at.ranking.length} stories, ranks 1 to ${Math.max(...at.ranking.map((story) => story.rank))}`;
    const comment = at.comments![0]!.id;
    const refused: Array<[HnPostcondition, string]> = [
      [upvoted({ rank: 999 }), `hn.upvoted({ rank: 999 }): no story at rank 999 at the start (${listed})`],
      [favorited({ title: 'Never posted' }), `hn.favorited({ title: "Never posted" }): no story titled "Never posted" at the start (${listed})`],
      [unvoted({ id: '7' }), `hn.unvoted({ id: "7" }): no story or comment 7 at the start (${listed}, ${at.comments!.length} comments)`],
      [hidden({ id: comment }), `hn.hidden({ id: "${comment}" }): ${comment} is a comment at the start, not a story`],
      [commented({ on: { rank: 999 }, text: 'hi' }), `hn.commented({ on: { rank: 999 }, text: "hi" }): no story at rank 999 at the start (${listed})`],
    ];
    for (const [postcondition, message] of refused) {
      const thrown = (() => {
        try {
          postcondition.resolve!(at);
        } catch (error) {
          return error;
        }
      })();
      expect(thrown).toBeInstanceOf(InputError);
      expect((thrown as Error).message).toBe(message);
      expect((thrown as Error).stack).toBe(`InputError: ${message}`);
    }
  });

  test('a builder given a bad target fails where it is written, naming the field', () => {
    expect(() => upvoted({ rank: 0 })).toThrow(/^hn\.upvoted\(\): rank: /);
    expect(() => hidden({ rank: 1, title: 'x' } as never)).toThrow('hn.hidden(): (options): expected one of rank, title or id');
    expect(() => favorited({ story: 1 } as never)).toThrow(/^hn\.favorited\(\): .*story/);
    expect(() => commented({ on: { rank: 1 }, text: ' ' })).toThrow('hn.commented(): text: expected the text the comment says');
    expect(() => submitted({ title: 'x', url: 'not a link' })).toThrow(/^hn\.submitted\(\): url: /);
    expect(() => profileSet({})).toThrow('hn.profileSet(): (options): expected a field to set: about');
  });

  test('a task declared infeasible resolves a missing target without a word, tagged so; the tag alone is refused', async () => {
    const never = defineTask({ name: 'fave-never', infeasible: 'no story has this title', prompt: 'Favorite "Never posted".', postconditions: [favorited({ title: 'Never posted' })] });
    expect(never.tags).toEqual(['infeasible']);
    const at = start();
    const [bound] = taskAt(never, at).postconditions;
    expect(await bound!.judge({ start: at, end: at, diff: [], user: USER })).toEqual({ holds: false, detail: `no story titled "Never posted" at the start (${at.ranking.length} stories, ranks 1 to 60)` });
    expect(() => taskAt({ ...never, infeasible: undefined, postconditions: [favorited({ title: 'Never posted' })] }, at)).toThrow(InputError);
    expect(() => defineTask({ name: 'tagged', tags: ['infeasible'], prompt: 'p', postconditions: [favorited({ rank: 1 })] })).toThrow("task tagged: infeasible: a task tagged infeasible says why: infeasible: 'reason'");
  });

  test('a typo in a task fails evaluate before the run begins: no run is started, none recorded', async ({ context }: { context: BrowserContext }) => {
    const typo = defineTask({ name: 'typo', prompt: 'Upvote the story ranked 999.', postconditions: [upvoted({ rank: 999 })] });
    let started = false;
    const refused = await evaluate({ context, site: recordedHn(), agent: nopAgent(), model: 'scripted:diligent', task: typo, onStart: async () => void (started = true) }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(InputError);
    expect((refused as Error).message).toMatch(/^hn\.upvoted\(\{ rank: 999 \}\): no story at rank 999 at the start \(60 stories, ranks 1 to 60\)$/);
    expect(started).toBe(false);
  });
});
