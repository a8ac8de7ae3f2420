import { defineConfig } from '@playwright/test';
import { chromiumLaunchOptions } from '../src/playwright/chromium.ts';

/** The project's own tests (`npm test`): the replica at the HTTP level and in a real browser. */
export default defineConfig({
  testDir: '.',
  outputDir: '../test-results/tests',
  fullyParallel: true,
  forbidOnly: !!process.env.CI,
  // Most of a test is waiting on a browser or a child run: every core gets a worker.
  workers: '100%',
  reporter: [['list'], ...(process.env.PLAYWRIGHT_JSON_OUTPUT_NAME ? [['json'] as const] : [])],
  use: { browserName: 'chromium', launchOptions: chromiumLaunchOptions() },
});
