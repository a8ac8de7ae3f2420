import { defineConfig } from '@playwright/test';
import { chromiumLaunchOptions, type HarnessOptions } from 'harness-eval';

/**
 * The main job: every scripted double × every layer stack × the recorded site (plain, and with a
 * prompt injection in a title), the doubles on a sample of the suite, plus the classic experiment
 * and the by-hand baseline. Offline.
 * The bare stack shows false successes on purpose; the classic task's verified stacks are gated at zero.
 */
export default defineConfig<HarnessOptions>({
  testDir: 'specs',
  outputDir: 'test-results/specs',
  fullyParallel: true,
  forbidOnly: !!process.env.CI,
  // Runs mostly wait on the page and the doubles' replies: a worker per core (docs/performance.md).
  workers: '100%',
  // A browser per worker: one project starts one worker per core, so two browsers. A browser shared
  // by the workers (sharedBrowser(), its server a process of its own) is no faster for two workers:
  // 32.7 and 35.6 s against 31.6 and 32.3 s, back to back (2026-11-27, docs/performance.md).
  // Traces on a retry, as Playwright's own starter config: recording every run and dropping it when
  // it passes took a quarter of the job's time (docs/performance.md). `--trace on` records them all (CI does).
  use: { browserName: 'chromium', launchOptions: chromiumLaunchOptions(), trace: 'on-first-retry' },
  // One project: Playwright starts workers per project, each paying about 3 s of CPU before its
  // first test, so nine projects started 18 workers for 87 tests (docs/performance.md). Each folder
  // is a group of its own: `npx playwright test classic/`, `layers/`, `cells/` (the matrix, a
  // `test.describe` per cell), `suite/` (a task per tag of the suite × the doubles that attempt it;
  // the whole suite is playwright.suite.config.ts), `examples/` (agents harness-eval did not write,
  // driven by the doubles through the model gateway), `code/`, `control/`, `tasks/`, `baseline/`.
  // The control agents on every task are in `npm test`, judged on one reference run per task
  // (tests/mutation.spec.ts), so they do not run twice in CI.
  // specs/matrix/ is the nightly config's project-per-cell layout.
  testIgnore: ['matrix/**', 'suite/suite.spec.ts'],
  reporter: [
    // Users name it 'harness-eval/reporter'; inside this repository, by path.
    [
      './src/playwright/reporter.ts',
      // The classic task under the verified stacks: never a false success. Other cells show what
      // layers do not catch, and are not gated.
      // Each run is compared with the one before it (reports/history/), in every report.
      { gates: [{ task: 'upvote-first-post', layers: 'verified' }, { task: 'upvote-first-post', layers: 'verified+login' }], baseline: 'previous' },
    ],
    ['html', { open: 'never', outputFolder: 'reports/playwright' }],
    // CI counts results from Playwright's JSON report when it asks for one.
    ...(process.env.PLAYWRIGHT_JSON_OUTPUT_NAME ? [['json'] as const] : []),
  ],
});
