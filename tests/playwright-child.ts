import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { test } from '@playwright/test';
import { summarySchema, type Summary } from '../src/report/types.ts';
import { acquireSlot } from './processes.ts';

/**
 * A Playwright run in a child process, as a user would run their project, for the tests that read
 * its reports back (tests/surface.spec.ts, tests/audit-faults.spec.ts). Child runs wait for a slot
 * among CHILD_SLOTS, so the workers that start them do not oversubscribe the cores.
 */
const cli = 'node_modules/@playwright/test/cli.js';

export interface Child {
  code: number | null;
  /** stdout and stderr, interleaved. */
  stdout: string;
}

/**
 * `onOutput` sees the output so far when the child starts (empty) and at every chunk, and can
 * interrupt the child as Ctrl-C would, or kill it with another signal.
 */
export async function playwright(args: string[], env: Record<string, string>, onOutput?: (stdout: string, kill: (signal?: NodeJS.Signals) => void) => void): Promise<Child> {
  const release = await acquireSlot(childSlots(), CHILD_SLOTS, (waited) => {
    // The time spent waiting for a slot is not the test's: its timeout moves on by as much.
    if (test.info().timeout > 0) test.info().setTimeout(test.info().timeout + waited);
  });
  try {
    return await spawnPlaywright(args, env, onOutput);
  } finally {
    release();
  }
}

/**
 * At most this many child runs at once across the workers of a test run: a child is a runner, a
 * worker and a browser of its own, so more would oversubscribe the cores (2 on CI).
 */
export const CHILD_SLOTS = Math.max(1, Math.floor(availableParallelism() / 2));

/** The slots' folder, in the output folder every worker of the run shares (Playwright empties it as a run starts). */
const childSlots = () => join(test.info().project.outputDir, '.child-slots');

function spawnPlaywright(args: string[], env: Record<string, string>, onOutput?: (stdout: string, kill: (signal?: NodeJS.Signals) => void) => void): Promise<Child> {
  // The child reports where the test says, and has no API key: an openai: model must skip.
  const { OPENAI_API_KEY: _key, PLAYWRIGHT_JSON_OUTPUT_NAME: _json, ...inherited } = process.env;
  const child = spawn(process.execPath, [cli, ...args], { env: { ...inherited, ...env, FORCE_COLOR: '0' }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  const kill = (signal: NodeJS.Signals = 'SIGINT') => child.kill(signal);
  const collect = (chunk: Buffer) => {
    stdout += chunk;
    onOutput?.(stdout, kill);
  };
  onOutput?.(stdout, kill);
  child.stdout.on('data', collect);
  child.stderr.on('data', collect);
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, stdout })));
}

/** A fresh folder in the test's output folder (none is left in the system's temporary folder), and where a child config (by these variables) puts its reports in it. */
export function workspace(prefix: string) {
  const dir = mkdtempSync(test.info().outputPath(prefix));
  return { dir, env: { REPORT_DIR: join(dir, 'reports'), OUTPUT_DIR: join(dir, 'test-results'), JSON_OUT: join(dir, 'results.json') } };
}

/** The summary.json the reporter wrote in `dir`, checked against its schema. */
export const readSummary = (dir: string): Summary => summarySchema.parse(JSON.parse(readFileSync(join(dir, 'summary.json'), 'utf8')));

/** Every test result in a Playwright JSON report, with its title and project. */
export function collect(report: { suites: unknown[] }) {
  const out: Array<{ title: string; project: string; result: any }> = [];
  const walk = (suite: any) => {
    for (const spec of suite.specs ?? []) for (const t of spec.tests) for (const result of t.results) out.push({ title: spec.title, project: t.projectName, result: { ...result, annotations: t.annotations } });
    for (const child of suite.suites ?? []) walk(child);
  };
  report.suites.forEach(walk);
  return out;
}
