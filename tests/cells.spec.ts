import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from '@playwright/test';
import { cells, matrix } from '../src/index.ts';
import { outsideMatrix } from '../src/playwright/fixtures.ts';
import { takenBy } from '../src/playwright/plain-cells.ts';
import type { Summary } from '../src/report/types.ts';
import { collect, playwright, readSummary, workspace } from './playwright-child.ts';
import { expect } from './support.ts';

const config = 'tests/fixtures/cells/playwright.config.ts';

// Two child runs of a small matrix on a loaded machine.
test.describe.configure({ timeout: 300_000 });

test('matrix: one project, its cells named and checked by cells(), each cell a describe block its tests run in', () => {
  const options = { models: ['scripted:overclaimer', 'scripted:diligent'], layers: { bare: [], verified: ['guardrails', 'verify'] as const } };
  const project = { testDir: 'specs/matrix', use: { harnessScreenshots: true } };
  const names = ['scripted:overclaimer · bare', 'scripted:overclaimer · verified', 'scripted:diligent · bare', 'scripted:diligent · verified'];
  expect(matrix({ ...options, project })).toEqual([{ ...project, name: 'matrix', use: { harnessScreenshots: true, matrix: { project: 'matrix', cells: names } } }]);
  expect(matrix({ ...options, project: { name: 'nightly' } })[0]!.name).toBe('nightly');
  expect(cells(options).map((cell) => cell.name)).toEqual(names);
  expect(cells(options)[1]).toEqual({ name: 'scripted:overclaimer · verified', use: { cell: 'scripted:overclaimer · verified', model: 'scripted:overclaimer', modelName: 'scripted:overclaimer', layers: ['guardrails', 'verify'], layerStack: 'verified' } });
  expect(() => cells({ models: ['scripted:genius'], layers: { bare: [] } })).toThrow(/^matrix\(\): models\[0\]: model scripted:genius: unknown scripted double/);
  expect(() => matrix({ models: ['scripted:genius'], layers: { bare: [] } })).toThrow(/^matrix\(\): models\[0\]: model scripted:genius: unknown scripted double/);
});

test('matrix() called in a test (to read its cells) declares no matrix: the files a worker loads after it declare their tests as written', () => {
  matrix({ models: ['scripted:diligent'], layers: { bare: [] } });
  expect(takenBy(join(process.cwd(), 'tests', 'sandbox.spec.ts'))).toBeUndefined();
});

test('HARNESS_CELLS: keeps the cells it names, and a name of no cell is one line listing them', () => {
  const options = { models: ['scripted:overclaimer', 'scripted:diligent'], layers: { bare: [], 'verified+login': ['guardrails', 'verify', 'login'] as const } };
  const env = { HARNESS_CELLS: 'scripted:diligent · verified+login, scripted:overclaimer · bare' };
  expect(cells(options, env).map((cell) => cell.name)).toEqual(['scripted:overclaimer · bare', 'scripted:diligent · verified+login']);
  expect(cells(options, { HARNESS_CELLS: ' ' })).toHaveLength(4);
  expect(() => cells(options, { HARNESS_CELLS: 'scripted:diligent · verified' })).toThrow(
    'HARNESS_CELLS: no cell named "scripted:diligent · verified" (the cells: scripted:overclaimer · bare, scripted:overclaimer · verified+login, scripted:diligent · bare, scripted:diligent · verified+login)',
  );
});

test('outsideMatrix: a test of a matrix project runs in one of its cells, or says why not', () => {
  const project = { project: 'nightly', cells: ['a · bare', 'a · verified'] };
  expect(outsideMatrix(undefined, undefined)).toBeUndefined();
  expect(outsideMatrix(undefined, 'x · bare')).toBeUndefined();
  expect(outsideMatrix(project, 'a · verified')).toBeUndefined();
  expect(outsideMatrix(project, undefined)).toMatch(/^matrix\(\): this test of project "nightly" runs in none of its cells, so it would measure the default model, not the matrix's: declare its tests with harness-eval's test/);
  expect(outsideMatrix(project, 'b · bare')).toBe(`matrix(): cell "b · bare" is not one of project "nightly"'s cells (a · bare, a · verified): the spec's cells() and the config's matrix() are given other options`);
});

/** What a summary says of its cells and gates, without what differs from run to run (times, ids). */
function outcomes(summary: Summary) {
  const cellsOf = summary.cells.map(({ task, agent, model, layers, site, condition, runs, successes, claimed, falseSuccesses, falseSuccessTrials, falseFailures, sideEffectRuns, incomplete, retried, iterations, passHatK }) => ({
    ...{ task, agent, model, layers, site, condition, runs, successes, claimed, falseSuccesses, falseSuccessTrials, falseFailures, sideEffectRuns, incomplete, retried, iterations, passHatK },
  }));
  return { planned: summary.planned, recorded: summary.recorded, complete: summary.complete, totals: summary.totals, cells: cellsOf, gates: summary.gates };
}

/** How many worker processes a child run started (each result says the worker that ran it). */
function workersOf(jsonReport: string): number {
  return new Set(collect(JSON.parse(readFileSync(jsonReport, 'utf8'))).map(({ result }) => result.workerIndex)).size;
}

test("a matrix as projects and as matrix()'s cells: the same trials, outcomes, gates and baseline, its workers started once per repeat, not per cell", async () => {
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
  // One worker (workers: 1) per repeat index, as Playwright keys workers; a project per cell starts one per cell and repeat.
  expect(workersOf(tests.env.JSON_OUT)).toBe(2);
  expect(after.workers).toEqual({ count: 1 });
  expect(workersOf(projects.env.JSON_OUT)).toBe(4);
  // The cells layout's run compares with the projects layout's, cell by cell: the cells are conditions, not projects.
  expect(after.comparison?.cells.map(({ status, runs }) => ({ status, runs }))).toEqual([
    { status: 'changed', runs: { before: 2, after: 2 } },
    { status: 'changed', runs: { before: 2, after: 2 } },
  ]);
});

test("a spec written once, with no cells() loop, runs in every cell of matrix()'s project, its worker started once; another project taking it too fails one line", async () => {
  const plain = workspace('harness-eval-cells-plain-');
  const child = await playwright(['test', '-c', config], { ...plain.env, LAYOUT: 'plain' });
  const summary = readSummary(plain.env.REPORT_DIR);
  expect(summary.cells.map(({ model, layers, runs }) => `${model} · ${layers}: ${runs}`), child.stdout).toEqual(['scripted:diligent · bare: 1', 'scripted:overclaimer · bare: 1']);
  expect(summary.planned).toBe(2);
  expect(workersOf(plain.env.JSON_OUT)).toBe(1);
  // Located where the spec declares it, as Playwright locates any test.
  const specs = (suite: any): any[] => [...(suite.specs ?? []), ...(suite.suites ?? []).flatMap(specs)];
  const report = JSON.parse(readFileSync(plain.env.JSON_OUT, 'utf8'));
  expect(new Set(report.suites.flatMap(specs).map(({ file, line, column }: any) => `${file}:${line}:${column}`))).toEqual(new Set(['upvote.ts:5:3']));

  const both = workspace('harness-eval-cells-both-');
  const ambiguous = await playwright(['test', '-c', config], { ...both.env, LAYOUT: 'both' });
  expect(ambiguous.code).toBe(1);
  expect(ambiguous.stdout).toContain('matrix(): this spec runs in project "matrix"\'s cells and in project "other" too');
  expect(ambiguous.stdout).not.toMatch(/^\s+at /m);
  expect(readSummary(both.env.REPORT_DIR).cells.map(({ runs }) => runs)).toEqual([1, 1]);
});

test('HARNESS_CELLS runs the cells it names, and the summary says it is that part of the matrix, never a baseline for the whole', async () => {
  const part = workspace('harness-eval-cells-part-');
  const child = await playwright(['test', '-c', config], { ...part.env, LAYOUT: 'cells', HARNESS_CELLS: 'scripted:diligent · bare' });
  const summary = readSummary(part.env.REPORT_DIR);
  expect(summary.cells.map(({ model, layers, runs }) => `${model} · ${layers}: ${runs}`), child.stdout).toEqual(['scripted:diligent · bare: 1']);
  expect(summary.partial?.selection).toEqual(['cells scripted:diligent · bare']);
  const unknown = await playwright(['test', '-c', config], { ...part.env, LAYOUT: 'cells', HARNESS_CELLS: 'scripted:diligent · verified' });
  expect(unknown.code).toBe(1);
  expect(unknown.stdout).toContain('HARNESS_CELLS: no cell named "scripted:diligent · verified" (the cells: scripted:overclaimer · bare, scripted:diligent · bare)');
  expect(unknown.stdout).not.toMatch(/^\s+at /m);
});
