import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from '@playwright/test';
import { collect, playwright, readSummary, workspace } from './playwright-child.ts';
import { expect } from './support.ts';

/**
 * A `maxCost` budget over a child run of 8 priced runs in 2 workers (tests/fixtures/budget/): every
 * model call holds its worst case against it first, so what the runs cost stays within it; once a
 * call was refused for it (its run ends `limit`, counted), or it could not hold a call as large as
 * one it held, no further run starts. The tests it stops are skipped as not run, "budget spent",
 * never failed, in no cell and no rate; the summary says the matrix is incomplete and why; the run
 * ends on its own, report written.
 */
test.describe.configure({ timeout: 300_000 });

const config = 'tests/fixtures/budget/playwright.config.ts';

test('a maxCost budget stops the matrix cleanly: the rest is not run, "budget spent", never a failure, and the run is incomplete', async () => {
  const { dir, env } = workspace('harness-eval-budget-');
  // A run of the diligent double costs about $0.0063 at these prices, and each of its calls holds about $0.013 (its prompt at a token a byte, 4,096 tokens out).
  const child = await playwright(['test', '-c', config], { ...env, MAX_COST: '0.03' });
  // It ends on its own, with its report (whether an incomplete run's exit status is 0 is the verdict's, not the budget's).
  expect(child.code, child.stdout).not.toBeNull();
  expect(child.stdout).not.toMatch(/Error:|TypeError|at .*\.ts:\d+/);
  const summary = readSummary(env.REPORT_DIR);
  const results = collect(JSON.parse(readFileSync(env.JSON_OUT, 'utf8')));
  const skipped = results.filter(({ result }) => result.status === 'skipped');
  expect(summary.recorded, child.stdout).toBeGreaterThanOrEqual(2);
  expect(summary.recorded, child.stdout).toBeLessThan(8);
  expect(results.filter(({ result }) => result.status === 'passed')).toHaveLength(summary.recorded);
  expect(skipped).toHaveLength(8 - summary.recorded);
  expect(results.some(({ result }) => result.status === 'failed')).toBe(false);
  // Held, the budget is never passed; a run it cut ends `limit`, named. The run left alone once one is cut always completes,
  // so at least one whole run's cost is spent (how many more depends on how the 2 workers' calls interleave).
  expect(summary.totals.cost).toBeGreaterThan(0.006);
  expect(summary.totals.cost).toBeLessThanOrEqual(0.03);
  // Never counted in a rate: the cell has the runs that ran.
  expect(summary.cells.map((cell) => cell.runs)).toEqual([summary.recorded]);
  expect(summary.totals.runs).toBe(summary.recorded);
  expect(summary).toMatchObject({ complete: false, planned: 8, missing: [] });
  expect(summary.notRun).toHaveLength(8 - summary.recorded);
  for (const test of summary.notRun!) expect(test.reason).toMatch(/^budget spent: \$0\.0\d{3} of maxCost \$0\.0300: (a call's worst case did not fit|too little for a call as large as one it held) \(\$0\.0\d{3}\)$/);
  expect(summary.partial!.shortfall).toContain(`${8 - summary.recorded} runs not started: budget spent`);
  expect(child.stdout).toContain(`harness-eval: ⚠ incomplete: ${summary.recorded} of 8 planned runs recorded`);
  expect(child.stdout).not.toMatch(/✓ .*passed/);
  // Partial: out of the history, never a baseline.
  expect(existsSync(join(env.REPORT_DIR, 'history'))).toBe(false);
  expect(readFileSync(join(env.REPORT_DIR, 'summary.md'), 'utf8')).toContain('runs not started: budget spent');
  expect(readFileSync(join(dir, 'reports', 'index.html'), 'utf8')).toContain('runs not started: budget spent');
});

test('a budget of 0 fails each test in one line, before any run starts', async () => {
  const { env } = workspace('harness-eval-budget-zero-');
  const child = await playwright(['test', '-c', config, '-g', 'upvote 1$'], { ...env, MAX_COST: '0' });
  expect(child.code).toBe(1);
  const [only] = collect(JSON.parse(readFileSync(env.JSON_OUT, 'utf8')));
  expect(only!.result.status).toBe('failed');
  expect(only!.result.errors.map((error: { message: string }) => error.message)).toEqual(['InputError: harness-eval options: maxCost: must be more than 0 (USD)']);
  expect(readSummary(env.REPORT_DIR).recorded).toBe(0);
});
