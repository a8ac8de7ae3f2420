import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from '@playwright/test';
import { collect, playwright, readSummary, sharedRun, workspace as childWorkspace } from './playwright-child.ts';
import { expect } from './support.ts';

/**
 * The Playwright surface from the outside: a small project (tests/fixtures/surface) run by a child
 * Playwright, as a user would run theirs, with its reports read back.
 */
test.describe.configure({ mode: 'parallel', timeout: 180_000 });

const project = 'tests/fixtures/surface';
const workspace = () => childWorkspace('harness-eval-surface-');

const runTest = (args: string[], env: Record<string, string>, onOutput?: Parameters<typeof playwright>[2]) =>
  playwright(['test', '-c', `${project}/playwright.config.ts`, ...args], env, onOutput);

/** A plain run of the synthetic project: the tests that read it or compare with it share one. */
const plainRun = sharedRun('harness-eval-surface-', ['test', '-c', `${project}/playwright.config.ts`, '--project', 'synthetic']);

test('the reporter prints a line per run and writes the summary of its cells', async () => {
  const { env, child: result } = await plainRun();
  expect(result.code).toBe(0);
  expect(result.stdout).toMatch(/\[12\/12, 0 left\] synthetic-task · harness-eval · double:b · verified · hn-recorded: success, \d+ iterations, finished/);
  const summary = readSummary(env.REPORT_DIR);
  expect(summary).toMatchObject({ schemaVersion: 4, complete: true, planned: 12, recorded: 12, missing: [], totals: { runs: 12, successes: 8, falseSuccesses: 2, falseFailures: 0, incomplete: 0 } });
  const bare = summary.cells.find((cell) => cell.layers === 'bare')!;
  expect(bare).toMatchObject({ runs: 4, successes: 1, claimed: 3, falseSuccesses: 2, iterations: { max: 6 } });
  expect(existsSync(join(env.REPORT_DIR, 'index.html'))).toBe(true);
  expect(readFileSync(join(env.REPORT_DIR, 'summary.md'), 'utf8')).toContain('| harness-eval · double:a · bare | ');
  // The console says which configuration to ship and every false success under no gate, before its verdict.
  expect(result.stdout).toMatch(/^harness-eval: Ship: harness-eval · double:\w · \w+: .*\nharness-eval: ✗ 2 false successes in 2 of 4 trials: synthetic-task · harness-eval · double:\w · bare · hn-recorded, under no gate\n/m);
});

test('with a baseline summary, the reporter prints how each cell changed', async () => {
  const first = await plainRun();
  expect(first.child.code).toBe(0);
  const second = workspace();
  // With a gate every cell it matches holds (the verified ones: no false success), the run passes:
  // the gates test's passing case, carried by this run.
  const result = await runTest(['--project', 'synthetic'], { ...second.env, BASELINE: join(first.env.REPORT_DIR, 'summary.json'), GATES: '[{ "layers": "verified" }]' });
  expect(result.code, result.stdout).toBe(0);
  expect(result.stdout).toContain('harness-eval: ✓ 1 gate passed');
  expect(result.stdout).toContain('synthetic-task · harness-eval · double:a · bare · hn-recorded: success 25% (');
  expect(result.stdout).toContain('3 cells compared, 0 flagged');
});

test('merged shards give the same summary as one unsharded run', async () => {
  const whole = await plainRun();
  expect(whole.child.code).toBe(0);
  const sharded = workspace();
  const blobs = join(sharded.dir, 'blobs');
  for (const shard of ['1/2', '2/2']) {
    const result = await runTest(['--project', 'synthetic', `--shard=${shard}`, '--reporter=blob'], {
      ...sharded.env,
      PLAYWRIGHT_BLOB_OUTPUT_FILE: join(blobs, `report-${shard[0]}.zip`),
    });
    expect(result.code).toBe(0);
  }
  const merged = await playwright(['merge-reports', '-c', `${project}/merge.config.ts`, blobs], sharded.env);
  expect(merged.code).toBe(0);
  const one = readSummary(whole.env.REPORT_DIR);
  const shards = readSummary(sharded.env.REPORT_DIR);
  expect(shards.cells).toEqual(one.cells);
  expect(shards.totals).toEqual(one.totals);
  expect([shards.planned, shards.recorded, shards.complete]).toEqual([one.planned, one.recorded, one.complete]);
  // The merge holds what the shards ran together: no selection of its own (the whole run chose a project).
  expect(shards.partial).toBeUndefined();
  expect(one.partial).toEqual({ selection: ['project synthetic'], shortfall: [] });
  // A gate holds in the merge too (merge-reports ignores a reporter's status; ours throws there).
  const gated = await playwright(['merge-reports', '-c', `${project}/merge.config.ts`, blobs], { ...sharded.env, GATES: '[{ "layers": "bare" }]' });
  expect(gated.code).toBe(1);
  expect(gated.stdout).toContain('harness-eval: gate breached in 1 cell:');
});

test('a breached gate fails the whole run and names the cells', async () => {
  const { env } = workspace();
  const falseSuccess = await runTest(['--project', 'synthetic'], { ...env, GATES: '[{ "layers": "bare" }]' });
  expect(falseSuccess.code).toBe(1);
  expect(falseSuccess.stdout).toContain('harness-eval: gate breached in 1 cell:\n  synthetic-task · harness-eval · double:a · bare · hn-recorded: false-success rate 0.50 > 0.00');
  const lowSuccess = await runTest(['--project', 'synthetic'], { ...env, GATES: '[{ "layers": "verified", "minSuccessRate": 0.9 }]' });
  expect(lowSuccess.code).toBe(1);
  expect(lowSuccess.stdout).toContain('synthetic-task · harness-eval · double:a · verified · hn-recorded: success rate 0.75 < 0.90');
  expect(lowSuccess.stdout).not.toContain('double:b · verified · hn-recorded: success rate');
  // A gate all its cells hold passes: checked on the baseline test's second run.
});

test('an interrupted run (Ctrl-C) still leaves the summary of the runs that finished', async () => {
  const { env } = workspace();
  let interrupted = false;
  const result = await runTest(['--project', 'synthetic', '--workers=1'], { ...env, SLOW: '1' }, (stdout, kill) => {
    if (!interrupted && stdout.includes('[12/13, 1 left]')) {
      interrupted = true;
      // Give the slow test a moment to start, as a user's Ctrl-C would come mid-run.
      setTimeout(kill, 500);
    }
  });
  expect(interrupted).toBe(true);
  expect(result.code).not.toBe(0);
  const summary = readSummary(env.REPORT_DIR);
  expect(summary).toMatchObject({ complete: false, planned: 13, recorded: 12, totals: { runs: 12 } });
  expect(summary.partial).toEqual({ selection: ['project synthetic'], shortfall: ['interrupted', '1 of 13 planned runs not recorded'] });
  expect(summary.missing.map((test) => test.title)).toEqual(['a run that is still going when the user presses Ctrl-C']);
  expect(result.stdout).toContain('harness-eval: ⚠ incomplete: 12 of 13 planned runs recorded');
  expect(existsSync(join(env.REPORT_DIR, 'history'))).toBe(false);
});

test('harness fixture: unconfigured models skip with their reason; steps, attachment and matcher messages', async () => {
  const { env } = workspace();
  const result = await runTest(['--project', 'openai:gpt-4o-mini · bare', '--project', 'scripted:overclaimer · bare'], env);
  expect(result.code).toBe(1);
  const report = JSON.parse(readFileSync(env.JSON_OUT, 'utf8'));
  const results = collect(report).map(({ title, project: name, result: run }) => ({ title, project: name, ...run }));

  const skipped = results.filter((run) => run.project === 'openai:gpt-4o-mini · bare');
  expect(skipped.map((run) => run.status)).toEqual(['skipped', 'skipped']);
  for (const run of skipped) expect(run.annotations).toContainEqual(expect.objectContaining({ type: 'skip', description: 'openai:gpt-4o-mini: OPENAI_API_KEY is not set' }));

  const failing = results.find((run) => run.project === 'scripted:overclaimer · bare' && run.title.includes('bare stack'))!;
  expect(failing.status).toBe('failed');
  const message: string = failing.errors[0].message;
  expect(message).toContain('expected no false success');
  expect(message).toMatch(/claimed: success — "Upvoted the first post/);
  expect(message).toMatch(/oracle: {2}not actual — does not hold: story \d+ \(rank 1\) is not upvoted by harness/);
  expect(message).toMatch(/trace: {3}#\d+ tool_call \(attempt 1, iteration 4\) finish/);
  const steps: string[] = failing.steps.map((step: { title: string }) => step.title);
  expect(steps).toEqual(expect.arrayContaining(['iteration 1: navigate https://news.ycombinator.com/news', 'iteration 2: get_stories']));
  expect(steps.some((title) => /^iteration 3: click #up_\d+$/.test(title))).toBe(true);
  expect(failing.attachments.map((attachment: { name: string }) => attachment.name)).toContain('harness-run.json');

  const passing = results.find((run) => run.project === 'scripted:overclaimer · bare' && run.title.includes('succeeds'))!;
  expect(passing.status).toBe('passed');
  const screenshots = passing.attachments.filter((attachment: { contentType: string }) => attachment.contentType === 'image/png');
  expect(screenshots.map((shot: { name: string }) => shot.name)).toContain('iteration 1: navigate https://news.ycombinator.com/news.png');
  expect(screenshots.length).toBeGreaterThanOrEqual(5);
});

test('with allure-playwright beside it, a run carries its cell as parameters and labels, with trace and transcript', async () => {
  const { dir, env } = workspace();
  const allure = join(dir, 'allure-results');
  const result = await runTest(['--project', 'scripted:overclaimer · bare', '-g', 'succeeds'], { ...env, ALLURE_DIR: allure });
  expect(result.code).toBe(0);
  const results = readdirSync(allure).filter((name) => name.endsWith('-result.json')).map((name) => JSON.parse(readFileSync(join(allure, name), 'utf8')));
  expect(results).toHaveLength(1);
  const [run] = results;
  for (const [name, value] of [['task', 'upvote-first-post'], ['model', 'scripted:overclaimer'], ['layers', 'verify+login'], ['site', 'hn-recorded']]) {
    expect(run.parameters).toContainEqual(expect.objectContaining({ name, value }));
    expect(run.labels).toContainEqual({ name, value });
  }
  const attachments = JSON.stringify(run);
  expect(attachments).toContain('"name":"transcript"');
  expect(attachments).toContain('"name":"harness trace"');
});
