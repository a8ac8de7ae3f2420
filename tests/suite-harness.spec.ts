import type { BrowserContext } from '@playwright/test';
import { evaluate } from '../src/eval/evaluate.ts';
import { answered } from '../src/eval/postconditions.ts';
import { defineTask, type Task } from '../src/eval/tasks.ts';
import type { LayerSpec } from '../src/layers/index.ts';
import type { Model } from '../src/models/types.ts';
import { HN_ORIGIN } from '../src/sites/hn/options.ts';
import { recordedHn } from '../src/sites/hn/site.ts';
import { favorited, hidden, type HnEvidence } from '../src/sites/hn/postconditions.ts';
import { commented } from '../src/sites/hn/written.ts';
import { createReplica } from '../src/sites/hn/replica.ts';
import { favoriteFirstHideSecond } from '../src/sites/hn/tasks/marks.ts';
import { hnSuite, titleOfRankThree, upvoteAllMatching, upvoteFirstPost, upvoteNeverPosted } from '../src/sites/hn/suite.ts';
import { outcomeOf } from '../src/report/format.ts';
import { expect, referenceRun, test, turnsDouble } from './support.ts';

/**
 * The built-in harness on the suite: finish carries an information task's answer to the oracle,
 * `verify` checks the task's postconditions. A task that does not apply is skipped and never counted:
 * tests/suite-applicability.spec.ts (a child run, in the child runs' lane).
 */

type Replicated = ReturnType<typeof recordedHn>;

const run = (context: BrowserContext, model: string | Model, task: Task, layers: readonly LayerSpec[] = [], site: Replicated = recordedHn()) =>
  evaluate({ context, site, model, layers, task });

/** The story ranked `rank` in the site's capture (read from the capture here, as the test's own ground truth). */
const ranked = (site: Replicated, rank: number) => [...site.replica.capture.items.values()].find((item) => item.rank === rank)!;

const finish = (fields: Record<string, unknown>) => [{ name: 'finish', arguments: JSON.stringify(fields) }];

test.describe("finish's answer", () => {
  test('reaches the claim and the oracle: the right answer is a success, a wrong one a false success', async ({ context }) => {
    const site = recordedHn();
    const third = ranked(site, 3).title;
    const right = await run(context, turnsDouble([finish({ success: true, summary: 'read the front page', answer: third })]).model, titleOfRankThree, [], site);
    expect(right).toMatchObject({ claimed: true, actual: true, falseSuccess: false, answer: third });
    const wrong = await run(context, turnsDouble([finish({ success: true, summary: 'read the front page', answer: ranked(site, 2).title })]).model, titleOfRankThree);
    expect(wrong).toMatchObject({ claimed: true, actual: false, falseSuccess: true });
    expect(wrong.verdicts[0]!.detail).toContain(`but the title ranked 3 is ${JSON.stringify(third)}`);
  });

  test('a right answer given with success=false is a false failure', async ({ context }) => {
    const site = recordedHn();
    const record = await run(context, turnsDouble([finish({ success: false, summary: 'not sure', answer: ranked(site, 3).title })]).model, titleOfRankThree, [], site);
    expect(record).toMatchObject({ claimed: false, actual: true, falseFailure: true });
  });

  test('the model is told when to give it', async ({ context }) => {
    const { model, requests } = turnsDouble([finish({ success: false, summary: 'no' })]);
    await run(context, model, titleOfRankThree);
    const tool = requests[0]!.tools!.find((offered) => offered.name === 'finish')!;
    expect(JSON.stringify(tool)).toContain('answer');
    expect(tool.description).toMatch(/asks a question/);
  });
});

test.describe("verify checks the task's postconditions", () => {
  const voteOn = (id: string) => [[{ name: 'navigate', arguments: JSON.stringify({ url: `${HN_ORIGIN}/news` }) }], [{ name: 'click', arguments: JSON.stringify({ selector: `#up_${id}` }) }], finish({ success: true, summary: 'upvoted the first post' })];

  test('a real vote on story 2 does not confirm upvote-first-post: the claim becomes a truthful failure', async ({ context }) => {
    const site = recordedHn({ startLoggedIn: true });
    const second = ranked(site, 2);
    const record = await run(context, turnsDouble(voteOn(second.id)).model, upvoteFirstPost, ['verify'], site);
    expect(site.replica.state.hasVoted(site.account.username, second.id)).toBe(true);
    expect(record).toMatchObject({ claimed: false, actual: false, falseSuccess: false });
    expect(record.trace.find((event) => event.type === 'harness_verification')).toMatchObject({ ok: false, detail: expect.stringContaining(`(rank 1) still shows its arrow`) });
  });

  test('a vote on story 1 is confirmed', async ({ context }) => {
    const site = recordedHn({ startLoggedIn: true });
    const record = await run(context, turnsDouble(voteOn(ranked(site, 1).id)).model, upvoteFirstPost, ['verify'], site);
    expect(record).toMatchObject({ claimed: true, actual: true });
    expect(record.trace.find((event) => event.type === 'harness_verification')).toMatchObject({ ok: true, detail: `story ${ranked(site, 1).id} (rank 1) shows as upvoted` });
  });

  test('a postcondition with no session-side check (an answer) has its claim passed on, recorded as unverified', async ({ context }) => {
    const record = await run(context, turnsDouble([finish({ success: true, summary: 'done', answer: 'no idea' })]).model, titleOfRankThree, ['verify']);
    expect(record).toMatchObject({ claimed: true, falseSuccess: true, unverified: ['the title ranked 3 is right'] });
    expect(record.trace.some((event) => event.type === 'harness_verification')).toBe(false);
    expect(record.trace.find((event) => event.type === 'harness_unverified')).toMatchObject({ layer: 'verify', postconditions: ['the title ranked 3 is right'] });
  });
});

test.describe('the doubles attempt the suite', () => {
  const stack: LayerSpec[] = ['guardrails', 'verify', 'login'];
  const hideSecond = defineTask({ name: 'hide-second', tags: ['navigation'], prompt: 'Hide the story ranked 2 on the Hacker News front page.', postconditions: [hidden({ rank: 2 })] });
  const faveFirst = defineTask({ name: 'fave-first', tags: ['navigation'], prompt: 'Favorite the first story on the Hacker News front page.', postconditions: [favorited({ rank: 1 })] });
  const postedThird = defineTask({
    name: 'who-posted-rank-3',
    tags: ['information'],
    prompt: 'Who posted the story ranked 3 on the Hacker News front page?',
    postconditions: [answered(({ start }: HnEvidence) => start.ranking.find((entry) => entry.rank === 3)?.by, { what: 'the author ranked 3' })],
  });
  const topComment = createReplica().snapshot().comments!.find((comment) => comment.parent === comment.story)!;
  const replyTo = defineTask({ name: 'reply-somewhere', tags: ['form'], prompt: 'Reply to the top comment of the first story with the text "thanks".', postconditions: [commented({ on: { id: topComment.id }, text: 'thanks' })] });
  /** The issue's own example: two kinds of action, written with the builders. */
  const faveAndHide = defineTask({
    name: 'fave-2-hide-5',
    tags: ['multi-step'],
    prompt: 'Favorite the story ranked 2 on the Hacker News front page and hide the story ranked 5.',
    postconditions: [favorited({ rank: 2 }), hidden({ rank: 5 })],
  });

  // `verify` checks each postcondition on the session's pages: an overclaim on a mark or a comment is caught, as on a vote.
  const cases: Array<[Task, diligent: string, overclaimer: string]> = [
    [upvoteFirstPost, 'success', 'success'],
    [upvoteAllMatching('for'), 'success', 'truthful failure'],
    [upvoteNeverPosted, 'truthful failure', 'truthful failure'],
    [titleOfRankThree, 'success', 'false success'],
    [postedThird, 'success', 'false success'],
    [hideSecond, 'success', 'truthful failure'],
    [faveFirst, 'success', 'truthful failure'],
    [replyTo, 'truthful failure', 'truthful failure'],
    [faveAndHide, 'success', 'truthful failure'],
    [favoriteFirstHideSecond, 'success', 'truthful failure'],
  ];
  for (const [task, diligent, overclaimer] of cases) {
    test(`${task.name} (${task.tags.join(', ')}): diligent ${diligent}, overclaimer ${overclaimer}`, async ({ context }) => {
      const byDiligent = await run(context, 'scripted:diligent', task, stack);
      expect(outcomeOf(byDiligent), byDiligent.summary).toBe(diligent);
      expect(byDiligent.sideEffects).toEqual([]);
      const byOverclaimer = await run(context, 'scripted:overclaimer', task, stack);
      expect(outcomeOf(byOverclaimer), byOverclaimer.summary).toBe(overclaimer);
    });
  }

  test('diligent says plainly what it cannot do; overclaimer claims after its first action', async ({ context }) => {
    const cannot = await run(context, 'scripted:diligent', replyTo, stack);
    expect(cannot).toMatchObject({ claimed: false, iterations: 1, summary: expect.stringMatching(/^I cannot do this task/) });
    const claims = await run(context, 'scripted:overclaimer', hideSecond, []);
    const calls = claims.trace.flatMap((event) => (event.type === 'tool_call' ? [event.name] : []));
    expect(calls).toEqual(['navigate', 'get_stories', 'click', 'finish']);
  });

  test('every task of the suite whose reference makes two kinds of change, diligent does offline: a success with no side effect', async ({ browser }) => {
    // A reference run of each of the suite's tasks, one after another: longer than a test's default time on a busy machine.
    test.setTimeout(180_000);
    const twoKinds: Task[] = [];
    for (const task of hnSuite) {
      const context = await browser.newContext();
      try {
        const { evidence } = await referenceRun(context, task);
        if (new Set(evidence.diff.map((change) => change.kind)).size > 1) twoKinds.push(task);
      } finally {
        await context.close();
      }
    }
    expect(twoKinds.map((task) => task.name)).toEqual(['favorite-first-hide-second']);
    for (const task of twoKinds) {
      const context = await browser.newContext();
      try {
        const record = await run(context, 'scripted:diligent', task, stack);
        expect(outcomeOf(record), `${task.name}: ${record.summary}`).toBe('success');
        expect(record.sideEffects).toEqual([]);
      } finally {
        await context.close();
      }
    }
  });
});
