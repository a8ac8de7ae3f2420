/**
 * `npm run bench:matrix`: what running a matrix as Playwright Test costs over the runs themselves.
 * 12 cells (4 scripted doubles × 3 layer stacks, the recorded site) × 4 trials, offline:
 *   - as users run it: `playwright test -c scripts/bench-matrix.config.ts --repeat-each 4`, with
 *     the shared browser (`BENCH_BROWSER=per-worker`: a browser launched by each worker instead),
 *     in both layouts: a project per cell (matrix()), and the cells as tests of one project (cells());
 *   - as plain scripts: as many node processes as workers, each launching Chromium once and
 *     calling `evaluate` for its share of the same 48 runs, one after another.
 * Each side starts from cold processes and ends when the last one exits; CPU time counts every
 * process, Chromium's included. The sides' outcomes per cell are compared. Target ratio ≤ 2.0.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from '@playwright/test';
import type { HarnessOptions } from '../src/index.ts';
import { upvoteFirstPost } from '../src/sites/hn/suite.ts';
import { cells } from '../src/playwright/matrix.ts';
import { chromiumLaunchOptions } from '../src/playwright/chromium.ts';
import { evaluate } from '../src/eval/evaluate.ts';
import { summarySchema } from '../src/report/types.ts';
import { benchMatrix } from '../specs/matrix/cells.ts';

const TRIALS = 4;
const PROCESSES = Number(process.env.BENCH_WORKERS ?? availableParallelism());

/** One plain process's share of the runs: every PROCESSES-th of the 48, from its index. */
async function plainProcess(index: number): Promise<void> {
  const runs = cells(benchMatrix).flatMap((cell) => Array.from({ length: TRIALS }, () => cell));
  const browser = await chromium.launch(chromiumLaunchOptions());
  for (const { name, use } of runs.filter((_, i) => i % PROCESSES === index)) {
    const { model, layers, site } = use as Pick<HarnessOptions, 'model' | 'layers' | 'site'>;
    const context = await browser.newContext();
    const run = await evaluate({ context, site: await site.create(), model, layers, task: upvoteFirstPost });
    await context.close();
    if (run.stopReason === 'error' || !run.judged) throw new Error(`plain run in ${name}: ${run.summary}`);
    console.log(JSON.stringify({ cell: name, success: run.claimed && run.actual, falseSuccess: run.falseSuccess }));
  }
  await browser.close();
}

interface Timed {
  output: string;
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
      resolve({ output, wallMs, cpuMs: (Number(cpu[1]) + Number(cpu[2])) * 1000 });
    }),
  );
}

const sum = (parts: Timed[]): Timed => ({ output: parts.map((p) => p.output).join(''), wallMs: Math.max(...parts.map((p) => p.wallMs)), cpuMs: parts.reduce((total, p) => total + p.cpuMs, 0) });

type Tally = Record<string, { runs: number; successes: number; falseSuccesses: number }>;

/** Successes and false successes per cell, from the plain processes' lines. */
function plainTally(output: string): Tally {
  const tally: Tally = {};
  for (const line of output.split('\n').filter((l) => l.startsWith('{'))) {
    const { cell, success, falseSuccess } = JSON.parse(line) as { cell: string; success: boolean; falseSuccess: boolean };
    const counts = (tally[cell] ??= { runs: 0, successes: 0, falseSuccesses: 0 });
    counts.runs += 1;
    counts.successes += Number(success);
    counts.falseSuccesses += Number(falseSuccess);
  }
  return tally;
}

/** The same, from the reporter's summary of the Playwright run. */
function suiteTally(reportDir: string): Tally {
  const summary = summarySchema.parse(JSON.parse(readFileSync(join(reportDir, 'summary.json'), 'utf8')));
  return Object.fromEntries(summary.cells.map((cell) => [`${cell.model} · ${cell.layers}`, { runs: cell.runs, successes: cell.successes, falseSuccesses: cell.falseSuccesses }]));
}

const sorted = (tally: Tally) => JSON.stringify(Object.entries(tally).sort(([a], [b]) => a.localeCompare(b)));

const LAYOUTS = { projects: 'a project per cell', cells: "matrix(): cells as describe blocks of one project" } as const;

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'harness-eval-bench-matrix-'));
  try {
    const started = performance.now();
    const plain = sum(await Promise.all(Array.from({ length: PROCESSES }, (_, index) => timed([process.execPath, '--import', 'tsx', import.meta.filename, 'plain', String(index)]))));
    plain.wallMs = performance.now() - started;
    const expected = sorted(plainTally(plain.output));
    const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
    console.log(`${cells(benchMatrix).length} cells × ${TRIALS} trials, ${PROCESSES} workers/processes, ${process.env.BENCH_BROWSER === 'per-worker' ? 'a browser per worker' : 'one shared browser'}`);
    console.log(`  plain scripts    ${seconds(plain.wallMs)} wall, ${seconds(plain.cpuMs)} CPU`);
    const ratios: Array<{ layout: keyof typeof LAYOUTS; wall: number }> = [];
    for (const layout of Object.keys(LAYOUTS) as Array<keyof typeof LAYOUTS>) {
      const reports = join(dir, layout, 'reports');
      const suite = await timed(
        [process.execPath, 'node_modules/@playwright/test/cli.js', 'test', '-c', 'scripts/bench-matrix.config.ts', '--repeat-each', String(TRIALS), '--workers', String(PROCESSES)],
        { BENCH_LAYOUT: layout, OUTPUT_DIR: join(dir, layout, 'test-results'), REPORT_DIR: reports },
      );
      const got = sorted(suiteTally(reports));
      console.log(`  ${LAYOUTS[layout]}: ${seconds(suite.wallMs)} wall, ${seconds(suite.cpuMs)} CPU; outcomes per cell ${got === expected ? 'the same as the plain scripts\'' : `DIFFER: plain ${expected}, playwright ${got}`}`);
      console.log(`    ratio ${(suite.wallMs / plain.wallMs).toFixed(2)} wall, ${(suite.cpuMs / plain.cpuMs).toFixed(2)} CPU (target ≤ 2.0)`);
      ratios.push({ layout, wall: suite.wallMs / plain.wallMs });
    }
    const best = ratios.reduce((a, b) => (b.wall < a.wall ? b : a));
    console.log(`  recommended: ${LAYOUTS[best.layout]} (the lower wall ratio, ${best.wall.toFixed(2)}; docs/performance.md)`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[2] === 'plain') await plainProcess(Number(process.argv[3]));
else await main();
