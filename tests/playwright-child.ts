import { spawn } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from '@playwright/test';
import { summarySchema, type Summary } from '../src/report/types.ts';

/**
 * A Playwright run in a child process, as a user would run their project, for the tests that read
 * its reports back (tests/surface.spec.ts, tests/audit-faults.spec.ts). A file that imports this
 * runs in tests/playwright.config.ts's one-worker project, so children do not oversubscribe the cores.
 */
const cli = 'node_modules/@playwright/test/cli.js';
/** Where Playwright keeps the TypeScript it compiled, unless told otherwise: under this process's temporary folder. */
const transformCache = process.env.PLAYWRIGHT_TRANSFORM_CACHE_DIR ?? join(tmpdir(), `playwright-transform-cache-${process.geteuid?.()}`);

export interface Child {
  code: number | null;
  /** stdout and stderr, interleaved. */
  stdout: string;
}

/**
 * `onOutput` sees the output so far when the child starts (empty) and at every chunk, and can
 * interrupt the child as Ctrl-C would, or kill it with another signal.
 */
export function playwright(args: string[], env: Record<string, string>, onOutput?: (stdout: string, kill: (signal?: NodeJS.Signals) => void) => void): Promise<Child> {
  // The child reports where the test says, and has no API key: an openai: model must skip. It is a runner of
  // its own: its reporter makes its own slot coordinator and cost ledger, never one a test of this worker left advertised.
  const { OPENAI_API_KEY: _key, PLAYWRIGHT_JSON_OUTPUT_NAME: _json, HARNESS_EVAL_SLOTS: _slots, HARNESS_EVAL_LEDGER: _ledger, ...inherited } = process.env;
  // A child given its own TMPDIR (the secrets audit's) still reuses the compiled TypeScript in
  // Playwright's cache, where it would otherwise compile all of src/ again in every process.
  const child = spawn(process.execPath, [cli, ...args], { env: { PLAYWRIGHT_TRANSFORM_CACHE_DIR: transformCache, ...inherited, ...env, FORCE_COLOR: '0' }, stdio: ['ignore', 'pipe', 'pipe'] });
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

/**
 * A child run that several tests of a file start alike: run once in a worker (by the first test
 * that asks), then copied, reports and all, into a fresh workspace for each test, which may run
 * more children on top of it. One child instead of one per test.
 */
export function sharedRun(prefix: string, args: string[], env: Record<string, string> = {}) {
  let made: Promise<{ dir: string; child: Child }> | undefined;
  return async () => {
    made ??= (async () => {
      const first = workspace(prefix);
      return { dir: first.dir, child: await playwright(args, { ...first.env, ...env }) };
    })();
    const { dir, child } = await made;
    const own = workspace(prefix);
    cpSync(dir, own.dir, { recursive: true });
    return { ...own, child };
  };
}

/** The summary.json the reporter wrote in `dir`, checked against its schema. */
export const readSummary = (dir: string): Summary => summarySchema.parse(JSON.parse(readFileSync(join(dir, 'summary.json'), 'utf8')));

/** Every test result in a Playwright JSON report, with its title, test file (relative to the test folder) and project. */
export function collect(report: { suites: unknown[] }) {
  const out: Array<{ title: string; file: string; project: string; result: any }> = [];
  // A root suite is a test file; a test declared by a helper it imports is still that file's.
  const walk = (suite: any, file: string = suite.file) => {
    for (const spec of suite.specs ?? []) for (const t of spec.tests) for (const result of t.results) out.push({ title: spec.title, file, project: t.projectName, result: { ...result, annotations: t.annotations } });
    for (const child of suite.suites ?? []) walk(child, file);
  };
  report.suites.forEach((suite) => walk(suite));
  return out;
}
