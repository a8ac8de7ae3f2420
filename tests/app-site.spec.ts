import { existsSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { evaluate } from '../src/eval/evaluate.ts';
import { upvoteFirstPost } from '../src/sites/hn/suite.ts';
import { forwardTo, proxySite, spawnApp, type SpawnedApp } from '../src/sites/app.ts';

/**
 * A team's own app as a site (src/sites/app.ts): a real server process (tests/fixtures/apps/echo.mjs)
 * on a port of its own, reached through the forwarding handler over loopback.
 */
const ECHO = join(import.meta.dirname, 'fixtures', 'apps', 'echo.mjs');
const ORIGIN = 'https://app.example';
const echo = (env: Record<string, string> = {}) => spawnApp({ command: process.execPath, args: [ECHO], env });
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

test.describe('spawnApp', () => {
  test('starts each instance on a port of its own, waits until it answers, and stop() ends it', async () => {
    const apps = await Promise.all([echo(), echo()]);
    try {
      expect(apps[0]!.port).not.toBe(apps[1]!.port);
      for (const app of apps) expect(await (await fetch(app.url)).json()).toMatchObject({ method: 'GET', pid: app.pid });
    } finally {
      await Promise.all(apps.map((app) => app.stop()));
    }
    for (const app of apps) expect(alive(app.pid)).toBe(false);
    // Stopping twice is nothing.
    await apps[0]!.stop();
  });

  test("holds its port while the app runs, by a lock file naming this process that another worker's spawnApp skips; released when the app stops or dies", async () => {
    const apps = await Promise.all(Array.from({ length: 6 }, () => echo()));
    const lock = (app: SpawnedApp) => join(tmpdir(), `harness-eval-port-${app.port}.lock`);
    try {
      expect(new Set(apps.map((app) => app.port)).size).toBe(6);
      for (const app of apps) expect(readFileSync(lock(app), 'utf8')).toBe(String(process.pid));
      // An app that dies on its own lets its port go too.
      process.kill(-apps[0]!.pid, 'SIGKILL');
      await expect.poll(() => existsSync(lock(apps[0]!))).toBe(false);
    } finally {
      await Promise.all(apps.map((app) => app.stop()));
    }
    for (const app of apps) expect(existsSync(lock(app))).toBe(false);
  });

  test('an app that exits before it answers, or a program that is not there, fails in one line with the end of its output', async () => {
    await expect(echo({ EXIT_AT_ONCE: '1' })).rejects.toThrow(/^spawnApp: \S+ \S+echo\.mjs exited with code 3 before it answered: refusing to start: EXIT_AT_ONCE$/);
    await expect(spawnApp({ command: 'no-such-program-here' })).rejects.toThrow(/^spawnApp: no-such-program-here could not start: spawn no-such-program-here ENOENT before it answered$/);
  });
});

test.describe('forwardTo', () => {
  let app: SpawnedApp;
  test.beforeAll(async () => (app = await echo()));
  test.afterAll(async () => app.stop());

  test("sends the request as it was, minus hop-by-hop headers; the site's own Origin and Referer as the app's, another site's kept", async () => {
    const forward = forwardTo(app.url, ORIGIN);
    const sent = async (origin: string) => {
      const headers = { origin, referer: `${origin}/form?x=1`, 'x-custom': 'kept', connection: 'keep-alive', 'proxy-connection': 'keep-alive', 'content-length': '999', host: 'app.example' };
      const response = await forward(new Request(`${ORIGIN}/path?q=1`, { method: 'POST', headers, body: 'a=1&b=2' }));
      return (await response.json()) as { url: string; body: string; headers: Record<string, string> };
    };
    const own = await sent(ORIGIN);
    expect(own).toMatchObject({ url: '/path?q=1', body: 'a=1&b=2', headers: { host: new URL(app.url).host, origin: app.url, referer: `${app.url}/form?x=1`, 'x-custom': 'kept', 'content-length': '7' } });
    expect(own.headers['proxy-connection']).toBeUndefined();
    expect((await sent('https://evil.example')).headers).toMatchObject({ origin: 'https://evil.example', referer: 'https://evil.example/form?x=1' });
  });

  test("never follows a redirect: an absolute Location to the app (by 127.0.0.1 or localhost) points back at the origin, another site's is kept; a cookie's Domain is dropped; a compressed body arrives decoded", async () => {
    const forward = forwardTo(async () => app.url, ORIGIN);
    const get = (path: string) => forward(new Request(ORIGIN + path));
    const redirect = await get('/redirect');
    expect([redirect.status, redirect.headers.get('location')]).toEqual([302, `${ORIGIN}/landing?x=1`]);
    expect((await get('/localhost')).headers.get('location')).toBe(`${ORIGIN}/landing`);
    expect((await get('/elsewhere')).headers.get('location')).toBe('https://other.example/');
    expect((await get('/cookie')).headers.getSetCookie()).toEqual(['sid=session-token-1234567; Path=/; HttpOnly', 'flag=1; Path=/']);
    const gzip = await get('/gzip');
    expect([gzip.headers.get('content-encoding'), await gzip.text()]).toEqual([null, 'unzipped']);
  });
});

test.describe('proxySite', () => {
  const site = (starts: SpawnedApp[] = []) =>
    proxySite({
      name: 'echo',
      origin: ORIGIN,
      account: { username: 'ada', password: 'pw-0123456789' },
      start: async () => {
        const app = await echo();
        starts.push(app);
        return app;
      },
      state: async (app) => ((await (await fetch(app.url)).json()) as { posts: number }).posts,
      diff: (start, end) => (end > start ? [{ kind: 'post', id: 'app', detail: `${end - start} posts` }] : []),
      classify: (request) => (request.method === 'POST' ? { kind: 'post', detail: 'a post' } : undefined),
      secrets: ['admin-token-abcdef'],
    });

  test('starts its app once, on first use; reads its state; keeps its session cookies secret; waits for requests in flight; dispose stops it', async () => {
    const starts: SpawnedApp[] = [];
    const one = site(starts);
    expect(starts).toHaveLength(0);
    expect(await one.snapshot()).toBe(0);
    await one.fetch(new Request(`${ORIGIN}/cookie`));
    await one.fetch(new Request(`${ORIGIN}/`, { method: 'POST', body: 'x' }));
    expect(one.diff(0, await one.snapshot())).toEqual([{ kind: 'post', id: 'app', detail: '1 posts' }]);
    expect(one.secrets!()).toEqual(['admin-token-abcdef', 'session-token-1234567']);
    const slow = one.fetch(new Request(`${ORIGIN}/slow`));
    expect(await one.idle()).toMatchObject({ settled: true, pending: 0 });
    expect(await (await slow).text()).toBe('late');
    expect(starts).toHaveLength(1);
    await one.dispose!();
    expect(alive(starts[0]!.pid)).toBe(false);
  });

  test('in a browser at its origin, a form post reaches the app and the page shows its answer', async ({ context, page }) => {
    const one = site();
    try {
      await one.attach(context);
      await page.goto(`${ORIGIN}/`);
      await page.setContent(`<form method="post" action="${ORIGIN}/submit"><input name="n" value="1"><button>Go</button></form>`);
      await Promise.all([page.waitForURL(`${ORIGIN}/submit`), page.getByRole('button').click()]);
      expect(JSON.parse(await page.locator('body').innerText())).toMatchObject({ method: 'POST', url: '/submit', body: 'n=1' });
    } finally {
      await one.dispose!();
    }
  });

  test('over a server the runs share (a start that answers its address, no stop), dispose leaves it running for the next run', async () => {
    const shared = await echo();
    try {
      const over = () => proxySite({ name: 'shared', origin: ORIGIN, account: { username: 'ada', password: 'pw' }, start: async () => ({ url: shared.url }), state: async () => 0, diff: () => [], classify: () => undefined });
      for (const run of [over(), over()]) {
        expect(((await (await run.fetch(new Request(`${ORIGIN}/`))).json()) as { pid: number }).pid).toBe(shared.pid);
        await run.dispose!();
      }
      expect(alive(shared.pid)).toBe(true);
    } finally {
      await shared.stop();
    }
  });

  test('an app that dies during the run says so where it is next used: the end state, a request', async () => {
    const starts: SpawnedApp[] = [];
    const one = site(starts);
    try {
      await one.snapshot();
      process.kill(-starts[0]!.pid, 'SIGKILL');
      await expect.poll(() => starts[0]!.ended()).toBe('was killed by SIGKILL');
      await expect(one.snapshot()).rejects.toThrow(/^echo: the app was killed by SIGKILL$/);
      await expect(one.fetch(new Request(`${ORIGIN}/`))).rejects.toThrow(/^echo: the app was killed by SIGKILL$/);
    } finally {
      await one.dispose!();
    }
  });

  test('an origin that is not one is bad input, in one line', () => {
    expect(() => proxySite({ origin: 'https://app.example/path' } as never)).toThrow(/^proxySite: origin: expected an origin such as https:\/\/app\.example, got "https:\/\/app\.example\/path"$/);
  });
});

test('evaluate disposes of the site it is given even when the run never begins (a bad model name): an app a factory started is stopped', async ({ context }) => {
  let disposed = 0;
  const site = { ...proxySite({ name: 'x', origin: ORIGIN, account: { username: 'a', password: 'b' }, start: () => echo(), state: async () => 0, diff: () => [], classify: () => undefined }) };
  site.dispose = async () => void (disposed += 1);
  await expect(evaluate({ context, site, model: 'no-such-provider:model', task: upvoteFirstPost })).rejects.toThrow();
  expect(disposed).toBe(1);
});
