import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from '@playwright/test';
import * as cheerio from 'cheerio';
import HarnessReporter from '../src/playwright/reporter.ts';
import { renderHtml, renderMarkdown, verdictLines } from '../src/report/files.ts';
import { summarize } from '../src/report/summarize.ts';
import type { AttachedRunRecord, Summary } from '../src/report/types.ts';
import { playwright, readSummary, workspace } from './playwright-child.ts';
import { attachedRunRecord, expect } from './support.ts';

/**
 * The verdict is never greener than the run (issue 33): runs that say nothing of the agent (an
 * error, an interruption) are in no rate and are named first; what Playwright itself failed is
 * counted; the console's last line, the reports and the exit status agree.
 */
test.describe.configure({ mode: 'parallel', timeout: 180_000 });

const now = new Date('2025-01-02T03:04:05.000Z');
let nextId = 0;
const success = (fields: Partial<Omit<AttachedRunRecord, 'test'>> = {}) => attachedRunRecord({ claimed: true, actual: true, ...fields, test: { id: `t${nextId++}`, title: 'upvote', project: 'p' } });
const errored = (detail: string, title = 'could not start') =>
  attachedRunRecord({ claimed: false, actual: false, incomplete: true, iterations: 0, stopReason: 'error', excluded: { reason: 'error', detail }, test: { id: `t${nextId++}`, title, project: 'p' } });
const interrupted = () => attachedRunRecord({ claimed: false, actual: false, incomplete: true, stopReason: 'error', excluded: { reason: 'interrupted', detail: 'cut short by the interruption' }, test: { id: `t${nextId++}`, title: 'in flight', project: 'p' } });

/** The headline as every report says it: the console's form, summary.md's bold line, index.html's. */
function headlines(summary: Summary, runs: readonly AttachedRunRecord[]) {
  const verdict = verdictLines(summary);
  const $ = cheerio.load(renderHtml(summary, runs));
  return { console: `${verdict.mark} ${verdict.headline}`, markdown: renderMarkdown(summary).split('\n')[2], html: $('#verdict .headline').text(), firstItem: $('#verdict li').first().text(), state: verdict.state };
}

test('a run that errored before the agent worked is in no rate and no gate\'s denominator: counted per cell and overall, listed, and every report leads with it', () => {
  const runs = [success(), success(), success(), errored("python3: can't open file 'agents/nothere.py'")];
  // Counted, the errored run would be a truthful failure and breach this gate: 3 of 4 is 0.75 < 0.8.
  const summary = summarize(runs, { complete: true, now, gates: [{ minSuccessRate: 0.8 }] });
  const [cell] = summary.cells;
  expect(cell).toMatchObject({ runs: 3, errors: 1, successes: 3, incomplete: 0, stopReasons: { finished: 3 }, iterations: { max: 3 } });
  expect(cell!.successRate.value).toBe(1);
  expect(summary.totals).toMatchObject({ runs: 3, errors: 1 });
  expect(summary.gates!.breaches).toEqual([]);
  expect(summary.excluded).toEqual({
    maxErrors: 0,
    tooManyErrors: true,
    runs: [{ id: runs[3]!.test.id, title: 'could not start', project: 'p', run: 1, cell: 'upvote-first-post · harness-eval · scripted:overclaimer · bare · hn-recorded', reason: 'error', detail: "python3: can't open file 'agents/nothere.py'" }],
  });
  // summary.json: right after what was planned and recorded, before the totals and the cells.
  const keys = Object.keys(summary);
  expect(keys.slice(0, keys.indexOf('excluded') + 1)).toEqual(['schemaVersion', 'generatedAt', 'complete', 'planned', 'recorded', 'excluded']);
  const said = headlines(summary, runs);
  const headline = '1 run errored, none allowed (maxErrors 0) · 1 gate passed · complete · 4 of 4 planned runs recorded';
  expect(said).toEqual({ console: `✗ ${headline}`, markdown: `**✗ ${headline}**`, html: `✗ ${headline}`, firstItem: "error: could not start (p): python3: can't open file 'agents/nothere.py'", state: 'fail' });
  expect(renderMarkdown(summary)).toContain('3 runs of 4 planned in 1 cell · 1 error out of every rate · 3 done (100%)');
  // Its row says what it came to, not an outcome of the agent's.
  const $ = cheerio.load(renderHtml(summary, runs));
  const row = $(`tr[id="run-${runs[3]!.test.id}"]`);
  expect(row.find('td').eq(1).text()).toBe("error: python3: can't open file 'agents/nothere.py'");
  expect(row.find('td').eq(1).attr('class')).toBe('error');
  expect(row.next('tr.detail').find('.claim').text()).toBe('claim none that counts (error)');
  expect($('#cells tr').eq(1).find('td').eq(5).text()).toBe('3 (+1 error)');
});

test('maxErrors allows a count of errors, or below 1 a share of the runs that ended; a count is whole', () => {
  const runs = [success(), success(), success(), errored('the gateway did not answer')];
  expect(headlines(summarize(runs, { complete: true, now, gates: [{}], maxErrors: 1 }), runs)).toMatchObject({ console: '✓ 1 run errored, 1 allowed (maxErrors 1) · 1 gate passed · complete · 4 of 4 planned runs recorded', state: 'pass' });
  // 10% of 20 runs that ended is 2: two errors pass, three do not.
  const twenty = (errors: number) => [...Array.from({ length: 20 - errors }, () => success()), ...Array.from({ length: errors }, (_, index) => errored('crashed', `e${index}`))];
  expect(verdictLines(summarize(twenty(2), { complete: true, now, gates: [{}], maxErrors: 0.1 })).headline).toBe('2 runs errored, 2 allowed (maxErrors 10%) · 1 gate passed · complete · 20 of 20 planned runs recorded');
  expect(verdictLines(summarize(twenty(3), { complete: true, now, gates: [{}], maxErrors: 0.1 }))).toMatchObject({ state: 'fail', headline: '3 runs errored, 2 allowed (maxErrors 10%) · 1 gate passed · complete · 20 of 20 planned runs recorded' });
  expect(() => new HarnessReporter({ maxErrors: 1.5 })).toThrow('harness-eval reporter options: maxErrors: a count of errors is a whole number; a share is below 1');
  expect(() => new HarnessReporter({ maxErrors: -1 })).toThrow(/^harness-eval reporter options: maxErrors: Too small/);
});

test('an interrupted run is in no rate: the verdict is incomplete and says so first, never a breach the interruption caused', () => {
  const runs = [success(), success(), success(), interrupted(), interrupted()];
  // Counted, the two runs in flight would make 3 of 5, 0.60 < 0.80: a breach.
  const summary = summarize(runs, { complete: false, now, gates: [{ minSuccessRate: 0.8 }], stopped: 'interrupted' });
  expect(summary.gates!.breaches).toEqual([]);
  expect(summary).toMatchObject({ complete: false, totals: { runs: 3, interrupted: 2 }, partial: { shortfall: ['interrupted', '2 runs interrupted'] } });
  expect(summary.cells[0]).toMatchObject({ runs: 3, interrupted: 2 });
  expect(headlines(summary, runs)).toMatchObject({ console: '⚠ 2 runs interrupted · incomplete: 5 of 5 planned runs recorded · 1 gate not judged: incomplete', state: 'incomplete', firstItem: 'interrupted: in flight (p): cut short by the interruption' });
  // Even when the runner was not stopped as a whole, a run the user stopped leaves the matrix incomplete.
  expect(summarize(runs, { complete: true, now }).complete).toBe(false);
});

test('what Playwright failed outside the gates is in the verdict: a failed test never sits under a green ✓', () => {
  const runs = [success()];
  const failed = summarize(runs, {
    complete: true,
    now,
    gates: [{}],
    playwrightFailures: { tests: [{ id: 'a', title: 'upvote', project: 'p', status: 'failed', error: 'Error: expect(received).toBe(expected)' }, { id: 'b', title: 'example', project: 'p', status: 'timedOut', error: 'Test timeout of 30000ms exceeded.' }], errors: [] },
  });
  expect(headlines(failed, runs)).toMatchObject({ console: '✗ 2 tests failed outside the gates · 1 gate passed · complete · 1 of 1 planned run recorded', state: 'fail', firstItem: 'failed: upvote (p): Error: expect(received).toBe(expected)' });
  const outside = summarize(runs, { complete: true, now, gates: [{}], playwrightFailures: { tests: [], errors: ['Error in globalSetup: no Chromium'] } });
  expect(headlines(outside, runs)).toMatchObject({ console: '✗ 1 error outside any test · 1 gate passed · complete · 1 of 1 planned run recorded', firstItem: 'error outside any test: Error in globalSetup: no Chromium' });
  // Nothing failed: nothing said.
  expect(summarize(runs, { complete: true, now, playwrightFailures: { tests: [], errors: [] } }).playwrightFailures).toBeUndefined();
});

test('no gates set says so, not "0 gates passed"; a whole run that measured nothing is never a pass', () => {
  const runs = [success()];
  expect(headlines(summarize(runs, { complete: true, now, gates: [] }), runs)).toMatchObject({ console: '✓ no gates set · complete · 1 of 1 planned run recorded', state: 'pass' });
  expect(verdictLines(summarize([], { complete: true, now, gates: [{}] }))).toMatchObject({ state: 'fail', headline: 'nothing measured · complete · 0 of 0 planned runs recorded' });
  const allLeftOut = [errored('crashed')];
  const nothing = summarize(allLeftOut, { complete: true, now, gates: [{ minSuccessRate: 0.5 }], maxErrors: 1 });
  expect(verdictLines(nothing)).toMatchObject({ state: 'fail', headline: '1 run errored, 1 allowed (maxErrors 1) · nothing measured · complete · 1 of 1 planned run recorded' });
  // A cell whose every run was left out has no rate: no gate judges it, and its heatmap squares say so.
  expect(nothing.gates!.breaches).toEqual([]);
  expect(cheerio.load(renderHtml(nothing, allLeftOut))('table.heat td').first().text()).toBe('—n=0 · +1 error');
});

test('a test of a config with no named project is named by its title alone, never "title ()"', () => {
  const runs = [attachedRunRecord({ test: { id: 'a', title: 'upvote', project: '' } })];
  const summary = summarize(runs, { complete: true, now, planned: 2, missing: [{ id: 'm', title: 'never ran', project: '' }], notApplicable: [{ id: 'n', title: 'comment', project: '', reason: 'not applicable: reply on hn-recorded: no comments' }] });
  const html = renderHtml(summary, runs);
  const $ = cheerio.load(html);
  expect($('tr[id="run-a"] td').first().text()).toBe('upvote');
  expect($('#verdict li').map((_, item) => $(item).text()).get()).toEqual(expect.arrayContaining(['missing: never ran', 'n/a: comment: not applicable: reply on hn-recorded: no comments']));
  expect(renderMarkdown(summary)).toContain('- missing: never ran\n');
  expect(`${html}${renderMarkdown(summary)}`).not.toContain(' ()');
});

// ── The reporter, in a child Playwright run of tests/fixtures/verdict (no list reporter, no named project) ──

const config = 'tests/fixtures/verdict/playwright.config.ts';
const lastLine = (stdout: string) => stdout.trimEnd().split('\n').at(-1);

test('a test whose run was recorded and whose own expect then fails: the last line says so, and the exit status agrees', async () => {
  const { env } = workspace('harness-eval-verdict-');
  const result = await playwright(['test', '-c', config], { ...env, SCENARIO: 'expect-fails' });
  expect(result.code, result.stdout).toBe(1);
  expect(lastLine(result.stdout)).toBe('harness-eval: ✗ 1 test failed outside the gates · 1 gate passed · complete · 2 of 2 planned runs recorded');
  expect(result.stdout).not.toContain('✓');
  expect(readSummary(env.REPORT_DIR).playwrightFailures).toEqual({ tests: [{ id: expect.any(String), title: 'a run recorded, then its own expect fails', project: '', status: 'failed', error: 'Error: the spec asks for more than the run' }], errors: [] });
  expect(readFileSync(join(env.REPORT_DIR, 'summary.md'), 'utf8')).toContain('**✗ 1 test failed outside the gates · 1 gate passed');
});

test('a run that errored fails a run its tests passed, unless maxErrors allows it; its row shows the agent\'s stderr', async () => {
  const { env } = workspace('harness-eval-verdict-');
  const failed = await playwright(['test', '-c', config], { ...env, SCENARIO: 'error' });
  expect(failed.code, failed.stdout).toBe(1);
  expect(lastLine(failed.stdout)).toBe('harness-eval: ✗ 1 run errored, none allowed (maxErrors 0) · 1 gate passed · complete · 2 of 2 planned runs recorded');
  expect(failed.stdout).toContain('harness-eval: 1 run left out of every rate: an agent that could not start: error: the agent exited 2 before it did anything\n');
  const allowed = await playwright(['test', '-c', config], { ...env, SCENARIO: 'error', MAX_ERRORS: '1' });
  expect(allowed.code, allowed.stdout).toBe(0);
  expect(lastLine(allowed.stdout)).toBe('harness-eval: ✓ 1 run errored, 1 allowed (maxErrors 1) · 1 gate passed · complete · 2 of 2 planned runs recorded');
  const summary = readSummary(env.REPORT_DIR);
  expect(summary.cells[0]).toMatchObject({ runs: 1, errors: 1, successes: 1 });
  const $ = cheerio.load(readFileSync(join(env.REPORT_DIR, 'index.html'), 'utf8'));
  const row = $('tr[id^="run-"]').filter((_, element) => $(element).text().includes('could not start'));
  expect(row.find('td').eq(1).text()).toBe('error: the agent exited 2 before it did anything');
  const stderr = row.next('tr.detail').find('details.stderr');
  expect(stderr.find('summary').text()).toBe('agent stderr, 1 line');
  expect(stderr.find('pre').text()).toBe("python3: can't open file '/work/agents/nothere.py': [Errno 2] No such file or directory\n");
  // Only the run that had it shows it.
  expect($('details.stderr')).toHaveLength(1);
});

test('Ctrl-C mid-run: the run in flight is interrupted and in no rate, the verdict incomplete, never a breach, and the exit status not green', async () => {
  const { dir, env } = workspace('harness-eval-verdict-');
  const marker = join(dir, 'started');
  let poll: NodeJS.Timeout | undefined;
  const result = await playwright(['test', '-c', config], { ...env, SCENARIO: 'interrupted', STARTED_MARKER: marker, GATES: '[{ "minSuccessRate": 0.8 }]' }, (_stdout, kill) => {
    poll ??= setInterval(() => {
      if (!existsSync(marker)) return;
      clearInterval(poll);
      kill('SIGINT');
    }, 100);
  });
  expect(result.code, result.stdout).not.toBe(0);
  expect(result.stdout).not.toContain('breach');
  expect(lastLine(result.stdout)).toBe('harness-eval: ⚠ 1 run interrupted · incomplete: 2 of 2 planned runs recorded · 1 gate not judged: incomplete');
  expect(readSummary(env.REPORT_DIR)).toMatchObject({ complete: false, totals: { runs: 1, successes: 1, interrupted: 1 }, gates: { breaches: [] } });
});

test('a test that recorded no run is named by its title alone where the config names no project', async () => {
  const { env } = workspace('harness-eval-verdict-');
  const result = await playwright(['test', '-c', config], { ...env, SCENARIO: 'missing' });
  expect(result.code).toBe(1);
  expect(result.stdout).toContain('harness-eval: 1 test recorded no run: a test that fails before its run\n');
  expect(result.stdout).toContain('\n[2/2, 0 left] a test that fails before its run: failed, ');
  expect(result.stdout).not.toContain(' ()');
});
