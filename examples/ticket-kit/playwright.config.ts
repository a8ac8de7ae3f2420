import { defineConfig } from '@playwright/test';
import { chromiumLaunchOptions, type HarnessOptions } from 'harness-eval';
import { ticketSite } from './site.ts';

/**
 * The ticket kit's own run: its controls and command agents on its tasks, each run on a ticket
 * server of its own (a process, started per run, stopped after it), reported by harness-eval's
 * reporter. tests/ticket-kit.spec.ts runs the same checks in CI, without a child run.
 */
export default defineConfig<HarnessOptions>({
  testDir: '.',
  outputDir: process.env.OUTPUT_DIR ?? '../../test-results/ticket-kit',
  fullyParallel: true,
  // Each run has its own server on its own port: runs in parallel never share one.
  workers: 2,
  timeout: 60_000,
  use: { browserName: 'chromium', launchOptions: chromiumLaunchOptions(), site: ticketSite() },
  reporter: [
    // Users name it 'harness-eval/reporter'; inside this repository, by path.
    // The controls and the lying command agent lie on purpose: the gate is on the honest command agent, which must succeed every time.
    ['../../src/playwright/reporter.ts', { outputDir: process.env.REPORT_DIR ?? '../../reports/ticket-kit', gates: [{ site: 'tickets', agent: 'assign', minSuccessRate: 1 }] }],
    ...(process.env.JSON_OUT ? [['json', { outputFile: process.env.JSON_OUT }] as const] : []),
  ],
});
