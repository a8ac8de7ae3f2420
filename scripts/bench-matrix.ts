/**
 * `npm run bench:matrix`: what running a matrix as Playwright Test costs over the runs themselves.
 * 12 cells (4 scripted doubles × 3 layer stacks, the recorded site) × 4 trials, offline:
 *   - as users run it: `playwright test -c scripts/bench-matrix.config.ts --repeat-each 4`;
 *   - as plain scripts: the same number of node processes, each launching Chromium once and
 *     calling `evaluateHarness` for its share of the same 48 runs, one after another.
 * Both sides start from a cold process and end when the last process exits. Target ratio ≤ 2.0.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from '@playwright/test';
import type { HarnessOptions } from '../src/index.ts';
import { upvoteFirstPost } from '../src/eval/tasks.ts';
import { chromiumLaunchOptions } from '../src/playwright/chromium.ts';
import { evaluateHarness } from '../src/playwright/evaluate.ts';
import config from './bench-matrix.config.ts';

const TRIALS = 4;
const PROCESSES = Number(process.env.WORKERS ?? 2);

/** One plain process's share of the runs: every PROCESSES-th of the 48, from its index. */
async function plainProcess(index: number): Promise<void> {
  const runs = cells().flatMap((cell) => Array.from({ length: TRIALS }, () => cell));
  const browser = await chromium.launch(chromiumLaunchOptions());
  for (const { name, model, layers, site } of runs.filter((_, i) => i % PROCESSES === index)) {
    const context = await browser.newContext();
    const run = await evaluateHarness({ context, site: site.create(), model, layers, task: upvoteFirstPost });
    await context.close();
    if (run.stopReason === 'error' || !run.judged) throw new Error(`plain run in ${name}: ${run.summary}`);
  }
  await browser.close();
}

/** The config's cells, with what each puts in use: the plain side runs exactly these. */
function cells() {
  return (config.projects ?? []).map(({ name = '', use = {} }) => {
    const { model, layers, site } = use as HarnessOptions;
    return { name, model, layers, site };
  });
}

interface Timed {
  wallMs: number;
  /** CPU time of the processes and everything they waited for (Chromium included). */
  cpuMs: number;
}

/** Runs a command under /usr/bin/time for its children's CPU time; fails with its output when it fails. */
function timed(command: string[], env: NodeJS.ProcessEnv = {}): Promise<Timed> {
  const started = performance.now();
  const child = spawn('/usr/bin/time', ['-f', 'cpu %U %S', ...command], { env: { ...process.env, ...env, FORCE_COLOR: '0' }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  return new Promise((resolve, reject) =>
    child.on('exit', (code) => {
      const wallMs = performance.now() - started;
      const cpu = /cpu ([\d.]+) ([\d.]+)\s*$/.exec(output);
      if (code !== 0 || !cpu) return reject(new Error(`${command.join(' ')} exited ${code}:\n${output.slice(-4000)}`));
      resolve({ wallMs, cpuMs: (Number(cpu[1]) + Number(cpu[2])) * 1000 });
    }),
  );
}

const sum = (parts: Timed[]): Timed => ({ wallMs: Math.max(...parts.map((p) => p.wallMs)), cpuMs: parts.reduce((total, p) => total + p.cpuMs, 0) });

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'harness-eval-bench-matrix-'));
  try {
    const started = performance.now();
    const plain = sum(await Promise.all(Array.from({ length: PROCESSES }, (_, index) => timed([process.execPath, '--import', 'tsx', import.meta.filename, 'plain', String(index)]))));
    plain.wallMs = performance.now() - started;
    const suite = await timed(
      [process.execPath, 'node_modules/@playwright/test/cli.js', 'test', '-c', 'scripts/bench-matrix.config.ts', '--repeat-each', String(TRIALS), '--workers', String(PROCESSES)],
      { OUTPUT_DIR: join(dir, 'test-results'), REPORT_DIR: join(dir, 'reports') },
    );
    const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
    console.log(`${cells().length} cells × ${TRIALS} trials, ${PROCESSES} workers/processes`);
    console.log(`  playwright test  ${seconds(suite.wallMs)} wall, ${seconds(suite.cpuMs)} CPU`);
    console.log(`  plain scripts    ${seconds(plain.wallMs)} wall, ${seconds(plain.cpuMs)} CPU`);
    console.log(`  ratio ${(suite.wallMs / plain.wallMs).toFixed(2)} wall, ${(suite.cpuMs / plain.cpuMs).toFixed(2)} CPU (target ≤ 2.0)`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[2] === 'plain') await plainProcess(Number(process.argv[3]));
else await main();
