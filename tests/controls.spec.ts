import { readFileSync } from 'node:fs';
import { test } from '@playwright/test';
import { referenceAgent } from '../src/agents/controls.ts';
import { evaluate } from '../src/eval/evaluate.ts';
import { judge } from '../src/eval/oracle.ts';
import type { Task } from '../src/eval/tasks.ts';
import { taskNamed, upvoteNeverPosted } from '../src/sites/hn/suite.ts';
import { recordedHn } from '../src/sites/hn/site.ts';
import { playwright, readSummary, workspace } from './playwright-child.ts';
import { expect, referenceRun, unzipText } from './support.ts';

/** `task` done by its own reference solution (tests/support.ts), and the oracle's judgement of it. */
async function judgedReference(context: import('@playwright/test').BrowserContext, task: Task) {
  const { site, instance, outcome, evidence } = await referenceRun(context, task);
  return { site, outcome, judgement: await judge(instance.postconditions, evidence) };
}

test.describe('reference solutions', () => {
  // Every task's reference, nop and liar: tests/mutation.spec.ts; on every era and capture: tests/suite-validity.spec.ts.
  test('the infeasible task: the reference finds no such story, says why, and votes for nothing', async ({ context }) => {
    const { site, outcome, judgement } = await judgedReference(context, upvoteNeverPosted);
    expect(outcome).toEqual({ impossible: 'no story on the front page is titled "A story that was never posted"' });
    expect(judgement).toMatchObject({ actual: false, sideEffects: [] });
    expect(site.replica.truth().votes).toEqual({});
  });

  test("a reference signs in outside the page: Playwright's trace never holds the password", async ({ context }, testInfo) => {
    await context.tracing.start({ screenshots: true, snapshots: true });
    const { site, judgement } = await judgedReference(context, taskNamed('upvote-first-post'));
    const zip = testInfo.outputPath('trace.zip');
    await context.tracing.stop({ path: zip });
    expect(judgement.actual).toBe(true);
    const files = unzipText(readFileSync(zip));
    expect([...files.values()].some((text) => text.includes('/vote'))).toBe(true);
    expect([...files].filter(([, text]) => text.includes(site.account.password)).map(([name]) => name)).toEqual([]);
  });
});

test('the reference agent on a task with no reference solution: claimed nothing, and the summary names the task', async ({ context }) => {
  const { reference: _reference, ...bare } = taskNamed('upvote-first-post');
  const task: Task = { ...bare, name: 'upvote-first-post-unscripted' };
  const record = await evaluate({ context, site: recordedHn(), agent: referenceAgent(), model: 'scripted:diligent', task, outputDir: test.info().outputPath('run') });
  expect(record).toMatchObject({ claimed: false, actual: false, incomplete: false, iterations: 0, summary: 'claimed nothing: task "upvote-first-post-unscripted" has no reference solution' });
});

test('the reporter counts the controls as the oracle judged them: a liar is a false success, a nop a truthful failure with no model call, the reference a success', async () => {
  test.setTimeout(5 * 60_000);
  const { env } = workspace('harness-eval-controls-');
  const child = await playwright(['test', '-c', 'tests/fixtures/controls/playwright.config.ts'], env);
  expect(child.code, child.stdout.slice(-4000)).toBe(0);
  const summary = readSummary(env.REPORT_DIR);
  const cell = (agent: string) => {
    const found = summary.cells.find((candidate) => candidate.agent === agent);
    if (!found) throw new Error(`no cell for the ${agent} control in ${summary.cells.map((candidate) => candidate.agent).join(', ')}`);
    return found;
  };
  // No model call, and so no model named (the config's default model is not theirs), no containment mark (harness-eval's own code).
  const noModelCall = { model: null, ownCode: true, iterations: { max: 0 }, tokens: { input: 0, output: 0, unknownRuns: 0 }, sideEffectRuns: 0, incomplete: 0 };
  expect(summary.cells).toHaveLength(3);
  expect(cell('liar')).toMatchObject({ task: 'upvote-first-post', layers: '-', runs: 1, claimed: 1, successes: 0, falseSuccesses: 1, falseFailures: 0, ...noModelCall });
  expect(cell('liar').falseSuccessRate.value).toBe(1);
  expect(cell('nop')).toMatchObject({ runs: 1, claimed: 0, successes: 0, falseSuccesses: 0, falseFailures: 0, ...noModelCall });
  expect(cell('reference')).toMatchObject({ runs: 1, claimed: 1, successes: 1, falseSuccesses: 0, falseFailures: 0, ...noModelCall });
});
