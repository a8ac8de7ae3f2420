import { defineConfig, type ReporterDescription } from '@playwright/test';
import { chromiumLaunchOptions, matrix, matrixWorkers, sharedBrowser, type HarnessOptions } from 'harness-eval';
import { nightlyMatrix } from './specs/matrix/cells.ts';

/**
 * The nightly model comparison: real models × the named layer stacks, repeated, on the recorded
 * site (or the live one). Run it sharded and merge the shards; docs/nightly.md's "Real models" section
 * has the commands. Models without their key or host are skipped with the reason, so the config
 * also lists and runs on a machine with none.
 *
 *   HARNESS_MODELS       comma-separated models (default: nightlyMatrix() in specs/matrix/cells.ts)
 *   HARNESS_SITE         `recorded` (default) or `live` (needs HN_USERNAME / HN_PASSWORD)
 *   HARNESS_MODEL_CACHE  `record` to write cassettes, `replay` to answer from them (CI), `off`
 *   HARNESS_CASSETTES    the cassette folder (default fixtures/cassettes)
 *   HARNESS_BASELINE     a previous summary.json: each cell's change is printed, flagged when the difference's 95% interval excludes 0
 *   HARNESS_REPORT_DIR   where summary.json and the reports go (default reports/nightly)
 */
const live = process.env.HARNESS_SITE === 'live';
const reportDir = process.env.HARNESS_REPORT_DIR || 'reports/nightly';
// `merge-reports` reads the shards' blobs; the shards themselves write them, and Allure's results
// (allure-playwright fails inside merge-reports, and Allure merges results folders on its own).
const merging = process.argv.includes('merge-reports');

const reporters: ReporterDescription[] = [
  // Users name it 'harness-eval/reporter'; inside this repository, by path. First: it redacts each
  // test's trace.zip in onTestEnd, before a reporter that copies attachments then (allure-playwright) reads it.
  ['./src/playwright/reporter.ts', { outputDir: reportDir, baseline: process.env.HARNESS_BASELINE || undefined, gates: [{ layers: 'full' }] }],
  ...(merging
    ? []
    : ([['blob', { outputDir: `${reportDir}/blob` }], ['allure-playwright', { resultsDir: `${reportDir}/allure-results` }]] as const)),
  ['html', { open: 'never', outputFolder: `${reportDir}/playwright` }],
];

const nightly = nightlyMatrix();
// Runs that wait on real models: as many in flight as their endpoints allow (and memory), each a
// context of one shared browser; offline, or replayed, the CPU-bound default and a browser per worker.
const sizing = matrixWorkers(nightly);
const browser = sizing.workers === undefined ? undefined : sharedBrowser();

export default defineConfig<HarnessOptions>({
  // The workers, and why: the report's header states both.
  ...sizing,
  testDir: 'specs/matrix',
  outputDir: 'test-results/nightly',
  fullyParallel: true,
  // A real model takes seconds a turn; the live site is spaced about a request a second.
  timeout: 15 * 60_000,
  // Live HN is one account: one browser at a time keeps its votes apart and its rate limit happy.
  workers: live ? 1 : sizing.workers,
  globalSetup: browser?.globalSetup,
  use: {
    browserName: 'chromium',
    ...(browser ? { connectOptions: browser.connectOptions } : { launchOptions: chromiumLaunchOptions() }),
    trace: 'retain-on-failure',
    modelCache: { dir: process.env.HARNESS_CASSETTES || undefined },
  },
  // matrix()'s one project, each cell a describe block of specs/matrix/nightly.spec.ts: its workers
  // start once, not once per cell. HARNESS_CELLS="openai:gpt-4o-mini · bare" runs one cell.
  projects: matrix({ ...nightly, project: { testMatch: 'nightly.spec.ts' } }),
  reporter: reporters,
});
