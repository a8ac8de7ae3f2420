import { mkdtempSync } from 'node:fs';
import { test } from '@playwright/test';
import type { FullConfig, Suite, TestCase, TestResult } from '@playwright/test/reporter';
import HarnessReporter from '../src/playwright/reporter.ts';
import { EtaProgress, formatEta } from '../src/playwright/progress.ts';
import { expect } from './support.ts';

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
  const tests = Array.from({ length: 20 }, (_, index) => {
    const title = `test ${index}`;
    return { id: `t${index}`, title, titlePath: () => ['', 'p', 'a.spec.ts', title], parent: { project: () => ({ name: 'p' }) }, annotations: [], retries: 0, results: [{}], outcome: () => 'expected' } as unknown as TestCase;
  });
  const config = { configFile: undefined, rootDir: dir, reporter: [], shard: null, projects: [{ name: 'p' }], filteredProjects: [{ name: 'p' }], argv: [] } as unknown as FullConfig;
  const lines: string[] = [];
  const log = console.log;
  console.log = (line: string) => void lines.push(line);
  try {
    const reporter = new HarnessReporter({ outputDir: dir, history: 0 });
    reporter.onBegin(config, { allTests: () => tests } as unknown as Suite);
    for (const one of tests) reporter.onTestEnd(one, { status: 'passed', attachments: [], annotations: [], duration: 5, retry: 0 } as unknown as TestResult);
  } finally {
    console.log = log;
  }
  const estimates = lines.filter((line) => line.startsWith('harness-eval: ') && line.includes(' · ETA '));
  expect(estimates.map((line) => line.replace(/ETA .*/, 'ETA …'))).toEqual([2, 4, 6, 8, 10, 12, 14, 16, 18].map((finished) => `harness-eval: ${finished}/20 tests · ETA …`));
  expect(lines.indexOf(estimates[0]!)).toBe(lines.findIndex((line) => line.startsWith('[2/20')) + 1);
});
