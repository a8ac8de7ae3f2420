/**
 * `npm run bench:latency`: a matrix against a slow model endpoint scales with concurrency, not with
 * cores (issue 35). Starts an OpenAI-compatible endpoint on 127.0.0.1 that answers every call after
 * a fixed latency (the diligent double's answer), then, for each concurrency, a child Playwright run
 * (scripts/bench-latency.config.ts: the runs as tests of one project, that many workers, one shared
 * browser, the endpoint's `concurrency` the same) and prints its wall time, the ideal
 * ((runs × calls × latency) / concurrency + one start-up, the time to the endpoint's first call),
 * their ratio, the peak memory of every process of the run (Chromium's included: their proportional
 * set sizes, PSS, and the plain sum of their resident sets, which counts Chromium's shared pages in
 * each process) and the CPU-seconds per run (every process's, sampled from /proc every 200 ms).
 *
 * Each test keeps up to BENCH_TRIALS runs in flight (`harness.trials`, default 8), so a concurrency
 * c runs c / BENCH_TRIALS workers: BENCH_TRIALS=1 is a worker per run in flight.
 *
 *   BENCH_RUNS=96  BENCH_CONCURRENCIES=2,8,32  BENCH_LATENCY_MS=1000  BENCH_TRIALS=8  BENCH_BROWSER=per-worker
 *   QUICK=1: 4 runs at concurrencies 2 and 4, 200 ms a call (a smoke test, about a minute)
 *
 * Calls per run are what the double makes for the task (4 for the classic task, bare), counted at
 * the endpoint. Linux only (/proc).
 */
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import '../src/playwright/doubles.ts';
import { SCRIPTED_BASE_URL, scriptedFetch } from '../src/models/scripted/endpoint.ts';
import { summarySchema } from '../src/report/types.ts';

const quick = process.env.QUICK === '1';
const RUNS = Number(process.env.BENCH_RUNS ?? (quick ? 4 : 96));
const CONCURRENCIES = (process.env.BENCH_CONCURRENCIES ?? (quick ? '2,4' : '2,8,32')).split(',').map(Number);
const LATENCY_MS = Number(process.env.BENCH_LATENCY_MS ?? (quick ? 200 : 1000));
const TRIALS = Number(process.env.BENCH_TRIALS ?? 8);
/** Trials a test keeps in flight at a concurrency: never more than the concurrency. */
const trialsAt = (concurrency: number) => Math.min(TRIALS, concurrency);
const PAGE_SIZE = 4096;
const TICKS = 100; // USER_HZ on Linux

interface Endpoint {
  url: string;
  calls: number;
  maxInFlight: number;
  firstCallAt: number | undefined;
  reset(): void;
  close(): Promise<void>;
}

/** An OpenAI-compatible endpoint on 127.0.0.1: the scripted double the request names answers, after `latencyMs`. */
async function endpoint(latencyMs: number): Promise<Endpoint> {
  let inFlight = 0;
  const state = { calls: 0, maxInFlight: 0, firstCallAt: undefined as number | undefined };
  const server = createServer(async (incoming, outgoing) => {
    state.firstCallAt ??= performance.now();
    state.calls += 1;
    state.maxInFlight = Math.max(state.maxInFlight, ++inFlight);
    outgoing.on('close', () => (inFlight -= 1));
    const chunks: Buffer[] = [];
    for await (const chunk of incoming) chunks.push(chunk as Buffer);
    await sleep(latencyMs);
    const answer = await scriptedFetch(`${SCRIPTED_BASE_URL}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: Buffer.concat(chunks).toString('utf8') });
    outgoing.writeHead(answer.status, { 'content-type': 'application/json' });
    outgoing.end(await answer.text());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return Object.assign(state, {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    reset: () => Object.assign(state, { calls: 0, maxInFlight: 0, firstCallAt: undefined }),
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  });
}

/** Every process under `root` (itself included), from /proc: pid → [parent, resident bytes, CPU ticks]. */
function tree(root: number): Map<number, { rss: number; ticks: number }> {
  const all = new Map<number, { parent: number; rss: number; ticks: number }>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // The command may hold spaces and parentheses: the fields after its last ')'.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      all.set(Number(entry), { parent: Number(fields[1]), ticks: Number(fields[11]) + Number(fields[12]), rss: Number(fields[21]) * PAGE_SIZE });

    } catch {
      // It ended while we looked.
    }
  }
  const under = new Map<number, { rss: number; ticks: number }>();
  const visit = (pid: number) => {
    const process = all.get(pid);
    if (!process || under.has(pid)) return;
    under.set(pid, process);
    for (const [child, { parent }] of all) if (parent === pid) visit(child);
  };
  visit(root);
  return under;
}

/** A process's proportional set size (its resident memory, shared pages divided among their sharers), or undefined if it ended. */
function proportional(pid: number): number | undefined {
  try {
    const kb = /^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'));
    return kb ? Number(kb[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

interface Measured {
  wallMs: number;
  startupMs: number;
  /** The sum of every process's resident memory: pages Chromium's processes share are counted in each. */
  peakRss: number;
  /** The sum of every process's proportional share (PSS): shared pages counted once in all. */
  peakPss: number;
  cpuSeconds: number;
  recorded: number;
  failed: string | undefined;
}

/** One child run at `concurrency`, sampled every 200 ms. */
async function measure(concurrency: number, server: Endpoint, dir: string): Promise<Measured> {
  server.reset();
  const reportDir = join(dir, `c${concurrency}`, 'reports');
  const started = performance.now();
  const child = spawn(process.execPath, ['node_modules/@playwright/test/cli.js', 'test', '-c', 'scripts/bench-latency.config.ts'], {
    env: {
      ...process.env,
      FORCE_COLOR: '0',
      BENCH_RUNS: String(RUNS),
      BENCH_CONCURRENCY: String(concurrency),
      BENCH_TRIALS: String(trialsAt(concurrency)),
      OPENAI_API_KEY: 'sk-bench',
      OPENAI_BASE_URL: server.url,
      HARNESS_MODEL_CACHE: 'off',
      OUTPUT_DIR: join(dir, `c${concurrency}`, 'test-results'),
      REPORT_DIR: reportDir,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const ticks = new Map<number, number>();
  let peakRss = 0;
  let peakPss = 0;
  const sample = () => {
    let rss = 0;
    let pss = 0;
    for (const [pid, process] of tree(child.pid!)) {
      rss += process.rss;
      pss += proportional(pid) ?? process.rss;
      ticks.set(pid, Math.max(ticks.get(pid) ?? 0, process.ticks));
    }
    peakRss = Math.max(peakRss, rss);
    peakPss = Math.max(peakPss, pss);
  };
  const sampling = setInterval(sample, 200);
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  clearInterval(sampling);
  const wallMs = performance.now() - started;
  let recorded = 0;
  let failed: string | undefined;
  try {
    recorded = summarySchema.parse(JSON.parse(readFileSync(join(reportDir, 'summary.json'), 'utf8'))).recorded;
  } catch (error) {
    failed = `no summary: ${String(error)}`;
  }
  if (code !== 0) failed = `exited ${code}:\n${output.slice(-3000)}`;
  const cpuSeconds = [...ticks.values()].reduce((a, b) => a + b, 0) / TICKS;
  return { wallMs, startupMs: (server.firstCallAt ?? performance.now()) - started, peakRss, peakPss, cpuSeconds, recorded, failed };
}

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'harness-eval-bench-latency-'));
  const server = await endpoint(LATENCY_MS);
  const mb = (bytes: number) => `${Math.round(bytes / 2 ** 20)} MB`;
  console.log(
    `${RUNS} runs × the classic task (scripted:diligent, bare), ${LATENCY_MS} ms a call, ${process.env.BENCH_BROWSER === 'per-worker' ? 'a browser per worker' : 'one shared browser'}; ` +
      `${availableParallelism()} cores, ${mb(totalmem())} memory, load ${loadavg().map((l) => l.toFixed(1)).join(' ')} at start`,
  );
  console.log('concurrency (workers × trials) | calls/run | wall | ideal | ratio | peak memory, PSS (per run in flight; RSS summed) | CPU-s/run | load after');
  let failures = 0;
  try {
    for (const concurrency of CONCURRENCIES) {
      const result = await measure(concurrency, server, dir);
      const callsPerRun = server.calls / RUNS;
      const idealMs = (RUNS * callsPerRun * LATENCY_MS) / concurrency + result.startupMs;
      const line = [
        `${concurrency} (${Math.ceil(concurrency / trialsAt(concurrency))} × ${trialsAt(concurrency)})`.padStart(28),
        callsPerRun.toFixed(1),
        `${(result.wallMs / 1000).toFixed(1)} s`,
        `${(idealMs / 1000).toFixed(1)} s (start-up ${(result.startupMs / 1000).toFixed(1)} s)`,
        (result.wallMs / idealMs).toFixed(2),
        `${mb(result.peakPss)} (${mb(result.peakPss / Math.min(concurrency, RUNS))}; ${mb(result.peakRss)})`,
        (result.cpuSeconds / RUNS).toFixed(2),
        loadavg()[0]!.toFixed(1),
      ].join(' | ');
      console.log(line + (server.maxInFlight > concurrency ? ` ⚠ ${server.maxInFlight} calls at once` : '') + (result.recorded !== RUNS ? ` ⚠ ${result.recorded} of ${RUNS} runs recorded` : ''));
      if (result.failed) {
        failures += 1;
        console.log(`  failed: ${result.failed}`);
      }
    }
  } finally {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
  if (failures) process.exitCode = 1;
}

await main();
