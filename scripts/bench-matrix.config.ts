import { defineConfig } from '@playwright/test';
import { cells, chromiumLaunchOptions, matrix, sharedBrowser, type HarnessOptions } from 'harness-eval';
import { benchMatrix } from '../specs/matrix/cells.ts';

// BENCH_BROWSER=per-worker measures the step before the shared browser: a browser per worker.
const browser = process.env.BENCH_BROWSER === 'per-worker' ? undefined : sharedBrowser();
// BENCH_LAYOUT=projects: a project per cell (made from cells()); otherwise matrix()'s one project, its cells describe blocks (bench-matrix.spec.ts).
const asProjects = process.env.BENCH_LAYOUT === 'projects';

/** `npm run bench:matrix`'s matrix: 12 cells running the main job's matrix test, configured as a user would. */
export default defineConfig<HarnessOptions>({
  testDir: asProjects ? '../specs/matrix' : '.',
  // specs/matrix/ also holds the nightly config's spec.
  ...(asProjects && { testMatch: 'upvote-first-post.spec.ts' }),
  outputDir: process.env.OUTPUT_DIR,
  fullyParallel: true,
  globalSetup: browser?.globalSetup,
  use: { browserName: 'chromium', ...(browser ? { connectOptions: browser.connectOptions } : { launchOptions: chromiumLaunchOptions() }) },
  projects: asProjects ? cells(benchMatrix).map(({ name, use }) => ({ name, use })) : matrix({ ...benchMatrix, project: { testMatch: 'bench-matrix.spec.ts' } }),
  // No gates: the bare stack's false successes are part of what is measured.
  reporter: [['../src/playwright/reporter.ts', { outputDir: process.env.REPORT_DIR, gates: [] }]],
});
