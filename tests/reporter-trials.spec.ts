import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { test } from '@playwright/test';
import { playwright, readSummary, sharedRun, workspace as childWorkspace } from './playwright-child.ts';
import { expect } from './support.ts';

/**
 * The reporter counts one trial per planned run, whatever Playwright does around it: retries,
 * crashed workers, mangled attachments, skipped tests, `--list`, a killed runner. Each test runs
 * the small project in tests/fixtures/reporter in a child Playwright and reads its reports.
 */
test.describe.configure({ mode: 'parallel', timeout: 180_000 });

const config = 'tests/fixtures/reporter/playwright.config.ts';
const workspace = () => childWorkspace('harness-eval-reporter-');
const runTest = (args: string[], env: Record<string, string>, onOutput?: Parameters<typeof playwright>[2]) => playwright(['test', '-c', config, ...args], env, onOutput);

/** A run of the synthetic project, complete: the earlier summary the tests below start from. */
const earlierRun = sharedRun('harness-eval-reporter-', ['test', '-c', config, '--project', 'synthetic']);

/** Every `[done/total, n left]` prefix of the progress lines. */
const progressCounts = (stdout: string) => [...stdout.matchAll(/^\[(-?\d+)\/(-?\d+), (-?\d+) left\]/gm)].map((match) => match.slice(1).map(Number));

// --retries 1, not 2: every failed attempt restarts the worker and its browser (about 4 CPU-s), and a
// second retry counts no differently from the first.
test('with --retries 1, a test that fails after its run counts once, with its last attempt\'s run', async () => {
  const { env } = workspace();
  const result = await runTest(['--project', 'scripted:overclaimer · bare', '--retries', '1'], env);
  expect(result.code).toBe(1); // the false success fails its expectation on every attempt
  const summary = readSummary(env.REPORT_DIR);
  expect(summary).toMatchObject({ planned: 2, recorded: 2, missing: [], complete: true, totals: { runs: 2, falseSuccesses: 2, retried: 2 } });
  const [cell] = summary.cells;
  expect(cell).toMatchObject({ runs: 2, falseSuccesses: 2, retried: 2, claimed: 2 });
  expect(new Set(cell!.runIds).size).toBe(cell!.runIds.length);
  // Four attempts, two trials: the count moves only when a test is done, and never goes negative.
  const counts = progressCounts(result.stdout);
  expect(counts).toHaveLength(4);
  for (const [done, total, left] of counts) {
    expect(total).toBe(2);
    expect(done).toBeLessThanOrEqual(total!);
    expect(left).toBe(total! - done!);
  }
  expect(counts.at(-1)).toEqual([2, 2, 0]);
  expect(result.stdout).toContain('attempt 1: Playwright retries it');
});

test('a test --max-failures stopped before it ran is missing, and the summary is not complete', async () => {
  const { env } = workspace();
  const result = await runTest(['--project', 'scripted:overclaimer · bare', '--max-failures', '1'], env);
  expect(result.code).toBe(1);
  expect(readSummary(env.REPORT_DIR)).toMatchObject({
    complete: false,
    planned: 2,
    recorded: 1,
    missing: [{ title: 'a run that passes on its second attempt', project: 'scripted:overclaimer · bare' }],
  });
  expect(result.stdout).toContain('harness-eval: 1 test recorded no run: a run that passes on its second attempt (scripted:overclaimer · bare)');
});

test('a worker that dies mid-run leaves its run recorded as an error, in no rate: nothing is known of what its agent did', async () => {
  const { env } = workspace();
  const result = await runTest(['--project', 'synthetic'], { ...env, SCENARIO: 'crash' });
  expect(result.code).toBe(1);
  const summary = readSummary(env.REPORT_DIR);
  expect(summary).toMatchObject({ planned: 2, recorded: 2, missing: [], totals: { runs: 1, successes: 1, incomplete: 0, errors: 1 } });
  expect(summary.cells).toHaveLength(1);
  expect(summary.cells[0]).toMatchObject({ runs: 1, errors: 1, incomplete: 0, stopReasons: { finished: 1 }, tokens: { input: 1000, output: 50, unknownRuns: 0 } });
  expect(summary.excluded!.runs).toMatchObject([{ title: 'a worker that dies while its run goes on', reason: 'error', detail: 'the run never reported its end (its worker died, or its test ended before it was recorded): nothing is known of what the agent did' }]);
  expect(readFileSync(join(env.REPORT_DIR, 'index.html'), 'utf8')).toContain('error: the run never reported its end (its worker died');
  expect(result.stdout).toContain('harness-eval: ✗ 1 run errored, none allowed (maxErrors 0) · 1 test failed outside the gates · ');
});

test('mangled attachments: unknown tokens stay unknown, a bad run is named in one line and missing, the rest count', async () => {
  const { env } = workspace();
  const result = await runTest(['--project', 'synthetic'], { ...env, SCENARIO: 'malformed' });
  const summary = readSummary(env.REPORT_DIR);
  expect(summary).toMatchObject({ planned: 4, recorded: 2, complete: false, totals: { runs: 2, successes: 2 } });
  // Every test passed, yet two runs are missing: the gates were not judged, and the run does not pass.
  expect(result.code, result.stdout).toBe(1);
  expect(result.stdout).toContain('harness-eval: ⚠ incomplete: 2 of 4 planned runs recorded · 1 gate not judged: incomplete\n');
  expect(summary.missing.map((test) => test.title).sort()).toEqual(['a run attachment a bug mangled', 'a run attachment that is not JSON']);
  expect(summary.cells[0]!.tokens).toEqual({ input: 1000, output: 50, unknownRuns: 1 });
  expect(result.stdout).toMatch(/^harness-eval: harness-run\.json of "a run attachment a bug mangled" \(synthetic\): claimed: Invalid input: expected boolean, received string; the run counts as missing$/m);
  expect(result.stdout).toMatch(/^harness-eval: harness-run\.json of "a run attachment that is not JSON" \(synthetic\): not a JSON object; the run counts as missing$/m);
  expect(result.stdout).toContain('harness-eval: 2 tests recorded no run:');
  expect(readFileSync(join(env.REPORT_DIR, 'summary.md'), 'utf8')).toContain(' · tokens in / out 1,000 / 50 (+1 unknown) · ');
});

test('nothing measured fails with one line saying why', async () => {
  const { env } = workspace();
  const skipped = await runTest(['--project', 'openai:gpt-4o-mini · bare'], env);
  expect(skipped.code).toBe(1);
  expect(skipped.stdout).toContain('harness-eval: nothing was measured: 2 tests skipped (openai:gpt-4o-mini: OPENAI_API_KEY is not set)\n');
});

test('a gate that matches no cell fails, naming the gate', async () => {
  const { env } = workspace();
  const unmatched = await runTest(['--project', 'synthetic'], { ...env, GATES: '[{ "layers": "bare" }, { "layers": "verified", "maxFalseFailureRate": 0 }]' });
  expect(unmatched.code).toBe(1);
  expect(unmatched.stdout).toContain('harness-eval: gate matches no cell: gates[1] {"layers":"verified"}\n');
  expect(unmatched.stdout).not.toContain('gate matches no cell: gates[0]');
});

test('--list, no tests found and another --reporter leave an earlier summary as it was', async () => {
  const { env, child: earlier } = await earlierRun();
  expect(earlier.code).toBe(0);
  const summaryPath = join(env.REPORT_DIR, 'summary.json');
  const before = readFileSync(summaryPath, 'utf8');
  expect(JSON.parse(before)).toMatchObject({ complete: true, recorded: 1 });
  for (const args of [['--list'], ['-g', 'no test has this title'], ['--reporter=line']]) {
    const result = await runTest(['--project', 'synthetic', ...args], env);
    expect(readFileSync(summaryPath, 'utf8'), args.join(' ')).toBe(before);
    // Under --list the reporter leaves the terminal to Playwright's own list.
    if (args[0] === '--list') expect(result.stdout).toContain('Total: 1 test in 1 file');
  }
});

test('a runner killed before its first result leaves no earlier complete summary behind', async () => {
  const { dir, env, child: earlier } = await earlierRun();
  expect(earlier.code).toBe(0);
  expect(readSummary(env.REPORT_DIR).complete).toBe(true);
  const marker = join(dir, 'started');
  let poll: NodeJS.Timeout | undefined;
  const killed = await runTest(['--project', 'synthetic', '-g', 'still going'], { ...env, SCENARIO: 'slow', STARTED_MARKER: marker }, (_stdout, kill) => {
    poll ??= setInterval(() => {
      if (!existsSync(marker)) return;
      clearInterval(poll);
      kill('SIGKILL');
    }, 100);
  });
  expect(killed.code).toBeNull(); // killed, not ended
  expect(readSummary(env.REPORT_DIR)).toMatchObject({ complete: false, recorded: 0, planned: 1 });
});

test('with --retries 1, a false success on the first attempt fails the default gate though the retry succeeds', async () => {
  const { env } = workspace();
  const lied = await runTest(['--project', 'agents', '--retries', '1'], { ...env, SCENARIO: 'lies-then-succeeds' });
  expect(lied.code, lied.stdout).toBe(1);
  const summary = readSummary(env.REPORT_DIR);
  // One trial, counted with its retry's run: a success; the first attempt's lie is kept beside it.
  expect(summary).toMatchObject({ planned: 1, recorded: 1, totals: { runs: 1, successes: 1, falseSuccesses: 0, falseSuccessAttempts: 1, retried: 1 } });
  expect(summary.cells[0]).toMatchObject({ runs: 1, successes: 1, falseSuccesses: 0, falseSuccessAttempts: 1, falseSuccessTrials: 1 });
  expect(summary.gates!.breaches.map((breach) => breach.rule)).toEqual(['false-success rate, retried attempts included, 1.00 > 0.00']);
  expect(lied.stdout).toContain('harness-eval: gate breached in 1 cell:');
  expect(lied.stdout).toContain('0 false successes, and 1 false success on a retried attempt');
  expect(readFileSync(join(env.REPORT_DIR, 'summary.md'), 'utf8')).toContain('0 false successes (0%), and 1 false success on a retried attempt');
  expect(readFileSync(join(env.REPORT_DIR, 'index.html'), 'utf8')).toContain('success, and 1 false success on an earlier attempt');

  const honest = await runTest(['--project', 'agents', '--retries', '1'], { ...env, SCENARIO: 'fails-then-succeeds' });
  expect(honest.code, honest.stdout).toBe(0);
  expect(readSummary(env.REPORT_DIR)).toMatchObject({ totals: { runs: 1, successes: 1, falseSuccessAttempts: 0, retried: 1 }, gates: { breaches: [] } });
});

test('a 60 MB claim is cut where the run is recorded: the report stays small, and so does the runner', async () => {
  const { env } = workspace();
  const result = await runTest(['--project', 'agents'], { ...env, SCENARIO: 'flood', PEAK_RSS: '1' });
  expect(result.code).toBe(1); // a false success: the answer is wrong
  const size = (name: string) => statSync(join(env.REPORT_DIR, name)).size;
  const [peak, atBegin] = /peak RSS of the runner: (\d+) MB \((\d+) MB when the tests began\)/.exec(result.stdout)!.slice(1).map(Number);
  console.log(`flood of 60 MB: index.html ${size('index.html')} B, summary.json ${size('summary.json')} B, summary.md ${size('summary.md')} B, runner peak RSS ${peak} MB (${atBegin} MB when the tests began)`);
  // Uncut (before the caps): a 126 MB index.html and a peak of 3.7 GB.
  expect(size('index.html')).toBeLessThan(200_000);
  expect(size('summary.json')).toBeLessThan(20_000);
  expect(peak! - atBegin!).toBeLessThan(64);
  expect(peak).toBeLessThan(300);
  const html = readFileSync(join(env.REPORT_DIR, 'index.html'), 'utf8');
  expect(html).toContain(`claimed success: ${'x'.repeat(4_000)}…[harness-eval: cut; 62,914,560 characters in all]`);
  expect(result.stdout.length).toBeLessThan(100_000);
});
