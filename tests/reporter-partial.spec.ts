import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from '@playwright/test';
import type { FullConfig } from '@playwright/test/reporter';
import { baselineMismatch, readBaseline } from '../src/report/compare.ts';
import { verdictLines } from '../src/report/files.ts';
import { summarize } from '../src/report/summarize.ts';
import { selectionOf } from '../src/playwright/selection.ts';
import { playwright, readSummary, sharedRun, workspace as childWorkspace } from './playwright-child.ts';
import { expect, attachedRunRecord } from './support.ts';

/**
 * Baselines compare like with like: a summary says what part of the suite it ran (a shard, a
 * grep, a project, a file) and what it fell short of (interrupted, runs missing), and such a
 * summary is kept out of the history and out of every comparison with a whole run.
 */
test.describe.configure({ mode: 'parallel', timeout: 180_000 });

const config = (fields: Partial<FullConfig>): FullConfig => ({ shard: null, projects: [{ name: 'a' }, { name: 'b' }], filteredProjects: [{ name: 'a' }, { name: 'b' }], argv: [], ...fields }) as unknown as FullConfig;
const argv = (...args: string[]) => ['/usr/bin/node', '/x/node_modules/@playwright/test/cli.js', 'test', ...args];

test('the selection in words, from the config and the command line Playwright ran', () => {
  expect(selectionOf(config({ argv: argv('-c', 'playwright.config.ts', '--workers', '1', '--retries=2', '--repeat-each', '3', '--trace', 'on', '-x') }))).toEqual([]);
  expect(selectionOf(config({ shard: { current: 1, total: 2 }, filteredProjects: [{ name: 'a' }] as FullConfig['projects'] }))).toEqual(['shard 1/2', 'project a']);
  expect(selectionOf(config({ shard: { current: 1, total: 1 } }))).toEqual([]);
  // matrix()'s cells selected by name: a part of the matrix, never its baseline.
  expect(selectionOf(config({}), { HARNESS_CELLS: 'a · bare, b · bare' })).toEqual(['cells a · bare, b · bare']);
  expect(selectionOf(config({}), { HARNESS_CELLS: ' ' })).toEqual([]);
  expect(selectionOf(config({ argv: argv('-g', 'upvote', '--grep-invert=slow', '--project', 'a', 'b', '--last-failed') }))).toEqual(['grep upvote', 'grep-invert slow', 'last failed']);
  expect(selectionOf(config({ argv: argv('-c', 'x.config.ts', 'tests/a.spec.ts:12', '--workers', '2', 'b.spec.ts', '--', 'extra') }))).toEqual(['test filter tests/a.spec.ts:12 b.spec.ts']);
  expect(selectionOf(config({ argv: argv('--only-changed', '--test-list', 'list.txt') }))).toEqual(['only changed', 'test list list.txt']);
  expect(selectionOf(config({ argv: argv('--only-changed', 'main', '-gvote') }))).toEqual(['grep vote', 'only changed since main']);
  // merge-reports: no argv, no filtered projects; the merged shards are the whole suite.
  expect(selectionOf(config({ argv: undefined, filteredProjects: undefined }))).toEqual([]);
  expect(selectionOf(config({ argv: ['/usr/bin/node', 'cli.js', 'merge-reports', 'blobs'] }))).toEqual([]);
});

test('a partial summary is no baseline: one that fell short is refused in one line, one of another part is not compared', () => {
  const runs = [attachedRunRecord()];
  const whole = summarize(runs, { complete: true });
  const shard = summarize(runs, { complete: true, selection: ['shard 1/2'] });
  const interrupted = summarize(runs, { complete: false, planned: 2, stopped: 'interrupted' });
  expect(whole.partial).toBeUndefined();
  expect(shard.partial).toEqual({ selection: ['shard 1/2'], shortfall: [] });
  // As the reporter of one shard of several summarizes it: never complete, and its verdict says which shard.
  const oneShard = summarize(runs, { complete: true, selection: ['shard 1/2'], sharded: true });
  expect(oneShard.complete).toBe(false);
  expect(verdictLines(oneShard)).toMatchObject({ state: 'incomplete', headline: 'incomplete: shard 1/2, 1 of 1 planned run recorded · no gates checked' });
  expect(interrupted.partial).toEqual({ selection: [], shortfall: ['interrupted', '1 of 2 planned runs not recorded'] });
  expect(baselineMismatch(whole, [])).toBeUndefined();
  expect(baselineMismatch(shard, ['shard 1/2'])).toBeUndefined();
  expect(baselineMismatch(shard, [])).toBe('it ran shard 1/2, this run the whole suite');
  expect(baselineMismatch(whole, ['grep x'])).toBe('it ran the whole suite, this run grep x');
  expect(baselineMismatch(interrupted, [])).toBe('it is partial (interrupted; 1 of 2 planned runs not recorded)');
  // A version 3 summary says only `complete`.
  expect(baselineMismatch({ complete: false }, [])).toBe('it is partial (not complete)');
  const path = join(test.info().outputPath(), 'interrupted.json');
  writeFileSync(path, JSON.stringify(interrupted));
  expect(() => readBaseline(path)).toThrow(`harness-eval reporter baseline ${path}: a partial summary (interrupted; 1 of 2 planned runs not recorded) is no baseline; compare with a whole run`);
});

const runTest = (args: string[], env: Record<string, string>, onOutput?: Parameters<typeof playwright>[2]) =>
  playwright(['test', '-c', 'tests/fixtures/reporter/playwright.config.ts', ...args], { PROJECTS: 'synthetic', ...env }, onOutput);

/** A whole run of the synthetic project, the first of its history: what the tests below run on top of. */
const wholeRun = sharedRun('harness-eval-partial-', ['test', '-c', 'tests/fixtures/reporter/playwright.config.ts'], { PROJECTS: 'synthetic' });

test('a shard, a grep or an interrupted run is marked partial, kept out of the history, and compared with no whole run', async () => {
  const { dir, env, child: whole } = await wholeRun();
  const history = () => (existsSync(join(env.REPORT_DIR, 'history')) ? readdirSync(join(env.REPORT_DIR, 'history')) : []);
  expect(whole.code, whole.stdout).toBe(0);
  expect(readSummary(env.REPORT_DIR)).toMatchObject({ complete: true, recorded: 1 });
  expect(readSummary(env.REPORT_DIR).partial).toBeUndefined();
  expect(whole.stdout).toContain('harness-eval: ✓ 1 gate passed · complete · 1 of 1 planned run recorded');
  expect(history()).toHaveLength(1);
  const wholeSummary = join(dir, 'whole.json');
  writeFileSync(wholeSummary, readFileSync(join(env.REPORT_DIR, 'summary.json')));

  const shard = await runTest(['--shard', '1/2'], { ...env, BASELINE: 'previous' });
  expect(shard.code, shard.stdout).toBe(0);
  // One shard is never complete, however much of its part it recorded: only the merge is whole.
  expect(readSummary(env.REPORT_DIR)).toMatchObject({ complete: false, recorded: 1, planned: 1, partial: { selection: ['shard 1/2'], shortfall: [] } });
  expect(shard.stdout).toContain('harness-eval: ⚠ incomplete: shard 1/2, 1 of 1 planned run recorded · ');
  expect(readSummary(env.REPORT_DIR).comparison).toBeUndefined();
  expect(shard.stdout).toContain('harness-eval: partial (shard 1/2): not kept in the history, never a baseline for a whole run');
  expect(shard.stdout).toContain('harness-eval: no comparison: this run is partial (shard 1/2), and the history keeps whole runs only');
  expect(history()).toHaveLength(1);

  const grep = await runTest(['-g', 'judged'], { ...env, BASELINE: wholeSummary });
  expect(grep.code, grep.stdout).toBe(0);
  expect(readSummary(env.REPORT_DIR).partial).toEqual({ selection: ['grep judged'], shortfall: [] });
  expect(grep.stdout).toContain(`harness-eval: not compared with ${wholeSummary}: it ran the whole suite, this run grep judged`);
  expect(history()).toHaveLength(1);

  // Ctrl-C while the second test runs: interrupted, one run of two, never green, never a baseline.
  const marker = join(dir, 'started');
  let poll: NodeJS.Timeout | undefined;
  const interrupted = await runTest([], { ...env, SCENARIO: 'slow', STARTED_MARKER: marker, BASELINE: 'previous' }, (_stdout, kill) => {
    poll ??= setInterval(() => {
      if (!existsSync(marker)) return;
      clearInterval(poll);
      kill('SIGINT');
    }, 100);
  });
  expect(interrupted.code).not.toBe(0);
  const summary = readSummary(env.REPORT_DIR);
  expect(summary).toMatchObject({ complete: false, recorded: 1, planned: 2, partial: { selection: [], shortfall: ['interrupted', '1 of 2 planned runs not recorded'] } });
  // The whole run before it is still its baseline; it never becomes one.
  expect(summary.comparison!.baseline.source).toBe(`history/${history()[0]}`);
  expect(interrupted.stdout).toContain('harness-eval: ⚠ incomplete: 1 of 2 planned runs recorded · 1 gate not judged: incomplete');
  expect(interrupted.stdout).not.toMatch(/gates? passed/);
  expect(readFileSync(join(env.REPORT_DIR, 'index.html'), 'utf8')).toContain('<section id="verdict" class="incomplete">');
  expect(history()).toHaveLength(1);
  expect(() => readBaseline(join(env.REPORT_DIR, 'summary.json'))).toThrow(/a partial summary \(interrupted; 1 of 2 planned runs not recorded\) is no baseline/);
});

test('the history is per output folder: a scratch run neither reads nor joins the main one; previous warns when the cells differ', async () => {
  const { dir, env, child: whole } = await wholeRun();
  const history = (reports: string) => (existsSync(join(reports, 'history')) ? readdirSync(join(reports, 'history')) : []);
  expect(whole.code).toBe(0);
  expect(history(env.REPORT_DIR)).toHaveLength(1);

  const scratch = join(dir, 'scratch');
  const aside = await runTest([], { ...env, REPORT_DIR: scratch, BASELINE: 'previous' });
  expect(aside.stdout).toContain(`harness-eval: no earlier summary in ${join(scratch, 'history')} to compare with`);
  expect(history(scratch)).toHaveLength(1);
  expect(history(env.REPORT_DIR)).toHaveLength(1);

  // Another model: its cell is added, the old one removed. Said in one line, and in the reports.
  const reshaped = await runTest([], { ...env, BASELINE: 'previous', SYNTHETIC_MODEL: 'double:b' });
  expect(reshaped.code, reshaped.stdout).toBe(0);
  const warning = "the baseline's cells differ from this run's: 1 added, 1 removed (compared: the cells both have)";
  expect(reshaped.stdout).toContain(`harness-eval: warning: ${warning}\n`);
  expect(readFileSync(join(env.REPORT_DIR, 'summary.md'), 'utf8')).toContain(`⚠ T${warning.slice(1)}.`);
  expect(history(env.REPORT_DIR)).toHaveLength(2);
  expect(history(scratch)).toHaveLength(1);
});

test('a run the global timeout stopped says so, and is partial', async () => {
  const { dir, env } = childWorkspace('harness-eval-partial-');
  const result = await runTest(['--global-timeout', '4000'], { ...env, SCENARIO: 'slow', STARTED_MARKER: join(dir, 'started') });
  expect(result.code).not.toBe(0);
  expect(readSummary(env.REPORT_DIR)).toMatchObject({ complete: false, recorded: 1, planned: 2, partial: { selection: [], shortfall: ['global timeout', '1 of 2 planned runs not recorded'] } });
  expect(result.stdout).toContain('harness-eval: ⚠ incomplete: 1 of 2 planned runs recorded');
  expect(existsSync(join(env.REPORT_DIR, 'history'))).toBe(false);
});

test('reporter options are checked strictly: a misspelled key is one line naming it, not a silent default', async () => {
  const { default: HarnessReporter } = await import('../src/playwright/reporter.ts');
  expect(() => new HarnessReporter({ outputFolder: 'scratch' } as never)).toThrow('harness-eval reporter options: (options): Unrecognized key: "outputFolder"');
  expect(() => new HarnessReporter({ prices: { 'openai:gpt-4o': { input: -1, output: 2 } } })).toThrow(/^harness-eval reporter options: prices\.openai:gpt-4o\.input: Too small/);
  expect(() => new HarnessReporter({ gates: [{ maxFalseSuccessRate: 2 }] })).toThrow(/^harness-eval reporter options: gates\.0\.maxFalseSuccessRate: Too big/);
  // What Playwright adds to every reporter's options is not the user's.
  expect(() => new HarnessReporter({ outputDir: 'reports', configDir: '/x', _mode: 'test', _commandHash: 'abc' } as never)).not.toThrow();
  expect(() => new HarnessReporter({ configDir: '/x', _mode: 'list', onlyFailures: false } as never)).not.toThrow();
});
