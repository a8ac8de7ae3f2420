import { defineConfig } from '@playwright/test';
import { chromiumLaunchOptions, type HarnessOptions } from 'harness-eval';
import { appSite } from './site.ts';

/** Your kit's run: `npx playwright test -c .` in this folder; the report lands in reports/. */
export default defineConfig<HarnessOptions>({
  testDir: '.',
  outputDir: process.env.OUTPUT_DIR ?? 'test-results',
  fullyParallel: true,
  // Each run starts an app of its own on its own port: runs in parallel never share one.
  workers: 2,
  timeout: 60_000,
  use: { browserName: 'chromium', launchOptions: chromiumLaunchOptions(), site: appSite() },
  // The liar lies on purpose: the gate is on the reference, which must always succeed where it claims to.
  reporter: [['list'], ['harness-eval/reporter', { outputDir: process.env.REPORT_DIR ?? 'reports', gates: [{ agent: 'reference' }] }]],
});
