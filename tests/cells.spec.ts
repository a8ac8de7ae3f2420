import { join } from 'node:path';
import { test } from '@playwright/test';
import { cells, matrix } from '../src/index.ts';
import type { Summary } from '../src/report/types.ts';
import { playwright, readSummary, workspace } from './playwright-child.ts';
import { expect } from './support.ts';

const config = 'tests/fixtures/cells/playwright.config.ts';

// Two child runs of a small matrix on a loaded machine.
test.describe.configure({ timeout: 300_000 });

test('cells: the cells matrix() makes projects of, with the same names, options and errors', () => {
  const options = { models: ['scripted:overclaimer', 'scripted:diligent'], layers: { bare: [], verified: ['guardrails', 'verify'] as const } };
  const project = { testDir: 'specs/matrix', use: { harnessScreenshots: true } };
  expect(matrix({ ...options, project })).toEqual(cells(options).map(({ name, use }) => ({ ...project, name, use: { ...project.use, ...use } })));
  expect(cells(options)[1]).toEqual({ name: 'scripted:overclaimer · verified', use: { model: 'scripted:overclaimer', modelName: 'scripted:overclaimer', layers: ['guardrails', 'verify'], layerStack: 'verified' } });
  expect(() => cells({ models: ['scripted:genius'], layers: { bare: [] } })).toThrow(/^matrix\(\): models\[0\]: model scripted:genius: unknown scripted double/);
});

/** What a summary says of its cells and gates, without what differs from run to run (times, ids). */
function outcomes(summary: Summary) {
  const cellsOf = summary.cells.map(({ task, agent, model, layers, site, condition, runs, successes, claimed, falseSuccesses, falseSuccessTrials, falseFailures, sideEffectRuns, incomplete, retried, iterations, passHatK }) => ({
    ...{ task, agent, model, layers, site, condition, runs, successes, claimed, falseSuccesses, falseSuccessTrials, falseFailures, sideEffectRuns, incomplete, retried, iterations, passHatK },
  }));
  return { planned: summary.planned, recorded: summary.recorded, complete: summary.complete, totals: summary.totals, cells: cellsOf, gates: summary.gates };
}

test('a matrix as projects and as cells of one project: the same trials, outcomes, gates and baseline', async () => {
  const projects = workspace('harness-eval-cells-projects-');
  const asProjects = await playwright(['test', '-c', config, '--repeat-each', '2'], { ...projects.env, LAYOUT: 'projects' });
  const tests = workspace('harness-eval-cells-tests-');
  const baseline = join(projects.env.REPORT_DIR, 'summary.json');
  const asCells = await playwright(['test', '-c', config, '--repeat-each', '2'], { ...tests.env, LAYOUT: 'cells', BASELINE: baseline });

  // The bare stack's false successes breach the gate either way: the run fails on the gate alone.
  for (const child of [asProjects, asCells]) {
    expect(child.code, child.stdout).toBe(1);
    expect(child.stdout).toContain('✗ gates breached in 1 cell · complete · 4 of 4 planned runs recorded');
  }
  const [before, after] = [readSummary(projects.env.REPORT_DIR), readSummary(tests.env.REPORT_DIR)];
  expect(outcomes(after)).toEqual(outcomes(before));
  expect(after.cells.map(({ model, layers, runs }) => `${model} · ${layers}: ${runs}`)).toEqual(['scripted:diligent · bare: 2', 'scripted:overclaimer · bare: 2']);
  expect(after.planned).toBe(4);
  // The cells layout's run compares with the projects layout's, cell by cell: the cells are conditions, not projects.
  expect(after.comparison?.cells.map(({ status, runs }) => ({ status, runs }))).toEqual([
    { status: 'changed', runs: { before: 2, after: 2 } },
    { status: 'changed', runs: { before: 2, after: 2 } },
  ]);
});
