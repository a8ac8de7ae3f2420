import { test } from '@playwright/test';
import { INTERRUPTED_DETAIL } from '../src/eval/evaluate.ts';
import { interruptedMatrix } from './interrupted-matrix.ts';
import { readSummary, workspace } from './playwright-child.ts';
import { expect } from './support.ts';

/**
 * Ctrl-C in the middle of a matrix (tests/fixtures/resume/): the runs in flight are stopped, judged
 * and recorded as interrupted, excluded from every rate; the runs that ended before are recorded
 * as they were. Before, the runs in flight were recorded as incomplete errors and counted.
 */
test.describe.configure({ timeout: 300_000 });

test('Ctrl-C with two runs in flight: both recorded as interrupted, excluded from every rate; the runs before are recorded as they were', async () => {
  const { dir, env } = workspace('harness-eval-interrupt-');
  const { child, results } = await interruptedMatrix(env, dir);
  expect(child.code, child.stdout).not.toBe(0);
  const interrupted = results.filter((result) => result.status === 'interrupted');
  expect(interrupted.map((result) => result.project), child.stdout).toEqual(['looker · scripted:diligent', 'looker · scripted:diligent']);
  for (const { runs } of interrupted) {
    // Stopped after it had read the page: judged, and still no outcome of the agent's.
    expect(runs).toMatchObject([{ excluded: { reason: 'interrupted', detail: INTERRUPTED_DETAIL }, incomplete: true, judged: true, agent: 'looker' }]);
  }
  // Every test before them ended and recorded its run, none of them excluded.
  const ended = results.filter((result) => result.status === 'passed');
  expect(ended).toHaveLength(4);
  for (const { runs } of ended) expect(runs).toMatchObject([{ incomplete: false }]);
  expect(ended.flatMap(({ runs }) => runs.filter((run) => run.excluded))).toEqual([]);
  // Counted apart, in no rate: the looker's cell has no run to rate, and no gate judges it.
  const summary = readSummary(env.REPORT_DIR);
  expect(summary.totals).toMatchObject({ runs: 4, interrupted: 2 });
  expect(summary.cells.filter((cell) => cell.agent === 'looker')).toMatchObject([{ runs: 0, interrupted: 1 }, { runs: 0, interrupted: 1 }]);
  expect(child.stdout).not.toMatch(/looker[^\n]*: (success|false-success|false-failure) rate/);
});
