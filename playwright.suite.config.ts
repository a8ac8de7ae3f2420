import { defineConfig } from '@playwright/test';
import { layerStacks, matrix, sharedBrowser, type HarnessOptions } from 'harness-eval';

const { bare, verified, 'verified+login': verifiedLogin } = layerStacks;
const browser = sharedBrowser();

/**
 * The whole Hacker News suite (`hn.suite`) × the doubles that attempt it × the classic stacks, on
 * the recorded site: `npx playwright test -c playwright.suite.config.ts`. Offline. The main job
 * runs the controls on every task and this on a sample (specs/suite/sample.spec.ts). Its report
 * goes to reports/suite, beside the main job's.
 */
export default defineConfig<HarnessOptions>({
  testDir: 'specs/suite',
  outputDir: 'test-results/suite',
  fullyParallel: true,
  forbidOnly: !!process.env.CI,
  workers: '100%',
  globalSetup: browser.globalSetup,
  use: { browserName: 'chromium', connectOptions: browser.connectOptions, trace: 'retain-on-failure' },
  projects: matrix({
    models: ['scripted:diligent', 'scripted:overclaimer'],
    layers: { bare, verified, 'verified+login': verifiedLogin },
    project: { testMatch: 'suite.spec.ts' },
  }),
  reporter: [
    ['./src/playwright/reporter.ts', { outputDir: 'reports/suite', gates: [], baseline: 'previous' }],
    ['html', { open: 'never', outputFolder: 'reports/suite/playwright' }],
    ...(process.env.PLAYWRIGHT_JSON_OUTPUT_NAME ? [['json'] as const] : []),
  ],
});
