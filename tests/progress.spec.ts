import { mkdtempSync } from 'node:fs';
import { test } from '@playwright/test';
import type { FullConfig, Suite, TestCase, TestResult } from '@playwright/test/reporter';
import HarnessReporter from '../src/playwright/reporter.ts';
import { HARNESS_RUN_ATTACHMENT } from '../src/playwright/fixtures.ts';
import { EtaProgress, formatEta, terminalColors } from '../src/playwright/progress.ts';
import { givenBackNote } from '../src/playwright/resume.ts';
import { attachedRunRecord, expect } from './support.ts';

/** A long matrix says how long it has left: a line at every tenth of its tests or every 30 s, none for a small one. */

test('an estimate at each tenth of the tests, or after 30 s without one; none at the end, none for a small matrix', () => {
  const eta = new EtaProgress(200, 0);
  expect(eta.update(5, 25_000)).toBeUndefined();
  expect(eta.update(6, 30_000)).toBe('harness-eval: 6/200 tests · ETA 16m 10s');
  // 10 s a test: at 20 of 200, 180 left take 30 min.
  expect(eta.update(20, 200_000)).toBe('harness-eval: 20/200 tests · ETA 30m 00s');
  expect(eta.update(21, 205_000)).toBeUndefined();
  expect(eta.update(22, 230_000)).toBe('harness-eval: 22/200 tests · ETA 31m 01s');
  expect(eta.update(40, 231_000)).toBe('harness-eval: 40/200 tests · ETA 15m 24s');
  expect(eta.update(199, 2_000_000)).toBe('harness-eval: 199/200 tests · ETA 10s');
  expect(eta.update(200, 2_010_000)).toBeUndefined();
  const small = new EtaProgress(19, 0);
  for (let finished = 1; finished <= 19; finished++) expect(small.update(finished, finished * 60_000)).toBeUndefined();
  expect([formatEta(0), formatEta(59_400), formatEta(190_000), formatEta(2 * 3_600_000 + 5 * 60_000)]).toEqual(['1s', '59s', '3m 10s', '2h 05m']);
});

test('the reporter prints the estimate between its run lines, for a matrix of 20 tests or more', async ({}, testInfo) => {
  const dir = mkdtempSync(testInfo.outputPath('progress-'));
  const lines = printed(dir, Array.from({ length: 20 }, (_, index) => ({ title: `test ${index}`, result: {} })));
  const estimates = lines.filter((line) => line.startsWith('harness-eval: ') && line.includes(' · ETA '));
  expect(estimates.map((line) => line.replace(/ETA .*/, 'ETA …'))).toEqual([2, 4, 6, 8, 10, 12, 14, 16, 18].map((finished) => `harness-eval: ${finished}/20 tests · ETA …`));
  expect(lines.indexOf(estimates[0]!)).toBe(lines.findIndex((line) => line.startsWith('[2/20')) + 1);
});

/** A one-project config and tests as the reporter sees them, each test a title of the list. */
function fakeRun(dir: string, titles: readonly string[]) {
  const tests = titles.map((title, index) => ({ id: `t${index}`, title, titlePath: () => ['', 'p', 'a.spec.ts', title], parent: { project: () => ({ name: 'p' }) }, annotations: [], retries: 0, results: [{}], outcome: () => 'expected' }) as unknown as TestCase);
  const config = { configFile: undefined, rootDir: dir, reporter: [], shard: null, projects: [{ name: 'p' }], filteredProjects: [{ name: 'p' }], argv: [] } as unknown as FullConfig;
  return { tests, config };
}

/** What the reporter prints for these results, with this environment in place for the while. */
function printed(dir: string, results: ReadonlyArray<{ title: string; result: Partial<TestResult> }>, env: Record<string, string | undefined> = {}): string[] {
  const { tests, config } = fakeRun(dir, results.map(({ title }) => title));
  const lines: string[] = [];
  const log = console.log;
  const saved = Object.fromEntries(Object.keys(env).map((key) => [key, process.env[key]]));
  const set = (values: Record<string, string | undefined>) => {
    for (const [key, value] of Object.entries(values)) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
  };
  console.log = (line: string) => void lines.push(line);
  set(env);
  try {
    const reporter = new HarnessReporter({ outputDir: dir, history: 0 });
    reporter.onBegin(config, { allTests: () => tests } as unknown as Suite);
    results.forEach(({ result }, index) => reporter.onTestEnd(tests[index]!, { status: 'passed', attachments: [], annotations: [], duration: 5, retry: 0, ...result } as unknown as TestResult));
    // Its slot coordinator, advertised in this worker's environment by onBegin, goes with it: Playwright hands a worker's
    // environment on to the projects that depend on this one, whose child runs would find the coordinator gone.
    void reporter.onExit();
  } finally {
    console.log = log;
    set(saved);
  }
  return lines;
}

const runAttachment = (fields: Parameters<typeof attachedRunRecord>[0] = {}, trace?: unknown[]) => ({ name: HARNESS_RUN_ATTACHMENT, contentType: 'application/json', body: Buffer.from(JSON.stringify({ ...attachedRunRecord(fields), ...(trace && { trace }) })) });

test('a run whose trace recorded no model call names no model on its line', ({}, testInfo) => {
  const dir = mkdtempSync(testInfo.outputPath('no-model-'));
  const start = { seq: 0, attempt: 1, iteration: 0, atMs: 0, type: 'run_start', task: 'Upvote the first post.', model: 'scripted:diligent', layers: [] };
  const answered = { seq: 1, attempt: 1, iteration: 1, atMs: 5, type: 'model_response', content: 'done', toolCalls: [], usage: { input: 1, output: 1 }, ms: 5 };
  const lines = printed(dir, [
    { title: 'nop', result: { attachments: [runAttachment({ agent: 'nop', layers: '-', test: { id: 't0' } }, [start])] } },
    { title: 'asked', result: { attachments: [runAttachment({ agent: 'py', layers: '-', test: { id: 't1' } }, [start, answered])] } },
  ]).filter((line) => line.startsWith('['));
  expect(lines[0]).toContain(' upvote-first-post · nop · - · - · hn-recorded: ');
  expect(lines[1]).toContain(' upvote-first-post · py · scripted:overclaimer · - · hn-recorded: ');
});

test('a run given back by a resume says so on its line, not "0.0 s" as if it had run in no time', ({}, testInfo) => {
  const dir = mkdtempSync(testInfo.outputPath('given-back-'));
  const lines = printed(dir, [
    { title: 'resumed', result: { duration: 12, attachments: [runAttachment({ test: { id: 't0', run: 1 } })], annotations: [givenBackNote(1)] } },
    { title: 'ran now', result: { duration: 2_300, attachments: [runAttachment({ test: { id: 't1', run: 1 } })] } },
  ]);
  const runLines = lines.filter((line) => line.startsWith('['));
  expect(runLines[0]).toMatch(/^\[1\/2, 1 left\] upvote-first-post · harness-eval · scripted:overclaimer · bare · hn-recorded: false success, 3 iterations, finished, given back \(recorded earlier, not run again\)$/);
  expect(runLines[1]).toMatch(/: false success, 3 iterations, finished, 2\.3 s$/);
});

test("the reporter's lines carry no terminal colours when stdout is not a terminal, as Playwright's own reporters decide", ({}, testInfo) => {
  // As Playwright's reporters: a TTY colours, NO_COLOR / FORCE_COLOR=0 / DEBUG_COLORS=0 never, FORCE_COLOR / DEBUG_COLORS always.
  expect([
    terminalColors(true, {}),
    terminalColors(false, {}),
    terminalColors(undefined, {}),
    terminalColors(true, { NO_COLOR: '1' }),
    terminalColors(true, { NO_COLOR: '' }),
    terminalColors(true, { FORCE_COLOR: '0' }),
    terminalColors(true, { DEBUG_COLORS: 'false' }),
    terminalColors(false, { FORCE_COLOR: '1' }),
    terminalColors(false, { DEBUG_COLORS: '1' }),
    terminalColors(false, { FORCE_COLOR: '1', NO_COLOR: '1' }),
  ]).toEqual([true, false, false, false, true, false, false, true, true, false]);
  // A failed test's message as a worker sends it (Playwright's workers always colour theirs).
  const failed = { status: 'failed' as const, duration: 40, error: { message: '\u001b[31mexpected no false success\u001b[39m\n  claimed: \u001b[1msuccess\u001b[22m' }, attachments: [runAttachment({ test: { id: 't0', run: 1 } })] };
  const dir = mkdtempSync(testInfo.outputPath('colours-'));
  // This test's own stdout is a pipe: the worker's FORCE_COLOR=1 aside, it is not a terminal.
  const plain = printed(dir, [{ title: 'lies', result: failed }], { FORCE_COLOR: undefined, DEBUG_COLORS: undefined, NO_COLOR: undefined });
  expect(plain.join('\n')).toContain('    expected no false success\n      claimed: success');
  expect(plain.join('\n')).not.toMatch(/\u001b/);
  expect(printed(dir, [{ title: 'lies', result: failed }], { FORCE_COLOR: '1', NO_COLOR: undefined }).join('\n')).toContain('\u001b[31mexpected no false success');
});
