import { defineConfig } from '@playwright/test';
import { chromiumLaunchOptions, hn, layerStacks, matrix, type HarnessOptions } from 'harness-eval';
import { sharedBrowser } from '../src/playwright/shared-browser.ts';

const { bare, verified, 'verified+login': verifiedLogin } = layerStacks;
const browser = process.env.BENCH_BROWSER === 'per-worker' ? undefined : sharedBrowser();

/** `npm run bench:matrix`'s matrix: 12 cells of the main job's matrix spec, as a user would configure them. */
export default defineConfig<HarnessOptions>({
  testDir: '../specs/matrix',
  outputDir: process.env.OUTPUT_DIR,
  fullyParallel: true,
  globalSetup: browser?.globalSetup,
  use: { browserName: 'chromium', launchOptions: chromiumLaunchOptions(), connectOptions: browser?.connectOptions },
  projects: matrix({
    models: ['scripted:overclaimer', 'scripted:diligent', 'scripted:injectable', 'scripted:looper'],
    layers: { bare, verified, 'verified+login': verifiedLogin },
    sites: { 'hn-recorded': hn.recorded() },
  }),
  reporter: [['../src/playwright/reporter.ts', { outputDir: process.env.REPORT_DIR, gates: [] }]],
});
