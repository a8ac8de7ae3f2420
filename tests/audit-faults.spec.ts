import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from '@playwright/test';
import { z } from 'zod';
import { runRecordSchema, type Summary } from '../src/report/types.ts';
import { auditPlan, crashSites, faultSites, verifyStacks, type AuditCell } from './fixtures/audit-faults/grid.ts';
import { collect, playwright, readSummary, workspace } from './playwright-child.ts';
import { expect } from './support.ts';

/**
 * The faults audit: the replica's faults (latency, 502s, rate limits, session expiry, injection,
 * all at once) × the layer stacks × the scripted doubles, run by a child Playwright
 * (tests/fixtures/audit-faults). The promises: with `verify` on, no false success; every run ends
 * with a stop reason; no run hangs; no result is lost. The bare control must show false successes,
 * or the audit could not have seen one.
 *
 * In `npm test` (CI) it runs a stratified sample of the grid, every fault on every stack with the
 * doubles rotated (grid.ts says how); `npm run audit` (HARNESS_AUDIT=full) runs the whole grid,
 * and is meant for the nightly job.
 */
const config = 'tests/fixtures/audit-faults/playwright.config.ts';
const plan = auditPlan();

/** A run as its harness-run.json attachment holds it, with what the audit quotes of a failure. */
const auditedRunSchema = runRecordSchema.extend({
  summary: z.string(),
  verdicts: z.array(z.object({ detail: z.string() })),
  trace: z.array(z.looseObject({ type: z.string(), recovered: z.boolean().optional() })).default([]),
});
type AuditedRun = z.infer<typeof auditedRunSchema>;

test(`faults audit (${plan.mode}): with verify on no false success, every run stopped with a reason, none hung or lost`, async () => {
  // Far above a run's few seconds each: the child's own timeout finds a hung run.
  test.setTimeout(2 * 60_000 + plan.runs * 10_000);
  const { env } = workspace('harness-eval-audit-faults-');
  const started = Date.now();
  // The child plans the same runs: the mode and rotation are passed on, not read again.
  const child = await playwright(['test', '-c', config], { ...env, HARNESS_AUDIT: plan.mode, HARNESS_AUDIT_ROTATION: String(plan.rotation) });
  const wallMs = Date.now() - started;
  expect(existsSync(env.JSON_OUT) && existsSync(join(env.REPORT_DIR, 'summary.json')), child.stdout.slice(-4000)).toBe(true);

  const summary = readSummary(env.REPORT_DIR);
  const results = collect(JSON.parse(readFileSync(env.JSON_OUT, 'utf8')));
  const runs = results.flatMap(({ result }) => runsAttachedTo(result));
  console.log(figureTable(summary, wallMs));

  // No lost result: every planned test ran once and reported one run, and the summary counts them all.
  expect(results).toHaveLength(plan.runs);
  expect(runs).toHaveLength(plan.runs);
  expect(summary).toMatchObject({ complete: true, totals: { runs: plan.runs } });
  // No hung run: a run that reaches the child's test timeout fails the test with status timedOut.
  const unfinished = results.filter(({ result }) => result.status !== 'passed').map(({ project, result }) => `${project}: ${result.status}`);
  expect(unfinished).toEqual([]);
  expect(child.code).toBe(0);
  // The sample on one worker (its config says why): one worker and browser start for all its runs.
  if (plan.mode === 'sample') expect(new Set(results.map(({ result }) => result.workerIndex))).toEqual(new Set([0]));
  // Every run ends with a stop reason: each cell's stop reasons add up to its runs.
  for (const cell of summary.cells) expect(sum(Object.values(cell.stopReasons)), cellName(cell)).toBe(cell.runs);

  const falseSuccesses = (verified: boolean) => runs.filter((run) => run.falseSuccess && verifyStacks.has(run.layers) === verified);
  expect(falseSuccesses(true).map(describeFalseSuccess)).toEqual([]);
  expect(falseSuccesses(false).length).toBeGreaterThan(0);

  // The page dying mid-run: without `recovery` every run ends incomplete with `error`; with it, every one is recovered and judged.
  const crashed = runs.filter((run) => run.site in crashSites);
  const recovering = crashed.filter((run) => run.layers.endsWith('+recovery'));
  console.log(crashFigures(crashed));
  expect(crashed.length).toBeGreaterThan(0);
  expect(crashed.filter((run) => !run.layers.endsWith('+recovery')).map((run) => [run.stopReason, run.incomplete])).toEqual(crashed.filter((run) => !run.layers.endsWith('+recovery')).map(() => ['error', true]));
  expect(recovering.map((run) => [recovered(run), run.incomplete])).toEqual(recovering.map(() => [true, false]));
});

test("the audit's plan: the sample runs every fault on every stack and with every double, 4 rotations run the full grid, and a bad mode is one line", () => {
  type Run = { model: AuditCell['model']; stack: string; site: string };
  const runsOf = (cells: AuditCell[]): Run[] => cells.flatMap(({ model, stack, sites }) => Object.keys(sites).map((site) => ({ model, stack, site })));
  const distinct = (cells: AuditCell[], key: (run: Run) => string) => new Set(runsOf(cells).map(key));
  const pairs = { 'fault × stack': (run: Run) => `${run.site} · ${run.stack}`, 'fault × double': (run: Run) => `${run.site} · ${run.model}`, 'double × stack': (run: Run) => `${run.model} · ${run.stack}` };
  const triple = (run: Run) => `${run.model} · ${run.stack} · ${run.site}`;
  const full = auditPlan({ HARNESS_AUDIT: 'full' });
  expect(full).toMatchObject({ mode: 'full', runs: 264 });
  const samples = [0, 1, 2, 3].map((rotation) => auditPlan({ HARNESS_AUDIT_ROTATION: String(rotation) }));
  for (const sample of samples) {
    expect(sample.runs).toBe(runsOf(sample.cells).length);
    expect(sample.runs).toBeLessThan(full.runs / 3);
    for (const [name, key] of Object.entries(pairs)) expect(distinct(sample.cells, key), `${name}, rotation ${sample.rotation}`).toEqual(distinct(full.cells, key));
  }
  expect(new Set(samples.flatMap((sample) => runsOf(sample.cells).map(triple)))).toEqual(distinct(full.cells, triple));
  expect(auditPlan({ HARNESS_AUDIT_ROTATION: '5' }).rotation).toBe(1);
  expect(() => auditPlan({ HARNESS_AUDIT: 'nightly' })).toThrow('the faults audit: HARNESS_AUDIT: Invalid option: expected one of "sample"|"full"');
});

/** Whether the run's trace shows the browser recovered after it was lost. */
const recovered = (run: AuditedRun) => run.trace.some((event) => event.type === 'harness_recovery' && event.recovered);

/** The crash fault's outcomes: recovered runs (claimed, actual) and unrecovered ones (incomplete with error). */
function crashFigures(runs: AuditedRun[]): string {
  const withLayer = runs.filter(recovered);
  const without = runs.filter((run) => !recovered(run));
  const count = (list: AuditedRun[], test: (run: AuditedRun) => boolean) => list.filter(test).length;
  return (
    `crash fault: ${withLayer.length} of ${runs.length} runs recovered (claimed ${count(withLayer, (run) => run.claimed)}, actual ${count(withLayer, (run) => run.actual)}); ` +
    `${without.length} unrecovered (${count(without, (run) => run.incomplete && run.stopReason === 'error')} incomplete with error)`
  );
}

function runsAttachedTo(result: { attachments: Array<{ name: string; body?: string }> }): AuditedRun[] {
  return result.attachments
    .filter((attachment) => attachment.name === 'harness-run.json' && attachment.body)
    .map((attachment) => auditedRunSchema.parse(JSON.parse(Buffer.from(attachment.body!, 'base64').toString('utf8'))));
}

/** What a false success was, in a line: the cell, the claim, and what the oracle found. */
function describeFalseSuccess(run: AuditedRun): string {
  return `${run.model} · ${run.layers} · ${run.site}: claimed "${run.summary}", ${run.stopReason} after ${run.iterations} iterations; oracle: ${run.verdicts.map((verdict) => verdict.detail).join('; ')}`;
}

const sum = (values: number[]) => values.reduce((total, value) => total + value, 0);
const cellName = (cell: Summary['cells'][number]) => `${cell.model} · ${cell.layers} · ${cell.site}`;

/** The audit's figures by fault site and in all: runs, false successes with verify on and bare, successes, stop reasons. */
function figureTable(summary: Summary, wallMs: number): string {
  const row = (label: string, cells: Summary['cells']) => {
    const verified = cells.filter((cell) => verifyStacks.has(cell.layers));
    const bare = cells.filter((cell) => !verifyStacks.has(cell.layers));
    const count = (list: Summary['cells'], key: 'runs' | 'falseSuccesses' | 'successes') => sum(list.map((cell) => cell[key]));
    const reasons = new Map<string, number>();
    for (const cell of cells) for (const [reason, n] of Object.entries(cell.stopReasons)) reasons.set(reason, (reasons.get(reason) ?? 0) + n);
    return [
      label,
      String(count(cells, 'runs')),
      `${count(verified, 'falseSuccesses')}/${count(verified, 'runs')}`,
      `${count(bare, 'falseSuccesses')}/${count(bare, 'runs')}`,
      `${count(cells, 'successes')}`,
      [...reasons].map(([reason, n]) => `${reason} ${n}`).join(', '),
    ];
  };
  const rows = [
    ['fault site', 'runs', 'false successes, verify on', 'false successes, bare', 'successes', 'stop reasons'],
    ...Object.keys(faultSites).map((site) => row(site, summary.cells.filter((cell) => cell.site === site))),
    row('all', summary.cells),
  ];
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((cells) => cells[column]!.length)));
  const lines = rows.map((cells) => cells.map((cell, column) => (column === 0 || column === cells.length - 1 ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!))).join('  ').trimEnd());
  const verified = sum(summary.cells.filter((cell) => verifyStacks.has(cell.layers)).map((cell) => cell.runs));
  return [`faults audit (${plan.mode}, rotation ${plan.rotation}): ${summary.totals.runs} runs (${verified} with verify on), child run ${(wallMs / 1000).toFixed(0)} s`, ...lines].join('\n');
}
