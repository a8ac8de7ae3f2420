import { fileURLToPath } from 'node:url';
import { chromium, type BrowserContext, type FullConfig, type PlaywrightWorkerOptions } from '@playwright/test';
import type { Excluded } from '../core/run.ts';
import { InputError } from '../input.ts';
import { chromiumLaunchOptions } from './chromium.ts';
import { openRunLedger } from './cost.ts';

/** How the run's globalSetup tells its workers where the browser is: workers inherit the runner's environment. */
export const SHARED_BROWSER_ENV = 'HARNESS_EVAL_BROWSER_WS';

export interface SharedBrowser {
  /** The config's `globalSetup` (a path; several go in a list: `[browser.globalSetup, './mine.ts']`). */
  globalSetup: string;
  /** The config's `use.connectOptions`: unset in the runner, the browser's endpoint in every worker. */
  connectOptions: PlaywrightWorkerOptions['connectOptions'];
}

/**
 * One Chromium for the whole run: launched once by the globalSetup (`chromium.launchServer`, with
 * the flags of `chromiumLaunchOptions()`), and connected to by every worker through Playwright's
 * `use.connectOptions`, instead of a browser launched per worker. A matrix has a worker per cell
 * and trial, so that launch was most of a short run's cost. Each test still gets a fresh context.
 */
export function sharedBrowser(env: NodeJS.ProcessEnv = process.env): SharedBrowser {
  // Found when the config loads, as `launchOptions: chromiumLaunchOptions()` would be: a missing
  // Chromium is one line then, even under `--list`, which runs no globalSetup.
  chromiumLaunchOptions(env);
  const wsEndpoint = env[SHARED_BROWSER_ENV];
  return { globalSetup: fileURLToPath(import.meta.url), connectOptions: wsEndpoint ? { wsEndpoint } : undefined };
}

/**
 * The globalSetup: Playwright runs it in the runner before any worker starts, and runs what it
 * returns after the last worker stopped, an interrupted run's included. The browser ignores the
 * runner's signals, so a Ctrl-C leaves it to the workers still recording their runs; if the
 * runner exits without that teardown, Playwright kills the browser as the process exits.
 */
export default async function launchSharedBrowser(_config: FullConfig): Promise<() => Promise<void>> {
  const server = await chromium
    .launchServer({ ...chromiumLaunchOptions(), host: '127.0.0.1', handleSIGINT: false, handleSIGTERM: false, handleSIGHUP: false })
    .catch((error: Error) => {
      // Playwright's message runs on for pages (the whole command line, its log): its first line says what failed.
      throw new InputError(`harness-eval: the shared browser did not start: ${error.message.split('\n')[0]}`);
    });
  process.env[SHARED_BROWSER_ENV] = server.wsEndpoint();
  // The run's cost ledger too (a `maxCost` budget), for runs whose reporter is not harness-eval's (a shard's blob).
  const closeLedger = openRunLedger();
  return async () => {
    closeLedger();
    delete process.env[SHARED_BROWSER_ENV];
    await server.close();
  };
}

/** What a run whose browser ended under it says, when nothing else left it out. */
export const BROWSER_LOST_DETAIL = "the run's browser ended under it (it crashed, or the connection to it was lost): nothing is known of what the agent would have done";

/**
 * A run whose browser was gone when it ended (a crash of the shared browser, or of the worker's
 * own) says nothing of its agent: left out of every rate as an error, and its test fails, never
 * counted as the agent's failure. The other workers' runs, in browsers still up, are unaffected.
 */
export async function withBrowserLoss<Run extends { excluded?: Excluded }>(run: Run, context: BrowserContext): Promise<Run> {
  const browser = context.browser();
  if (run.excluded || !browser) return run;
  // A crash is not always seen as a disconnection yet when the run ends: one round trip tells.
  const lost = !browser.isConnected() || (await context.cookies().then(() => false, () => true));
  return lost ? { ...run, excluded: { reason: 'error', detail: BROWSER_LOST_DETAIL } } : run;
}
