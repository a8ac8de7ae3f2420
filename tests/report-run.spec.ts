import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from '@playwright/test';
import * as cheerio from 'cheerio';
import { playwright, readSummary, workspace } from './playwright-child.ts';
import { expect } from './support.ts';

/**
 * The report of a real run, read back: the project in tests/fixtures/report, run twice in a child
 * Playwright, so the second run has the first as its baseline from the history.
 */
test.describe.configure({ timeout: 300_000 });

const config = 'tests/fixtures/report/playwright.config.ts';

test('a run row links its trace and its test in Playwright\'s report; the history keeps each whole run and the next compares with it', async () => {
  const { dir, env } = workspace('harness-eval-report-run-');
  const first = await playwright(['test', '-c', config], env);
  expect(first.code, first.stdout).toBe(0);
  expect(first.stdout).toContain('harness-eval: no earlier summary in');
  // Words: one iteration is `1 iteration`.
  expect(first.stdout).toMatch(/synthetic-task · harness-eval · double:a · bare · hn-recorded: false success, 1 side effect, 1 iteration, finished/);
  expect(first.stdout).not.toMatch(/\b1 (iterations|cells|runs|tests)\b/);
  const history = readdirSync(join(env.REPORT_DIR, 'history'));
  expect(history).toHaveLength(1);
  expect(history[0]).toMatch(/^\d{4}-\d\d-\d\dT\d\d-\d\d-\d\dZ\.json$/);

  const summary = readSummary(env.REPORT_DIR);
  expect(summary.comparison).toBeUndefined();
  // The two stacks differ by `login` alone: the ablation pairs them.
  expect(summary.ablation!.map((effect) => [effect.layer, effect.without, effect.with])).toEqual([['login', 'verified', 'verified+login']]);

  const $ = cheerio.load(readFileSync(join(env.REPORT_DIR, 'index.html'), 'utf8'));
  const harnessRuns = summary.cells.filter((cell) => cell.task === 'upvote-first-post').flatMap((cell) => cell.runIds);
  expect(harnessRuns).toHaveLength(2);
  for (const id of harnessRuns) {
    const row = $(`tr[id^="run-"]`).filter((_, element) => $(element).find(`a[href$="#?testId=${id}"]`).length > 0);
    expect(row).toHaveLength(1);
    expect(row.find('a').first().attr('href')).toBe(`playwright/index.html#?testId=${id}`);
    const trace = row.find('a').filter((_, link) => $(link).text() === 'trace').attr('href')!;
    expect(trace).toMatch(/trace\.zip$/);
    expect(existsSync(join(env.REPORT_DIR, decodeURI(trace)))).toBe(true);
  }
  expect(existsSync(join(env.REPORT_DIR, 'playwright', 'index.html'))).toBe(true);

  // The synthetic run's row: its claim, the oracle's verdict, stop reason, side effect and transcript.
  const synthetic = $('tr[id^="run-"]').filter((_, element) => $(element).text().includes('a run of one iteration'));
  expect(synthetic.find('> td').map((_, cell) => $(cell).text()).get().slice(1, 5)).toEqual(['false success', 'finished', '1', 'harness upvoted 46188654 ("the second story")']);
  const detail = synthetic.next('tr.detail');
  expect(detail.find('.claim').text()).toBe('claim claimed success: I upvoted the first story.');
  expect(detail.find('.oracle').text()).toBe('oracle ✗ the first story is upvoted: 46194762 was not upvoted');
  expect(detail.find('summary').text()).toBe('transcript, 2 lines');
  expect(detail.find('pre').text()).toContain('model: Voting now. click({"ref":"e12"})');
  expect(detail.find('pre').text()).toContain('end: claimed success, finished after 1 iteration');

  // Its own output folder: the first run's traces stay where the first report links them.
  const second = await playwright(['test', '-c', config], { ...env, OUTPUT_DIR: join(dir, 'test-results-2') });
  expect(second.code, second.stdout).toBe(0);
  expect(readdirSync(join(env.REPORT_DIR, 'history'))).toHaveLength(2);
  const compared = readSummary(env.REPORT_DIR);
  expect(compared.comparison!.baseline).toEqual({ source: `history/${history[0]}`, generatedAt: summary.generatedAt });
  // One run against one: even all-or-nothing is within chance, and the comparison says so.
  expect(compared.comparison!.cells.map((change) => [change.cell.split(' · ')[3], change.status, change.tooFewTrials])).toEqual([
    ['bare', 'changed', true],
    ['verified', 'changed', true],
    ['verified+login', 'changed', true],
  ]);
  expect(second.stdout).toContain(`harness-eval: compared with history/${history[0]}`);
  expect(readFileSync(join(env.REPORT_DIR, 'summary.md'), 'utf8')).toContain(`## Since history/${history[0]}`);
  expect(readFileSync(join(env.REPORT_DIR, 'index.html'), 'utf8')).toContain('<section id="comparison">');

  // A part of the suite is compared with no whole run, and is no baseline for the next.
  const third = await playwright(['test', '-c', config, '--project', 'synthetic'], env);
  expect(third.code, third.stdout).toBe(0);
  expect(readdirSync(join(env.REPORT_DIR, 'history'))).toHaveLength(2);
  expect(readSummary(env.REPORT_DIR)).toMatchObject({ partial: { selection: ['project synthetic'], shortfall: [] } });
  expect(readSummary(env.REPORT_DIR).comparison).toBeUndefined();
  expect(third.stdout).toContain('harness-eval: no comparison: this run is partial (project synthetic), and the history keeps whole runs only');
});
