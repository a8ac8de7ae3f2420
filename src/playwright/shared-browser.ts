import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import type { BrowserContext, FullConfig, PlaywrightWorkerOptions } from '@playwright/test';
import type { Excluded } from '../core/run.ts';
import { InputError } from '../input.ts';
import { parseJsonObject } from '../text.ts';
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
 * One Chromium for the whole run: launched once by the globalSetup (a Playwright browser server,
 * with the flags of `chromiumLaunchOptions()`, in a process of its own), and connected to by every
 * worker through Playwright's `use.connectOptions`, instead of a browser launched per worker. A
 * matrix has a worker per cell and trial, so that launch was most of a short run's cost. Each test
 * still gets a fresh context.
 */
export function sharedBrowser(env: NodeJS.ProcessEnv = process.env): SharedBrowser {
  // Found when the config loads, as `launchOptions: chromiumLaunchOptions()` would be: a missing
  // Chromium is one line then, even under `--list`, which runs no globalSetup.
  chromiumLaunchOptions(env);
  const wsEndpoint = env[SHARED_BROWSER_ENV];
  return { globalSetup: fileURLToPath(import.meta.url), connectOptions: wsEndpoint ? { wsEndpoint } : undefined };
}

/** How the globalSetup hands the launch options to the browser server (browser-server.mjs). */
const BROWSER_OPTIONS_ENV = 'HARNESS_EVAL_BROWSER_OPTIONS';

/**
 * The playwright-core of the project's own @playwright/test (a peer dependency): the workers connect
 * with that one, and a browser server of another version refuses them. A bare `playwright-core`
 * could be another package's copy (@playwright/mcp has its own).
 */
function playwrightCore(): string {
  const test = createRequire(import.meta.url).resolve('@playwright/test');
  return createRequire(createRequire(test).resolve('playwright')).resolve('playwright-core');
}

/** The stream's first line, or all it said if it ended before one. */
function firstLine(stream: Readable): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      text += chunk;
      if (text.includes('\n')) resolve(text.slice(0, text.indexOf('\n')));
    });
    stream.on('end', () => resolve(text));
  });
}

/**
 * The globalSetup: Playwright runs it in the runner before any worker starts, and runs what it
 * returns after the last worker stopped, an interrupted run's included. The browser server is a
 * child process, not the runner: the workers' page traffic would otherwise be relayed through the
 * runner's event loop, which the reporters share. It ignores the runner's signals, so a Ctrl-C
 * leaves it to the workers still recording their runs; it ends when its stdin does, which the
 * teardown closes, and so does the runner's death (a SIGKILL's too).
 */
export default async function launchSharedBrowser(_config: FullConfig): Promise<() => Promise<void>> {
  const server = spawn(process.execPath, [fileURLToPath(new URL('./browser-server.mjs', import.meta.url)), playwrightCore()], {
    env: { ...process.env, [BROWSER_OPTIONS_ENV]: JSON.stringify(chromiumLaunchOptions()) },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const exited = new Promise((resolve) => server.once('exit', resolve));
  const line = await firstLine(server.stdout);
  const { wsEndpoint, error } = parseJsonObject(line) ?? {};
  if (typeof wsEndpoint !== 'string') throw new InputError(`harness-eval: the shared browser did not start: ${typeof error === 'string' ? error : `its process ended before it said where it listens${line ? ` (it said ${JSON.stringify(line.slice(0, 200))})` : ''}`}`);
  process.env[SHARED_BROWSER_ENV] = wsEndpoint;
  // The run's cost ledger too (a `maxCost` budget), for runs whose reporter is not harness-eval's (a shard's blob).
  const closeLedger = openRunLedger();
  return async () => {
    closeLedger();
    delete process.env[SHARED_BROWSER_ENV];
    server.stdin.end();
    await exited;
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
