import { test } from '@playwright/test';
import { summarize } from '../src/report/summarize.ts';
import { countTrials, incompleteRun, parseRunAttachment, type Attempt, type TestRecord } from '../src/report/trials.ts';
import type { PlannedRun, AttachedRunRecord } from '../src/report/types.ts';
import { expect, attachedRunRecord } from './support.ts';

/** Trials from tests' attempts (src/report/trials.ts), without Playwright: the rules one by one. */

const origin = { id: 't1', title: 'upvote', project: 'p' };
const judged = (retry: number, fields: Partial<Omit<AttachedRunRecord, 'test'>> = {}, run = 1) => attachedRunRecord({ ...fields, test: { id: 't1', retry, run } });
const started = (retry: number, run = 1): PlannedRun => {
  const { task, agent, model, layers, site, condition, test: where } = judged(retry, {}, run);
  return { task, agent, model, layers, site, condition, test: where };
};
const attempt = (retry: number, parts: Partial<Attempt> = {}): Attempt => ({ retry, runs: [], starts: [], unreadable: [], ...parts });
const testOf = (status: TestRecord['status'], attempts: Attempt[], id = 't1'): TestRecord => ({ ...origin, id, status, attempts });

test('retries never add trials: the latest attempt that recorded a run is the one kept', () => {
  const trials = countTrials([
    testOf('passed', [attempt(0, { runs: [judged(0, { actual: false })] }), attempt(1, { runs: [judged(1, { actual: false })] }), attempt(2, { runs: [judged(2, { actual: true })] })]),
  ]);
  expect(trials).toMatchObject({ planned: 1, missing: [] });
  expect(trials.runs.map((run) => [run.test.retry, run.actual])).toEqual([[2, true]]);
});

test('a false success on a retried attempt stays with its trial: the rates count the last attempt, the gates every attempt', () => {
  const lie = { claimed: true, actual: false };
  const success = { claimed: true, actual: true };
  const trials = countTrials([
    testOf('passed', [attempt(0, { runs: [judged(0, lie)] }), attempt(1, { runs: [judged(1, lie)] }), attempt(2, { runs: [judged(2, success)] })]),
    testOf('passed', [attempt(0, { runs: [judged(0, { claimed: false, actual: false })] }), attempt(1, { runs: [judged(1, success)] })], 't2'),
  ]);
  expect(trials.runs.map((run) => [run.test.retry, run.falseSuccess, run.earlierFalseSuccesses])).toEqual([[2, false, 2], [1, false, undefined]]);
  const summary = summarize(trials.runs, { complete: true, gates: [{}, { maxFalseSuccessRate: 0.5 }, { maxFalseSuccessRate: 0.6 }] });
  expect(summary.cells[0]).toMatchObject({ runs: 2, falseSuccesses: 0, falseSuccessAttempts: 2, falseSuccessTrials: 1 });
  expect(summary.cells[0]!.falseSuccessRate.value).toBe(0);
  expect(summary.totals).toMatchObject({ falseSuccesses: 0, falseSuccessAttempts: 2 });
  // One trial of two lied: 0.5 breaches a limit of 0, holds at 0.5 and 0.6.
  expect(summary.gates!.breaches.map((breach) => [breach.gate, breach.rule])).toEqual([[0, 'false-success rate, retried attempts included, 0.50 > 0.00']]);
  // An attachment cannot claim the reporter's count of earlier lies for itself.
  expect(countTrials([testOf('passed', [attempt(0, { runs: [judged(0, { ...success, earlierFalseSuccesses: 3 })] })])]).runs[0]!.earlierFalseSuccesses).toBeUndefined();
});

test('a retry that died mid-run does not replace a run an earlier attempt recorded', () => {
  const trials = countTrials([testOf('failed', [attempt(0, { starts: [started(0)], runs: [judged(0)] }), attempt(1, { starts: [started(1)] })])]);
  expect(trials.runs.map((run) => [run.test.retry, run.incomplete])).toEqual([[0, false]]);
});

test('a run that started and never ended is an incomplete, unjudged run, left out of every rate: an error, or interrupted when its attempt was', () => {
  const trials = countTrials([testOf('failed', [attempt(0, { starts: [started(0)] })])]);
  expect(trials).toMatchObject({ planned: 1, missing: [] });
  const died = { reason: 'error', detail: 'the run never reported its end (its worker died, or its test ended before it was recorded): nothing is known of what the agent did' } as const;
  expect(trials.runs).toEqual([incompleteRun(started(0), died)]);
  expect(trials.runs[0]).toMatchObject({ claimed: false, actual: false, judged: false, incomplete: true, stopReason: 'error', iterations: 0, tokens: { input: null, output: null }, sideEffects: [], excluded: died });
  const stopped = countTrials([testOf('interrupted', [attempt(0, { interrupted: true, starts: [started(0)] })])]);
  expect(stopped.runs[0]!.excluded).toEqual({ reason: 'interrupted', detail: 'stopped by the interruption before its run ended' });
  // No rate counts them: the truthful failure the old count made of a crash is gone.
  expect(summarize(trials.runs, { complete: true }).cells[0]).toMatchObject({ runs: 0, errors: 1 });
});

test('a run an interruption cut short is interrupted, unless its record says why already; one that ended before it counts', () => {
  const cut = judged(0, { incomplete: true, stopReason: 'error' });
  const errored = judged(0, { incomplete: true, excluded: { reason: 'error', detail: 'python3: no such file' } }, 2);
  const done = judged(0, {}, 3);
  const trials = countTrials([testOf('interrupted', [attempt(0, { interrupted: true, runs: [cut, errored, done] })])]);
  expect(trials.runs.map((run) => run.excluded)).toEqual([{ reason: 'interrupted', detail: 'cut short by the interruption' }, { reason: 'error', detail: 'python3: no such file' }, undefined]);
});

test('a test plans as many trials as its distinct runs, and the missing ones are named', () => {
  const trials = countTrials([testOf('timedOut', [attempt(0, { starts: [started(0, 1), started(0, 2)], runs: [judged(0, {}, 1)] })])]);
  expect(trials.planned).toBe(2);
  expect(trials.runs.map((run) => [run.test.run, run.incomplete])).toEqual([[1, false], [2, true]]);
});

test('what plans nothing, and what is missing', () => {
  const trials = countTrials([
    testOf('skipped', [attempt(0)], 'skipped'),
    testOf('passed', [attempt(0)], 'plain'),
    testOf('failed', [attempt(0)], 'failed-before-its-run'),
    testOf('notRun', [], 'never-ran'),
    testOf('passed', [attempt(0, { unreadable: [1] })], 'unreadable'),
  ]);
  expect(trials.planned).toBe(3);
  expect(trials.missing.map((test) => test.id)).toEqual(['failed-before-its-run', 'never-ran', 'unreadable']);
});

test('an unreadable run is missing, not made up from its start', () => {
  for (const unreadable of [[1], [undefined]]) {
    const trials = countTrials([testOf('passed', [attempt(0, { starts: [started(0)], unreadable })])]);
    expect(trials).toMatchObject({ planned: 1, runs: [], missing: [origin] });
  }
});

test('token counts that are not finite non-negative numbers are unknown; the run is kept', () => {
  const { tokens: _tokens, ...run } = judged(0);
  for (const [input, output] of [['NaN', -5], [null, 1e400], ['12', { n: 1 }]]) {
    const parsed = parseRunAttachment(JSON.stringify({ ...run, tokens: { input, output } }), 'harness-run.json of "t"');
    expect(parsed).toEqual({ ok: true, value: { ...run, tokens: { input: null, output: null } } });
  }
  const bad = parseRunAttachment(JSON.stringify({ ...judged(0), claimed: 'yes' }), 'harness-run.json of "t"');
  expect(bad).toEqual({ ok: false, run: 1, error: 'harness-run.json of "t": claimed: Invalid input: expected boolean, received string' });
  expect(parseRunAttachment('{"claimed": tru', 'label')).toEqual({ ok: false, error: 'label: not a JSON object' });
});

test('an attachment made by hand is cut as the fixture cuts: claim, answer, verdicts, side effects and the trace behind the transcript', () => {
  const flood = 'x'.repeat(1_000_000);
  const note = '…[harness-eval: cut; 1,000,000 characters in all]';
  const run = {
    ...judged(0),
    summary: flood,
    answer: flood,
    verdicts: [{ description: flood, holds: false, detail: flood }],
    sideEffects: [{ kind: 'vote', id: '1', detail: flood }],
    trace: [{ seq: 1, atMs: 0, attempt: 1, iteration: 1, type: 'model_response', content: flood, toolCalls: [], usage: { input: 1, output: 1 }, ms: 1 }],
  };
  const parsed = parseRunAttachment(JSON.stringify(run), 'harness-run.json of "t"');
  if (!parsed.ok) throw new Error(parsed.error);
  const cut = `${'x'.repeat(4_000)}${note}`;
  expect([parsed.value.summary, parsed.value.answer, parsed.value.verdicts![0]!.description, parsed.value.verdicts![0]!.detail, parsed.value.sideEffects[0]!.detail]).toEqual([cut, cut, cut, cut, cut]);
  expect(parsed.value.transcript!.length).toBeLessThan(21_000);
  // Cut twice (the fixture, then the reporter), the note still gives the first length.
  expect(parseRunAttachment(JSON.stringify({ ...run, summary: cut }), 'label')).toMatchObject({ ok: true, value: { summary: cut } });
});

test('trials planned and never started (the worker died first) are missing, never dropped; a skipped test planned none', () => {
  // harness.trials(task, 4): runs 1 and 2 started, run 1 ended, then the worker died.
  const died = countTrials([testOf('failed', [attempt(0, { plans: [1, 2, 3, 4], starts: [started(0, 1), started(0, 2)], runs: [judged(0, {}, 1)] })])]);
  expect(died.planned).toBe(4);
  expect(died.runs.map((run) => [run.test.run, run.excluded?.reason])).toEqual([[1, undefined], [2, 'error']]);
  expect(died.missing).toEqual([origin]);
  expect(summarize(died.runs, { complete: true, planned: died.planned, missing: died.missing }).complete).toBe(false);
  // Its retry recorded all four: four trials, none missing.
  const retried = countTrials([testOf('passed', [attempt(0, { plans: [1, 2, 3, 4], starts: [started(0, 1)] }), attempt(1, { plans: [1, 2, 3, 4], runs: [1, 2, 3, 4].map((run) => judged(1, {}, run)) })])]);
  expect(retried).toMatchObject({ planned: 4, missing: [] });
  // Not applicable to its site, or the budget spent: skipped, no trial planned.
  expect(countTrials([testOf('skipped', [attempt(0, { plans: [1, 2, 3] })])])).toMatchObject({ planned: 0, missing: [] });
});
