import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, test } from '@playwright/test';
import { sharedBrowser } from '../src/index.ts';
import { BROWSER_LOST_DETAIL, SHARED_BROWSER_ENV, withBrowserLoss } from '../src/playwright/shared-browser.ts';
import { chromiumLaunchOptions } from '../src/playwright/chromium.ts';
import type { Excluded } from '../src/core/run.ts';
import { collect, playwright, readSummary, workspace } from './playwright-child.ts';
import { browsersUnder } from './processes.ts';
import { running } from './fixtures/shared-browser/server-process.ts';
import { expect } from './support.ts';

const config = 'tests/fixtures/shared-browser/playwright.config.ts';

// Each test runs a child Playwright on a loaded machine.
test.describe.configure({ timeout: 300_000 });

const workspaces: string[] = [];
test.afterEach(() => {
  for (const dir of workspaces.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/**
 * A child run in its own workspace with its own TMPDIR, both removed after the test: every browser
 * it launches has its profile there. The TMPDIR is short, in the system's: Chromium cannot start
 * under a folder whose path is too long for its sockets (a test's output folder is).
 */
function sharedWorkspace() {
  const { dir, env } = workspace('harness-eval-shared-browser-');
  const tmp = mkdtempSync(join(tmpdir(), 'he-browser-'));
  workspaces.push(dir, tmp);
  return { dir, tmp, env: { ...env, TMPDIR: tmp } };
}

/** Who served a child run's browser, as its test saw it (fixtures/shared-browser/shared.run.ts). */
interface ServerSeen {
  runner: number;
  listeners: number[];
  parents: Array<number | undefined>;
}

test('sharedBrowser: a globalSetup file, and connectOptions only once the setup has set the endpoint', () => {
  expect(sharedBrowser({}).connectOptions).toBeUndefined();
  expect(sharedBrowser({ [SHARED_BROWSER_ENV]: 'ws://127.0.0.1:1234/x' }).connectOptions).toEqual({ wsEndpoint: 'ws://127.0.0.1:1234/x' });
  expect(existsSync(sharedBrowser({}).globalSetup)).toBe(true);
});

test('a shared browser that cannot start fails the run with one line saying so', async () => {
  const { env } = sharedWorkspace();
  // A file that exists but is no Chromium: the config loads, the launch fails.
  const child = await playwright(['test', '-c', config], { ...env, CHROMIUM_PATH: process.execPath });
  expect(child.code).toBe(1);
  expect(child.stdout).toContain('harness-eval: the shared browser did not start: ');
  expect(child.stdout).not.toMatch(/^\s+at /m);
});

test('every worker of a run connects to one browser, --trace on records it, and it ends with the run', async () => {
  const { tmp, env } = sharedWorkspace();
  const child = await playwright(['test', '-c', config, '--trace', 'on'], env);
  expect(child.code, child.stdout).toBe(0);

  const results = collect(JSON.parse(readFileSync(env.JSON_OUT, 'utf8')));
  expect(results.map(({ project }) => project).sort()).toEqual(['scripted:diligent · bare', 'scripted:looper · bare']);
  const seen = results.map(({ result }) => JSON.parse(Buffer.from(result.attachments.find((a: { name: string }) => a.name === 'browser.json').body, 'base64').toString()));
  // Two workers (one per cell), one browser: the same endpoint, and one browser process while each ran.
  expect(seen).toEqual([{ endpoint: seen[0].endpoint, connected: true, browsers: 1 }, { endpoint: seen[0].endpoint, connected: true, browsers: 1 }]);
  expect(seen[0].endpoint).toMatch(/^ws:\/\/127\.0\.0\.1:\d+\//);
  for (const { result } of results) expect(result.attachments.map((a: { name: string }) => a.name)).toContain('trace');
  expect(readdirSync(env.OUTPUT_DIR, { recursive: true }).filter((file) => String(file).endsWith('trace.zip'))).toHaveLength(2);
  expect(readSummary(env.REPORT_DIR)).toMatchObject({ complete: true, recorded: 2 });

  // Gone with the run: no process, and nothing answers at its endpoint.
  expect(browsersUnder(tmp)).toEqual([]);
  await expect(chromium.connect(seen[0].endpoint, { timeout: 5_000 })).rejects.toThrow();
});

test('the shared browser is served by a child process of the runner, not by the runner, and ends with the run', async () => {
  const { tmp, env } = sharedWorkspace();
  const child = await playwright(['test', '-c', config, '--project', 'scripted:diligent · bare'], env);
  expect(child.code, child.stdout).toBe(0);
  const [run] = collect(JSON.parse(readFileSync(env.JSON_OUT, 'utf8')));
  const server: ServerSeen = JSON.parse(Buffer.from(run!.result.attachments.find((a: { name: string }) => a.name === 'server.json').body, 'base64').toString());
  // Served by the runner, every worker's page traffic would wait on its event loop, the reporters' too.
  expect(server.listeners).toHaveLength(1);
  expect(server.listeners[0]).not.toBe(server.runner);
  expect(server.parents).toEqual([server.runner]);
  expect(running(server.listeners[0]!)).toBe(false);
  expect(browsersUnder(tmp)).toEqual([]);
});

test('a runner killed (SIGKILL) mid-run leaves no browser server and no browser behind', async () => {
  const { dir, tmp, env } = sharedWorkspace();
  const marker = join(dir, 'started');
  let server: ServerSeen | undefined;
  let waiting: NodeJS.Timeout | undefined;
  // The looper is still going when its runner dies: no teardown runs.
  const child = await playwright(['test', '-c', config, '--project', 'scripted:looper · bare'], { ...env, STARTED_MARKER: marker, MAX_ITERATIONS: '100000' }, () => {
    waiting ??= setInterval(() => {
      const written = existsSync(marker) && readFileSync(marker, 'utf8');
      if (!written) return;
      clearInterval(waiting);
      server = JSON.parse(written);
      // Time for the run to begin, its pages open in the browser.
      setTimeout(() => process.kill(server!.runner, 'SIGKILL'), 5_000);
    }, 100);
  });
  expect(child.code, child.stdout).toBeNull();
  expect(server!.listeners).toHaveLength(1);
  expect(server!.listeners[0]).not.toBe(server!.runner);
  // The server sees its stdin end with the runner, and closes its browser.
  await expect.poll(() => ({ server: running(server!.listeners[0]!), browsers: browsersUnder(tmp) }), { timeout: 30_000 }).toEqual({ server: false, browsers: [] });
});

test('a run interrupted (Ctrl-C) while its agent works is still recorded and traced, and leaves no browser behind', async () => {
  const { dir, tmp, env } = sharedWorkspace();
  const marker = join(dir, 'started');
  let waiting: NodeJS.Timeout | undefined;
  // The looper never finishes below its cap: the run is still going when the interrupt comes.
  const child = await playwright(['test', '-c', config, '--project', 'scripted:looper · bare', '--trace', 'on'], { ...env, STARTED_MARKER: marker, MAX_ITERATIONS: '100000' }, (_stdout, kill) => {
    waiting ??= setInterval(() => {
      if (!existsSync(marker)) return;
      clearInterval(waiting);
      // Time for the run to begin (its start is recorded once the site's first snapshot is taken).
      setTimeout(() => kill('SIGINT'), 10_000);
    }, 100);
  });
  expect(child.code, child.stdout).toBe(130);
  const summary = readSummary(env.REPORT_DIR);
  // Recorded, and in no rate: the interruption says nothing of the agent.
  expect(summary).toMatchObject({ complete: false, planned: 1, recorded: 1, totals: { runs: 0, interrupted: 1 } });
  // The browser outlived the interrupt until the worker had saved the test's trace.
  expect(readdirSync(env.OUTPUT_DIR, { recursive: true }).filter((file) => String(file).endsWith('trace.zip'))).toHaveLength(1);
  expect(browsersUnder(tmp)).toEqual([]);
});

test('two runs in flight in one shared browser see none of each other’s pages, cookies or storage', async () => {
  const tmp = mkdtempSync(join(tmpdir(), 'he-browser-'));
  workspaces.push(tmp);
  const server = await chromium.launchServer({ ...chromiumLaunchOptions({ ...process.env, TMPDIR: tmp }), host: '127.0.0.1' });
  try {
    // Two workers' connections to the one browser, each with its run's context, on the same origin.
    const workers = await Promise.all([chromium.connect(server.wsEndpoint()), chromium.connect(server.wsEndpoint())]);
    const contexts = await Promise.all(workers.map((browser) => browser.newContext()));
    const pages = await Promise.all(
      contexts.map(async (context, index) => {
        await context.route('http://hn.test/**', (route) => route.fulfill({ contentType: 'text/html', body: `<title>run ${index}</title>` }));
        const page = await context.newPage();
        await page.goto('http://hn.test/news');
        return page;
      }),
    );
    await pages[0]!.evaluate(() => {
      document.cookie = 'user=first; path=/';
      localStorage.setItem('seen', 'first');
      sessionStorage.setItem('tab', 'first');
      return new Promise<void>((resolve) => {
        const open = indexedDB.open('run', 1);
        open.onupgradeneeded = () => open.result.createObjectStore('s');
        open.onsuccess = () => (open.result.close(), resolve());
      });
    });
    await contexts[0]!.addCookies([{ name: 'session', value: 'first', url: 'http://hn.test/' }]);

    const second = await pages[1]!.evaluate(async () => ({ cookie: document.cookie, local: localStorage.length, session: sessionStorage.length, databases: (await indexedDB.databases()).map((db) => db.name) }));
    expect(second).toEqual({ cookie: '', local: 0, session: 0, databases: [] });
    expect(await contexts[1]!.cookies()).toEqual([]);
    expect((await contexts[1]!.storageState()).origins).toEqual([]);
    // Each connection sees its own context and page only, not the other run's.
    expect(workers.map((browser) => browser.contexts().length)).toEqual([1, 1]);
    expect(contexts.map((context) => context.pages().map((page) => page.url()))).toEqual([['http://hn.test/news'], ['http://hn.test/news']]);
    expect(await pages[1]!.title()).toBe('run 1');
    // The first run's own state is there: the check above would pass on a page that kept nothing.
    expect((await contexts[0]!.cookies()).map((cookie) => cookie.name).sort()).toEqual(['session', 'user']);
    // One run ending (its context closed) leaves the other's page working.
    await contexts[0]!.close();
    expect(await pages[1]!.evaluate(() => document.title)).toBe('run 1');
    await Promise.all(workers.map((browser) => browser.close()));
  } finally {
    await server.close();
  }
});

test('a crash of the shared browser fails only the runs it carried, as errors left out of every rate, never as the agent’s failure', async () => {
  const { dir, tmp, env } = sharedWorkspace();
  const marker = join(dir, 'started');
  let waiting: NodeJS.Timeout | undefined;
  // The looper is still going when its browser dies (SIGKILL: a crash, not a close).
  const child = await playwright(['test', '-c', config, '--project', 'scripted:looper · bare'], { ...env, STARTED_MARKER: marker, MAX_ITERATIONS: '100000' }, () => {
    waiting ??= setInterval(() => {
      if (!existsSync(marker)) return;
      clearInterval(waiting);
      setTimeout(() => {
        for (const pid of browsersUnder(tmp)) process.kill(pid, 'SIGKILL');
      }, 8_000);
    }, 100);
  });
  // The run's test fails; the run is recorded, left out as an error: in no rate, not a failure of the agent.
  expect(child.code, child.stdout).toBe(1);
  expect(child.stdout).toContain(BROWSER_LOST_DETAIL);
  const summary = readSummary(env.REPORT_DIR);
  expect(summary, child.stdout).toMatchObject({ planned: 1, recorded: 1, totals: { runs: 0, successes: 0, falseSuccesses: 0, falseFailures: 0 } });
  expect(summary.excluded?.runs.map(({ reason, detail }) => ({ reason, detail }))).toEqual([{ reason: 'error', detail: BROWSER_LOST_DETAIL }]);
  expect(browsersUnder(tmp)).toEqual([]);
});

test('withBrowserLoss: only a run whose browser is gone is left out, and an exclusion already made stands', async () => {
  const up = { browser: () => ({ isConnected: () => true }), cookies: async () => [] } as never;
  const gone = { browser: () => ({ isConnected: () => false }), cookies: async () => [] } as never;
  const unanswered = { browser: () => ({ isConnected: () => true }), cookies: () => Promise.reject(new Error('Target page, context or browser has been closed')) } as never;
  const interrupted = { excluded: { reason: 'interrupted' as const, detail: 'stopped' } };
  const lost = { claimed: false, excluded: { reason: 'error', detail: BROWSER_LOST_DETAIL } };
  const run = (): { claimed: boolean; excluded?: Excluded } => ({ claimed: false });
  expect(await withBrowserLoss(run(), up)).toEqual({ claimed: false });
  expect(await withBrowserLoss(run(), gone)).toEqual(lost);
  expect(await withBrowserLoss(run(), unanswered)).toEqual(lost);
  expect(await withBrowserLoss(interrupted, gone)).toBe(interrupted);
});
