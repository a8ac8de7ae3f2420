import { defineConfig } from '@playwright/test';
import { sharedBrowser, type HarnessOptions } from 'harness-eval';

// `npm run bench:latency`'s child run: BENCH_RUNS runs as tests of one project (a worker serves any
// of them), BENCH_CONCURRENCY workers, every worker connected to one shared browser, so a run in
// flight costs a Node worker and a browser context, not a Chromium. BENCH_BROWSER=per-worker: a
// browser launched by each worker instead.
const browser = process.env.BENCH_BROWSER === 'per-worker' ? undefined : sharedBrowser();

export default defineConfig<HarnessOptions>({
  testDir: '.',
  testMatch: 'bench-latency.spec.ts',
  outputDir: process.env.OUTPUT_DIR,
  fullyParallel: true,
  // The runs in flight are the workers × each test's trials (BENCH_TRIALS, harness.trials).
  workers: Math.ceil(Number(process.env.BENCH_CONCURRENCY ?? 2) / Number(process.env.BENCH_TRIALS ?? 1)),
  timeout: 10 * 60_000,
  globalSetup: browser?.globalSetup,
  use: { browserName: 'chromium', trace: 'off', ...(browser && { connectOptions: browser.connectOptions }) },
  // harness-eval's reporter starts the run's slot coordinator: the endpoint's `concurrency` holds across workers.
  reporter: [['dot'], ['../src/playwright/reporter.ts', { outputDir: process.env.REPORT_DIR, gates: [] }]],
});
