import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from '@playwright/test';
import type { Summary } from '../src/report/types.ts';
import { playwright, readSummary, workspace, type Child } from './playwright-child.ts';
import { blobWorkers, expect } from './support.ts';

/**
 * examples/nightly-actions/nightly.yml run locally as written: its steps with an `id` run through
 * bash as GitHub runs them (the shards as separate processes, each on its own "machine": a report
 * folder of its own), the artifact actions as folder copies, and two nights in a row, the second
 * comparing with the history the first kept. The merged summary equals one unsharded run's.
 */
test.describe.configure({ timeout: 600_000 });

const WORKFLOW = readFileSync('examples/nightly-actions/nightly.yml', 'utf8');
const CONFIG = 'examples/nightly-actions/playwright.config.ts';
const SHARDS = 2;

/** A step of the workflow by its id: its `run` script (a line or a `|` block) and its `with` and `env` entries. */
function step(id: string): { run?: string; with: Record<string, string>; env: Record<string, string> } {
  const lines = WORKFLOW.split('\n');
  const start = lines.findIndex((line) => line.trim() === `- id: ${id}`);
  if (start < 0) throw new Error(`nightly.yml has no step ${id}`);
  const indent = lines[start]!.indexOf('-') + 2;
  const body: string[] = [];
  for (const line of lines.slice(start + 1)) {
    if (line.trim() !== '' && line.search(/\S/) < indent) break;
    body.push(line.slice(indent));
  }
  const block = (key: string) => {
    const at = body.findIndex((line) => line.startsWith(`${key}:`));
    if (at < 0) return [];
    const rest = [];
    for (const line of body.slice(at + 1)) {
      if (line.trim() !== '' && !line.startsWith('  ')) break;
      rest.push(line.slice(2));
    }
    return rest;
  };
  const map = (key: string) => Object.fromEntries(block(key).filter((line) => line.includes(': ')).map((line) => [line.slice(0, line.indexOf(': ')).trim(), line.slice(line.indexOf(': ') + 2).trim()]));
  const runLine = body.find((line) => line.startsWith('run:'));
  const run = runLine === undefined ? undefined : runLine.trim() === 'run: |' ? block('run').join('\n') : runLine.slice('run:'.length).trim();
  return { run, with: map('with'), env: map('env') };
}

/** The step's script, its expressions given their values here, run as GitHub runs it, with the matrix this test measures. */
function runStep(id: string, env: Record<string, string>, expressions: Record<string, string> = {}): Promise<Child> {
  let script = step(id).run!;
  for (const [expression, value] of Object.entries(expressions)) script = script.replaceAll(`\${{ ${expression} }}`, value);
  expect(script, `${id}: an expression left unset`).not.toContain('${{');
  return bash(script, { HARNESS_MODELS: 'scripted:overclaimer,scripted:diligent', REPEAT_EACH: '1', ...env });
}

/** What a cell's runs came to, without the wall times no two runs share. */
const outcomes = (summary: Summary) =>
  summary.cells.map(({ task, agent, model, layers, site, runs, successes, claimed, falseSuccesses, falseFailures, incomplete, sideEffectRuns, iterations }) => ({ task, agent, model, layers, site, runs, successes, claimed, falseSuccesses, falseFailures, incomplete, sideEffectRuns, iterations: iterations.mean }));
const history = (reportDir: string) => (existsSync(join(reportDir, 'history')) ? readdirSync(join(reportDir, 'history')) : []);

test('the nightly workflow, run locally as written: shards as processes, blobs merged, the gate, the history as next night\'s baseline', async () => {
  const { dir } = workspace('harness-eval-shards-');
  const artifacts = join(dir, 'artifacts');
  // The workflow's shard count and its matrix agree (the merge job waits for that many blobs).
  const shardList = /shard: \[([\d, ]+)\]/.exec(WORKFLOW)![1]!.split(',').map((n) => Number(n));
  expect(shardList).toHaveLength(Number(/SHARD_TOTAL: (\d+)/.exec(WORKFLOW)![1]));
  expect(step('upload-blob').with).toMatchObject({ name: 'blob-${{ matrix.shard }}', path: '${{ env.HARNESS_REPORT_DIR }}/blob' });
  expect(step('download-blobs').with).toMatchObject({ pattern: 'blob-*', 'merge-multiple': 'true', path: 'all-blobs' });
  expect(step('upload-history').with).toMatchObject({ name: 'harness-history', path: '${{ env.HARNESS_REPORT_DIR }}/history' });

  // The same matrix unsharded, in one process: what the merge must equal.
  const whole = join(dir, 'whole');
  const one = await playwright(['test', '-c', CONFIG, '--workers', '1'], { HARNESS_MODELS: 'scripted:overclaimer,scripted:diligent', HARNESS_REPORT_DIR: whole, OUTPUT_DIR: join(whole, 'test-results') });
  expect(one.code, one.stdout).toBe(0);
  const unsharded = readSummary(whole);
  expect(unsharded).toMatchObject({ complete: true, planned: 4, recorded: 4 });
  // Its four cells share one worker and browser: describe blocks of one project, not a project each.
  expect(blobWorkers(join(whole, 'blob'))).toEqual(['0', '0', '0', '0']);

  // Night 1. Each shard on a machine of its own: its own report folder; its blob uploaded.
  for (let shard = 1; shard <= SHARDS; shard += 1) {
    const machine = join(dir, `shard-${shard}`);
    const result = await runStep('run-shard', { HARNESS_REPORT_DIR: machine, OUTPUT_DIR: join(machine, 'test-results') }, { 'matrix.shard': String(shard), 'strategy.job-total': String(SHARDS) });
    expect(result.code, result.stdout).toBe(0);
    // A shard's own summary is a part: incomplete, and never in the history.
    const own = readSummary(machine);
    expect(own).toMatchObject({ complete: false, recorded: 2, partial: { selection: [`shard ${shard}/${SHARDS}`] } });
    expect(result.stdout).toContain(`harness-eval: ⚠ incomplete: shard ${shard}/${SHARDS}, 2 of 2 planned runs recorded`);
    expect(result.stdout).toContain(`harness-eval: partial (shard ${shard}/${SHARDS}): not kept in the history`);
    expect(history(machine)).toEqual([]);
    cpSync(join(machine, 'blob'), join(artifacts, `blob-${shard}`), { recursive: true });
  }

  /** The merge job on a fresh machine: the blobs downloaded (merge-multiple), last night's history if any, then its steps. */
  const mergeJob = async (name: string, blobs: string[], previousHistory?: string) => {
    const machine = join(dir, name);
    const reportDir = join(machine, 'reports');
    for (const blob of blobs) cpSync(join(artifacts, blob), join(machine, 'all-blobs'), { recursive: true });
    if (previousHistory) cpSync(previousHistory, join(reportDir, 'history'), { recursive: true });
    // The steps run in the checkout; the blobs' folder is the job's own.
    const env = { HARNESS_REPORT_DIR: reportDir, SHARD_TOTAL: String(SHARDS) };
    const inJob = (script: string) => script.replaceAll('all-blobs', join(machine, 'all-blobs'));
    const check = await bash(inJob(step('check-blobs').run!), env);
    if (check.code !== 0) return { machine, reportDir, check };
    const merge = await bash(inJob(step('merge').run!), env);
    return { machine, reportDir, check, merge };
  };

  const night1 = await mergeJob('merge-1', ['blob-1', 'blob-2']);
  expect(night1.merge!.code, night1.merge!.stdout).toBe(0);
  const merged = readSummary(night1.reportDir);
  expect(outcomes(merged)).toEqual(outcomes(unsharded));
  expect([merged.complete, merged.planned, merged.recorded, merged.partial]).toEqual([true, 4, 4, undefined]);
  expect(merged.gates).toMatchObject({ checked: 1, breaches: [], unmatched: [] });
  expect(night1.merge!.stdout).toContain('harness-eval: ✓ 1 gate passed · complete · 4 of 4 planned runs recorded');
  expect(history(night1.reportDir)).toHaveLength(1);
  cpSync(join(night1.reportDir, 'history'), join(artifacts, 'harness-history'), { recursive: true });

  // Night 2 (the same blobs, on a fresh merge machine): the downloaded history is its baseline.
  const night2 = await mergeJob('merge-2', ['blob-1', 'blob-2'], join(artifacts, 'harness-history'));
  expect(night2.merge!.code, night2.merge!.stdout).toBe(0);
  expect(night2.merge!.stdout).toMatch(/harness-eval: compared with history\/\S+\.json/);
  expect(night2.merge!.stdout).toContain('4 cells compared, 0 flagged');
  expect(history(night2.reportDir)).toHaveLength(2);

  // A shard whose blob never arrived: no merge, so no summary claims the matrix whole.
  const short = await mergeJob('merge-short', ['blob-2']);
  expect(short.check.code).toBe(1);
  expect(short.check.stdout).toContain(`::error::1 of ${SHARDS} shard blobs arrived: not merged`);
  expect(existsSync(join(short.reportDir, 'summary.json'))).toBe(false);
});

/** A script through bash as GitHub runs it (`bash -eo pipefail`), in the checkout; as playwright-child.ts, no API key reaches it. */
function bash(script: string, env: Record<string, string>): Promise<Child> {
  const { OPENAI_API_KEY: _key, PLAYWRIGHT_JSON_OUTPUT_NAME: _json, ...inherited } = process.env;
  const child = spawn('bash', ['-eo', 'pipefail', '-c', script], { env: { ...inherited, CONFIG, FORCE_COLOR: '0', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  const collect = (chunk: Buffer) => (stdout += chunk);
  child.stdout.on('data', collect);
  child.stderr.on('data', collect);
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, stdout })));
}
