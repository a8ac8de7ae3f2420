import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from '@playwright/test';
import { HARNESS_RUN_START_ATTACHMENT } from '../src/playwright/fixtures.ts';
import { openRunJournal, RESUME_ENV, runJournal } from '../src/playwright/resume.ts';
import type { PlannedRun } from '../src/core/run.ts';
import type { Summary } from '../src/report/types.ts';
import { collect, playwright, readSummary, sharedRun, workspace } from './playwright-child.ts';
import { interruptedMatrix } from './interrupted-matrix.ts';
import { attachedRunRecord, expect } from './support.ts';

/**
 * Resume (tests/fixtures/resume/): a matrix interrupted part way, then run again with
 * HARNESS_RESUME=1, runs only the runs not yet recorded and writes one summary with the earlier
 * ones: the same cells as one run straight through, one history entry, the interrupted runs in no
 * rate. Before, a rerun ran (and paid for) every run again.
 */
test.describe.configure({ timeout: 600_000 });

const matrix = (env: Record<string, string>) => playwright(['test', '-c', 'tests/fixtures/resume/playwright.config.ts'], env);
const history = (reports: string) => (existsSync(join(reports, 'history')) ? readdirSync(join(reports, 'history')) : []);
/** A summary's cells without what differs from one run to the next (time), in a fixed order. */
const cells = (summary: Summary) =>
  summary.cells
    .map(({ wallMs: _time, runIds, ...cell }) => ({ ...cell, runIds: [...runIds].sort() }))
    .sort((a, b) => JSON.stringify([a.task, a.agent, a.model, a.layers]).localeCompare(JSON.stringify([b.task, b.agent, b.model, b.layers])));

// The run straight through, made once: the first test compares with it, the second resumes its copy.
const straightRun = sharedRun('harness-eval-straight-', ['test', '-c', 'tests/fixtures/resume/playwright.config.ts']);

test('a matrix interrupted part way and resumed gives the summary of one run straight through, and one history entry', async () => {
  const { child: whole, ...straight } = await straightRun();
  expect(readSummary(straight.env.REPORT_DIR)).toMatchObject({ complete: true, recorded: 8, planned: 8 });

  const { dir, env } = workspace('harness-eval-resumed-');
  const { results: first } = await interruptedMatrix(env, dir);
  expect(first.filter((result) => result.status === 'interrupted')).toHaveLength(2);
  expect(history(env.REPORT_DIR)).toEqual([]);

  const resumed = await matrix({ ...env, [RESUME_ENV]: '1' });
  expect(resumed.stdout).toMatch(/^harness-eval: resuming \(HARNESS_RESUME\): 4 runs recorded earlier in .* are given back, not run again; the rest run$/m);
  const again = collect(JSON.parse(readFileSync(env.JSON_OUT, 'utf8')));
  const givenBack = again.filter(({ result }) => (result.annotations as Array<{ type: string; description?: string }>).some((note) => note.type === 'harness-eval' && /given back from the run journal/.test(note.description ?? '')));
  // The 4 runs recorded before the interruption are given back, not run; the 2 interrupted and the 2 never started run now.
  expect(givenBack, resumed.stdout).toHaveLength(4);
  // Their progress lines say so, rather than a time as if they had run now.
  expect(resumed.stdout.split('\n').filter((line) => line.endsWith(', given back (recorded earlier, not run again)')), resumed.stdout).toHaveLength(4);
  for (const { result } of givenBack) expect((result.attachments as Array<{ name: string }>).map((attachment) => attachment.name)).not.toContain(HARNESS_RUN_START_ATTACHMENT);
  expect(again.filter(({ project }) => project.startsWith('looker')).map(({ result }) => result.status)).toEqual(['passed', 'passed', 'passed', 'passed']);

  const summary = readSummary(env.REPORT_DIR);
  expect(summary).toMatchObject({ complete: true, recorded: 8, planned: 8 });
  expect(summary.partial).toBeUndefined();
  expect(cells(summary)).toEqual(cells(readSummary(straight.env.REPORT_DIR)));
  expect(summary.totals).toEqual(readSummary(straight.env.REPORT_DIR).totals);
  // One history entry: the interrupted invocation is partial, never kept; the resumed one is the whole run.
  expect(history(env.REPORT_DIR)).toHaveLength(1);
  expect(resumed.code).toBe(whole.code);
});

test('a resume after a whole run runs nothing again; without HARNESS_RESUME the journal starts again and every run runs', async () => {
  const { env } = await straightRun();
  const before = readSummary(env.REPORT_DIR);
  const resumed = await matrix({ ...env, [RESUME_ENV]: '1' });
  expect(resumed.stdout).toContain(': 8 runs recorded earlier in ');
  expect(cells(readSummary(env.REPORT_DIR))).toEqual(cells(before));
  const fresh = await matrix(env);
  expect(fresh.stdout).not.toContain('resuming');
  const results = collect(JSON.parse(readFileSync(env.JSON_OUT, 'utf8')));
  expect(results.filter(({ result }) => (result.attachments as Array<{ name: string }>).some((attachment) => attachment.name === HARNESS_RUN_START_ATTACHMENT))).toHaveLength(8);
});

test.describe('the run journal', () => {
  const planned = (fields: Partial<PlannedRun> = {}): PlannedRun => {
    const { test: origin, ...run } = attachedRunRecord();
    return { task: run.task, agent: run.agent, model: run.model, layers: run.layers, site: run.site, condition: run.condition, test: origin, ...fields };
  };
  const returned = { task: 'Upvote the first post.', agent: 'harness-eval', model: 'scripted:diligent', layers: [], site: 'hn-recorded' };

  test('gives a run back only when resuming, and only to a trial of the same cell; keeps no run that says nothing of its agent', () => {
    const reports = test.info().outputPath('reports');
    const env: NodeJS.ProcessEnv = {};
    expect(openRunJournal(reports, env)).toBeUndefined();
    const journal = runJournal(env)!;
    const run = attachedRunRecord();
    journal.keep(run, returned);
    journal.keep({ ...attachedRunRecord({ test: { run: 2 } }), excluded: { reason: 'interrupted', detail: 'stopped' } }, returned);
    // Not resuming: every run runs.
    expect(journal.recorded(planned())).toBeUndefined();
    const resumed = { ...env, [RESUME_ENV]: '1' };
    expect(openRunJournal(reports, resumed)).toMatch(/: 1 run recorded earlier in /);
    const again = runJournal(resumed)!;
    expect(again.recorded(planned({ test: { ...run.test, retry: 1 } }))).toMatchObject({ attached: { claimed: run.claimed, test: { retry: 1 } }, returned: { ...returned, actual: run.actual } });
    expect(again.recorded(planned({ test: { ...run.test, run: 2 } }))).toBeUndefined();
    // The config changed since: another model, or another revision of the task, is another cell.
    expect(again.recorded(planned({ condition: { ...run.condition, model: { id: 'scripted:overclaimer' } } }))).toBeUndefined();
    expect(again.recorded(planned({ condition: { ...run.condition, task: { revision: 2 } } }))).toBeUndefined();
    // A fresh invocation empties it.
    openRunJournal(reports, env);
    expect(runJournal(resumed)!.recorded(planned())).toBeUndefined();
  });

  test('HARNESS_RESUME with no journal to resume from (no harness-eval reporter) is one line', () => {
    expect(() => runJournal({ [RESUME_ENV]: '1' })).toThrow(/^HARNESS_RESUME: this run has no run journal to resume from \(HARNESS_EVAL_JOURNAL\): add harness-eval\/reporter to the config's reporters$/);
    expect(runJournal({ [RESUME_ENV]: '0' })).toBeUndefined();
  });
});
