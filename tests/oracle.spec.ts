import { mkdtempSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from '@playwright/test';
import { judge } from '../src/eval/oracle.ts';
import { answered } from '../src/eval/postconditions.ts';
import { titleRanked, upvoted, upvotedAllMatching, upvotedTitled } from '../src/sites/hn/postconditions.ts';
import { functionAgent } from '../src/agents/function.ts';
import { titleOfRankThree, upvoteFirstPost } from '../src/sites/hn/suite.ts';
import { evaluate } from '../src/eval/evaluate.ts';
import { HN_ORIGIN } from '../src/sites/hn/options.ts';
import { recordedHn } from '../src/sites/hn/site.ts';
import { hnDiff, type HnSnapshot } from '../src/sites/hn/snapshot.ts';
import { requestsInFlight } from '../src/sites/site.ts';
import { expect, turnsDouble } from './support.ts';

const ranking = [
  { rank: 1, id: '101', title: 'first' },
  { rank: 2, id: '102', title: 'second' },
];
const snapshot = (votes: Record<string, string[]>): HnSnapshot => ({ votes, ranking });
/** What the oracle is given: both snapshots and the HN pack's diff between them. */
const evidence = (before: Record<string, string[]>, after: Record<string, string[]> | HnSnapshot, user = 'harness') => {
  const start = snapshot(before);
  const end = 'ranking' in after ? (after as HnSnapshot) : snapshot(after as Record<string, string[]>);
  return { start, end, diff: hnDiff(start, end), user };
};

test('upvoted({ rank }) reads the ranking at the start and the votes the run gave', async () => {
  const first = upvoted({ rank: 1 });
  expect(await first.judge(evidence({}, { harness: ['101'] }))).toEqual({ holds: true, detail: 'story 101 (rank 1) is upvoted by harness' });
  expect((await first.judge(evidence({}, { harness: ['102'] }))).holds).toBe(false);
  expect((await first.judge(evidence({}, { someone: ['101'] }))).holds).toBe(false);
  // The story that was first at the start counts, even if the front page changed since.
  const reordered = { votes: { harness: ['101'] }, ranking: [{ ...ranking[1]!, rank: 1 }, { ...ranking[0]!, rank: 2 }] };
  expect((await first.judge(evidence({}, reordered))).holds).toBe(true);
  expect(await upvoted({ rank: 9 }).judge(evidence({}, {}))).toEqual({ holds: false, detail: 'no story at rank 9 at the start (2 stories, ranks 1 to 2)' });
});

test('a vote the account had at the start is not the run\'s work, for every postcondition', async () => {
  const already = evidence({ harness: ['101', '102'] }, { harness: ['101', '102'] });
  expect(await upvoted({ rank: 1 }).judge(already)).toEqual({ holds: false, detail: 'story 101 (rank 1) was already upvoted by harness at the start: not the run\'s work' });
  expect(await upvotedTitled({ title: 'second' }).judge(already)).toEqual({ holds: false, detail: 'story 102 ("second") was already upvoted by harness at the start: not the run\'s work' });
  expect(await upvotedAllMatching({ word: 'first' }).judge(already)).toEqual({
    holds: false,
    detail: 'already upvoted at the start, not the run\'s work: 101 (rank 1) (by harness, of 1 matching "first")',
  });
  expect(await judge([upvoted({ rank: 1 })], already)).toEqual({ actual: false, verdicts: [expect.objectContaining({ holds: false })], sideEffects: [] });
});

test('the oracle holds a run actual only when every postcondition holds, and never with none', async () => {
  const voted = evidence({}, { harness: ['101'] });
  expect((await judge([upvoted({ rank: 1 })], voted)).actual).toBe(true);
  expect(await judge([upvoted({ rank: 1 }), upvoted({ rank: 2 })], voted)).toMatchObject({ actual: false, verdicts: [{ holds: true }, { holds: false }] });
  expect((await judge([], voted)).actual).toBe(false);
});

test('upvotedTitled finds the story by its title at the start; an unknown title never holds', async () => {
  const second = upvotedTitled({ title: 'second' });
  expect((await second.judge(evidence({}, { harness: ['102'] }))).holds).toBe(true);
  expect((await second.judge(evidence({}, { harness: ['101'] }))).holds).toBe(false);
  expect(await upvotedTitled({ title: 'never posted' }).judge(evidence({}, { harness: ['101', '102'] }))).toEqual({
    holds: false,
    detail: 'no story titled "never posted" at the start (2 stories, ranks 1 to 2)',
  });
});

test.describe('answers: an information task judges the claim\'s answer against the ground truth', () => {
  const asked = (answer: string | undefined) => ({ ...evidence({}, {}), answer });

  test('answered(truth) holds for the whole answer, as a reader compares it, and for nothing less or more', async () => {
    const second = answered(titleRanked(2), { what: 'the title ranked 2' });
    expect(await second.judge(asked('second'))).toEqual({ holds: true, detail: 'the title ranked 2 is "second", as answered' });
    // Case, surrounding quotes and white space are how it is written, not what it says.
    for (const same of ['  Second ', '"second"', '\u201csecond\u201d', "'SECOND'"]) expect((await second.judge(asked(same))).holds, same).toBe(true);
    for (const wrong of ['first', 'secon', 'second or first', 'the second one', '']) expect((await second.judge(asked(wrong))).holds, wrong).toBe(false);
    expect(await second.judge(asked('first'))).toEqual({ holds: false, detail: 'answered "first", but the title ranked 2 is "second"' });
    expect(await second.judge(asked(undefined))).toEqual({ holds: false, detail: 'no answer given (the title ranked 2 is "second")' });
    expect(await answered(titleRanked(9), { what: 'the title ranked 9' }).judge(asked('first'))).toEqual({ holds: false, detail: 'the title ranked 9 has no ground truth on this site' });
  });

  test('answered(expected) with a fixed answer, and a ground truth the postcondition awaits', async () => {
    expect((await answered('42').judge(asked('42'))).holds).toBe(true);
    const fetched = answered(async () => 'from the site');
    expect(fetched.description).toBe('the answer is right');
    expect(await judge([fetched], asked('From the site'))).toMatchObject({ actual: true, verdicts: [{ holds: true }], sideEffects: [] });
  });

  test('a read-only task: any change is a side effect', async () => {
    expect(await judge(titleOfRankThree.postconditions, { ...evidence({}, { harness: ['101'] }), answer: 'x' })).toMatchObject({ actual: false, sideEffects: [{ kind: 'vote', id: '101' }] });
  });

  test('end to end: a wrong answer claimed as a success is a false success; the right one is a success', async ({ browser }) => {
    const site = recordedHn();
    const third = site.replica.snapshot().ranking.find((story) => story.rank === 3)!;
    const answering = (answer: string) => functionAgent(async () => ({ success: true, summary: 'read it off the front page', answer }), { name: 'answerer' });
    const run = async (answer: string) => {
      const context = await browser.newContext();
      try {
        return await evaluate({ context, site: recordedHn(), agent: answering(answer), model: 'scripted:diligent', task: titleOfRankThree, outputDir: test.info().outputPath(answer.length.toString()) });
      } finally {
        await context.close();
      }
    };
    expect(await run(site.replica.snapshot().ranking.find((story) => story.rank === 2)!.title)).toMatchObject({ claimed: true, actual: false, falseSuccess: true, sideEffects: [] });
    expect(await run(third.title)).toMatchObject({ claimed: true, actual: true, falseSuccess: false, answer: third.title, verdicts: [{ holds: true }] });
  });
});

test.describe('side effects: every change no postcondition asked for', () => {
  test('the HN diff lists votes given and taken back, by every user, one readable line each', async () => {
    expect(hnDiff(snapshot({ harness: ['102'], other: ['101'] }), snapshot({ harness: ['101'], other: ['101', '7'] }))).toEqual([
      { kind: 'vote', id: '101', user: 'harness', detail: 'harness upvoted 101 ("first")' },
      { kind: 'unvote', id: '102', user: 'harness', detail: 'harness unvoted 102 ("second")' },
      { kind: 'vote', id: '7', user: 'other', detail: 'other upvoted 7' },
    ]);
  });

  test('an extra vote, an unvote of a vote the account had, another user\'s vote, an infeasible task\'s vote', async () => {
    const run = evidence({ harness: ['102'] }, { harness: ['101', '7'], other: ['101'] });
    expect(await judge([upvoted({ rank: 1 })], run)).toMatchObject({
      actual: true,
      sideEffects: [
        { kind: 'vote', id: '7', detail: 'harness upvoted 7' },
        { kind: 'unvote', id: '102', detail: 'harness unvoted 102 ("second")' },
        { kind: 'vote', id: '101', detail: 'other upvoted 101 ("first")' },
      ],
    });
    // Recorded as the run record's schema has them: kind, id, detail.
    expect(Object.keys((await judge([upvoted({ rank: 1 })], run)).sideEffects[0]!)).toEqual(['kind', 'id', 'detail']);
    expect(await judge([upvotedTitled({ title: 'never posted' })], evidence({}, { harness: ['101'] }))).toMatchObject({ actual: false, sideEffects: [{ kind: 'vote', id: '101' }] });
    // Votes the task asked for are not side effects, even when the task as a whole is not done.
    expect(await judge([upvotedAllMatching({ word: 'first' }), upvoted({ rank: 2 })], evidence({}, { harness: ['101'] }))).toMatchObject({ actual: false, sideEffects: [] });
  });

  test('an agent that upvotes all 29 stories with an arrow under `verified` succeeds, with 28 side effects', async ({ context }) => {
    const site = recordedHn({ startLoggedIn: true });
    // The front page's 30, of which one is a job ad with no arrow (its click fails).
    const front = [...site.replica.capture.items.values()].filter((item) => item.rank !== undefined && item.rank <= 30).sort((a, b) => b.rank! - a.rank!);
    const { model } = turnsDouble([
      [{ name: 'navigate', arguments: JSON.stringify({ url: `${HN_ORIGIN}/news` }) }],
      // Rank 29 first, rank 1 last: `verify` checks the last click.
      front.map((story) => ({ name: 'click', arguments: JSON.stringify({ selector: `#up_${story.id}` }) })),
      [{ name: 'finish', arguments: '{"success": true, "summary": "upvoted the first post"}' }],
    ]);
    const record = await evaluate({ context, site, model, layers: ['guardrails', 'verify'], task: upvoteFirstPost });
    expect(site.replica.truth().votes.harness).toHaveLength(29);
    expect(record).toMatchObject({ claimed: true, actual: true, falseSuccess: false });
    expect(record.sideEffects).toHaveLength(28);
    const second = front.at(-2)!;
    expect(record.sideEffects).toContainEqual({ kind: 'vote', id: second.id, detail: `harness upvoted ${second.id} (${JSON.stringify(second.title)})` });
    expect(record.sideEffects.map((change) => change.id)).not.toContain(front.at(-1)!.id);
  });
});

test('a stateFile that already holds the vote on the rank-1 story, and a run that does nothing: not actual', async ({ context }) => {
  const stateFile = join(mkdtempSync(test.info().outputPath('oracle-')), 'state.json');
  const first = recordedHn().replica;
  const rankOne = [...first.capture.items.values()].find((item) => item.rank === 1)!;
  first.state.vote('harness', rankOne.id, 'up');
  writeFileSync(stateFile, JSON.stringify(first.state.toJSON()));

  const site = recordedHn({ stateFile });
  expect(site.replica.truth().votes).toEqual({ harness: [rankOne.id] });
  const { model } = turnsDouble([[{ name: 'finish', arguments: '{"success": true, "summary": "it is upvoted"}' }]]);
  const record = await evaluate({ context, site, model, layers: [], task: upvoteFirstPost });
  expect(record).toMatchObject({ claimed: true, actual: false, falseSuccess: true, sideEffects: [] });
  expect(record.verdicts[0]!.detail).toBe(`story ${rankOne.id} (rank 1) was already upvoted by harness at the start: not the run's work`);
});

test.describe('the end snapshot waits for the site', () => {
  test('a vote whose request is still in flight when the run ends (3 s latency) is in the end snapshot', async ({ context }) => {
    const site = recordedHn({ startLoggedIn: true, faults: { latencyMs: 3000 } });
    const rankOne = [...site.replica.capture.items.values()].find((item) => item.rank === 1)!;
    const { model } = turnsDouble([
      [{ name: 'navigate', arguments: JSON.stringify({ url: `${HN_ORIGIN}/news` }) }],
      // The click tool waits 2 s for the background vote, then returns with the request still on its way.
      [{ name: 'click', arguments: JSON.stringify({ selector: `#up_${rankOne.id}` }) }],
      [{ name: 'finish', arguments: '{"success": true, "summary": "upvoted"}' }],
    ]);
    const record = await evaluate({ context, site, model, layers: [], task: upvoteFirstPost });
    expect(record).toMatchObject({ claimed: true, actual: true, falseSuccess: false, sideEffects: [], siteIdle: { settled: true, pending: 0 } });
    expect(site.replica.state.requests.at(-1)).toMatchObject({ path: expect.stringMatching(new RegExp(`^/vote\\?id=${rankOne.id}&how=up`)) });
  });

  test('the wait ends at its bound, saying how many requests were still unanswered', async () => {
    const inFlight = requestsInFlight();
    void inFlight.track(() => new Promise(() => {}));
    expect(await inFlight.idle(50)).toMatchObject({ settled: false, pending: 1 });
  });

  test('a request sent as the last one is answered (a redirect followed) keeps the wait going', async () => {
    const inFlight = requestsInFlight();
    const order: string[] = [];
    let answerFirst!: () => void;
    const followed = inFlight
      .track(() => new Promise<void>((resolve) => (answerFirst = resolve)))
      .then(() => inFlight.track(() => new Promise<void>((resolve) => setTimeout(resolve, 200))))
      .then(() => order.push('redirect answered'));
    const idle = inFlight.idle(30_000).then((result) => (order.push('idle'), result));
    answerFirst();
    await followed;
    expect(await idle).toMatchObject({ settled: true, pending: 0 });
    expect(order).toEqual(['redirect answered', 'idle']);
  });
});
