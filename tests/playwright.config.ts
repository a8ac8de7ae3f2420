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

/**
 * Short child-run files that the worker of the other tests takes once they are all done (a project
 * that depends on theirs), beside the one child-run worker: that worker was CI's critical path (723
 * of the tests' 785 s), the other idle for its last 190 s.
 */
export const lateChildRunFiles = ['controls.spec.ts', 'examples.spec.ts', 'export.spec.ts', 'init-kit.spec.ts', 'names.spec.ts', 'suite-typo.spec.ts', 'trials.spec.ts', 'verdict.spec.ts'];

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
    { name: 'child runs', testMatch: childRunFiles.filter((name) => !lateChildRunFiles.includes(name)), workers: 1 },
    { name: 'tests', testIgnore: childRunFiles },
    { name: 'child runs after tests', testMatch: lateChildRunFiles, workers: 1, dependencies: ['tests'] },
  ],
});
