import { defineConfig } from '@playwright/test';
import { chromiumLaunchOptions, hn, layerStacks, matrix, sharedBrowser, type HarnessOptions } from 'harness-eval';

const { bare, verified, 'verified+login': verifiedLogin } = layerStacks;
// BENCH_BROWSER=per-worker measures the step before the shared browser: a browser per worker.
const browser = process.env.BENCH_BROWSER === 'per-worker' ? undefined : sharedBrowser();

/** `npm run bench:matrix`'s matrix: 12 cells running the main job's matrix spec, configured as a user would. */
export default defineConfig<HarnessOptions>({
  testDir: '../specs/matrix',
  outputDir: process.env.OUTPUT_DIR,
  fullyParallel: true,
  globalSetup: browser?.globalSetup,
  use: { browserName: 'chromium', ...(browser ? { connectOptions: browser.connectOptions } : { launchOptions: chromiumLaunchOptions() }) },
  projects: matrix({
    models: ['scripted:overclaimer', 'scripted:diligent', 'scripted:injectable', 'scripted:looper'],
    layers: { bare, verified, 'verified+login': verifiedLogin },
    sites: { 'hn-recorded': hn.recorded() },
  }),
  // No gates: the bare stack's false successes are part of what is measured.
  reporter: [['../src/playwright/reporter.ts', { outputDir: process.env.REPORT_DIR, gates: [] }]],
});
