import { defineConfig, type ReporterDescription } from '@playwright/test';
import { chromiumLaunchOptions, matrix, matrixWorkers, type HarnessOptions } from 'harness-eval';
import { nightlyCells } from './cells.ts';

/**
 * The nightly comparison that nightly.yml runs on GitHub Actions: the cells of cells.ts (models ×
 * layer stacks), each a describe block of tasks.spec.ts, sharded over jobs, each shard a blob
 * report, merged into one summary. tests/shards.spec.ts runs the workflow's own commands locally.
 *
 *   HARNESS_MODELS      the models compared (`openai:gpt-4o-mini,…` with OPENAI_API_KEY)
 *   HARNESS_REPORT_DIR  summary.json, index.html, history/ and blob/ (default reports/nightly here)
 */
const reportDir = process.env.HARNESS_REPORT_DIR || 'reports/nightly';
// A shard writes its blob; the merge reads the blobs and writes the one summary that counts.
const merging = process.argv.includes('merge-reports');

const reporters: ReporterDescription[] = [
  // Users name it 'harness-eval/reporter'; inside this repository, by path. First: it redacts each
  // trace before the blob reporter packs it. `previous`: compared with history/'s newest whole run.
  ['../../src/playwright/reporter.ts', { outputDir: reportDir, baseline: 'previous', gates: [{ layers: 'verified' }] }],
  ...(merging ? [] : ([['blob', { outputDir: `${reportDir}/blob` }]] as const)),
];

export default defineConfig<HarnessOptions>({
  // As many runs in flight as the models' endpoints allow; with the offline doubles, one per core. The report's header says which.
  ...matrixWorkers(nightlyCells),
  testDir: '.',
  outputDir: process.env.OUTPUT_DIR || '../../test-results/nightly-actions',
  fullyParallel: true,
  timeout: 15 * 60_000,
  use: { browserName: 'chromium', launchOptions: chromiumLaunchOptions() },
  // One project, each cell a describe block of tasks.spec.ts: its workers start once, not per cell.
  projects: matrix(nightlyCells),
  reporter: reporters,
});
