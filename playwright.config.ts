import { defineConfig } from '@playwright/test';
import { sharedBrowser, type HarnessOptions } from 'harness-eval';

// Every worker connects to one Chromium launched for the run (with chromiumLaunchOptions()'s
// flags), instead of launching its own.
const browser = sharedBrowser();

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
  globalSetup: browser.globalSetup,
  use: { browserName: 'chromium', connectOptions: browser.connectOptions, trace: 'retain-on-failure' },
  projects: [
    // The matrix's cells (specs/matrix/cells.ts) are describe blocks of one project, named after
    // the cell (`scripted:looper · verified · hn-injected › …`): a worker per core, not per cell.
    { name: 'matrix', testDir: 'specs/cells' },
    // A task per tag of the suite × the doubles that attempt it; the whole suite is playwright.suite.config.ts.
    { name: 'suite-sample', testDir: 'specs/suite', testMatch: 'sample.spec.ts' },
    { name: 'classic', testDir: 'specs/classic' },
    // One spec per layer beyond the classic ones, each showing the layer's effect in its cells.
    { name: 'layers', testDir: 'specs/layers' },
    { name: 'control', testDir: 'specs/control' },
    // The control agents (nop, liar, reference) on every task are in `npm test`, judged on one
    // reference run per task (tests/mutation.spec.ts), so they do not run twice in CI.
    { name: 'code', testDir: 'specs/code' },
    { name: 'tasks', testDir: 'specs/tasks' },
    { name: 'baseline', testDir: 'specs/baseline' },
    // Agents harness-eval did not write (examples/), driven by the doubles through the model gateway.
    { name: 'examples', testDir: 'specs/examples' },
  ],
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
