import { defineConfig } from '@playwright/test';
import { chromiumLaunchOptions, type HarnessOptions } from 'harness-eval';
import { todoSite } from './site.ts';

/**
 * The to-do kit's own run: its controls and the built-in harness on its three tasks, reported by
 * harness-eval's reporter. Every run starts signed in (the prompts give no login, and the kit has no
 * login wall for the `login` layer; the references sign in by themselves). tests/second-kit.spec.ts
 * runs it as a child run in CI.
 */
export default defineConfig<HarnessOptions>({
  testDir: '.',
  outputDir: process.env.OUTPUT_DIR ?? '../../test-results/todo-kit',
  fullyParallel: true,
  workers: 1,
  timeout: 60_000,
  use: { browserName: 'chromium', launchOptions: chromiumLaunchOptions(), site: todoSite({ startLoggedIn: true }) },
  reporter: [
    [
      // Users name it 'harness-eval/reporter'; inside this repository, by path.
      '../../src/playwright/reporter.ts',
      // The verified stack must never let a false success through; the controls and the bare stack lie on purpose.
      { outputDir: process.env.REPORT_DIR ?? '../../reports/todo-kit', gates: [{ site: 'todo', layers: 'verified' }] },
    ],
    ...(process.env.JSON_OUT ? [['json', { outputFile: process.env.JSON_OUT }] as const] : []),
  ],
});
