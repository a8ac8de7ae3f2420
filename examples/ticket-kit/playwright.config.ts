import { defineConfig } from '@playwright/test';
import { chromiumLaunchOptions, type HarnessOptions } from 'harness-eval';
import { ticketSite } from './site.ts';

/**
 * The ticket kit's own run: its controls, the built-in harness driven by the doubles, and command
 * agents on its tasks, each run on a ticket server of its own (a process, started per run, stopped
 * after it), reported by harness-eval's reporter. Every run starts signed in (the doubles follow
 * the references' page moves; their sign-in is not one). tests/ticket-kit.spec.ts runs a sample in
 * CI, without a child run.
 */
export default defineConfig<HarnessOptions>({
  testDir: '.',
  outputDir: process.env.OUTPUT_DIR ?? '../../test-results/ticket-kit',
  fullyParallel: true,
  // Each run has its own server on its own port: runs in parallel never share one.
  workers: 2,
  timeout: 60_000,
  use: { browserName: 'chromium', launchOptions: chromiumLaunchOptions(), site: ticketSite({ startLoggedIn: true }) },
  reporter: [
    // Users name it 'harness-eval/reporter'; inside this repository, by path.
    // The controls, the lying command agent and the bare stack lie on purpose: the verified stack must let no false success through, and the honest command agent must always succeed.
    ['../../src/playwright/reporter.ts', { outputDir: process.env.REPORT_DIR ?? '../../reports/ticket-kit', gates: [{ site: 'tickets', layers: 'verified' }, { site: 'tickets', agent: 'assign', minSuccessRate: 1 }] }],
    ...(process.env.JSON_OUT ? [['json', { outputFile: process.env.JSON_OUT }] as const] : []),
  ],
});
