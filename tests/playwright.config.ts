import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { defineConfig } from '@playwright/test';
import { chromiumLaunchOptions } from '../src/playwright/chromium.ts';

/**
 * The test files that start child Playwright runs: those that import ./playwright-child.ts. A child
 * is a runner, workers and browsers of its own, so these files share one worker (the project
 * below), and no two children run at once beside the other workers' tests.
 */
export const childRunFiles = readdirSync(import.meta.dirname)
  .filter((name) => name.endsWith('.spec.ts') && readFileSync(join(import.meta.dirname, name), 'utf8').includes("from './playwright-child.ts'"))
  .sort();

/** Chromium's options, or none when there is no Chromium: the global setup then says so in one line, before any test. */
function launchOptions() {
  try {
    return chromiumLaunchOptions();
  } catch {
    return {};
  }
}

/** The project's own tests (`npm test`): the replica at the HTTP level and in a real browser. */
export default defineConfig({
  testDir: '.',
  outputDir: '../test-results/tests',
  fullyParallel: true,
  forbidOnly: !!process.env.CI,
  // Most of a test is waiting on a browser or a child run: every core gets a worker.
  workers: '100%',
  reporter: [['list'], ...(process.env.PLAYWRIGHT_JSON_OUTPUT_NAME ? [['json'] as const] : [])],
  // A part of the machine that is missing (Chromium, the sandbox's) fails the run in one line first.
  globalSetup: './global-setup.ts',
  use: { browserName: 'chromium', launchOptions: launchOptions() },
  // Child runs first: the dispatcher hands out jobs in project order, so listed second they waited
  // for every other test and then ran alone on one worker (330 s, then 614 s, in CI). First, one
  // worker runs them from the start while the others take the rest.
  projects: [
    { name: 'child runs', testMatch: childRunFiles, workers: 1 },
    { name: 'tests', testIgnore: childRunFiles },
  ],
});
