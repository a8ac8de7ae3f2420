import { defineConfig } from '@playwright/test';
import { chromiumLaunchOptions } from './src/playwright/chromium.ts';

/** The main job: `npx playwright test` runs the specs against the recorded Hacker News, offline. */
export default defineConfig({
  testDir: 'specs',
  outputDir: 'test-results/specs',
  fullyParallel: true,
  forbidOnly: !!process.env.CI,
  reporter: 'list',
  use: { browserName: 'chromium', launchOptions: chromiumLaunchOptions(), trace: 'retain-on-failure' },
});
