import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { chromium, type BrowserContext } from '@playwright/test';
import { chromiumAsFound } from '../playwright/chromium.ts';
import type { Site } from '../core/site.ts';
import { SANDBOXED_DEVTOOLS_PORT, sandboxBase, sandboxedChromium, startupEnv } from './sandbox.ts';
import { workerFolder, type HostIdentity } from './sandbox-identity.ts';

export interface CdpBrowser {
  /** `http://127.0.0.1:PORT`: what `chromium.connectOverCDP()` and other CDP clients take. */
  url: string;
  /** Chromium's profile for this run: removed by `close()`. */
  userDataDir: string;
  /** Whether a client has connected, so Chromium was started. */
  readonly launched: boolean;
  /** Why Chromium could not start, once per client that asked: the run's trace says so. */
  readonly failures: readonly string[];
  /** Its context, Chromium started if no client has connected yet: what the run's MCP server drives (mcp-surface.ts). */
  context(): Promise<BrowserContext>;
  close(): Promise<void>;
}

/**
 * A Chromium of its own for one run, driven over CDP by an agent outside harness-eval, with the
 * site attached: its pages (in its default context or new ones) reach the site at its real origin,
 * as the test's own browser does. Chromium starts when a client first connects to `url` (most
 * agents never do: they use HTTP), and the connection is passed through to its DevTools port.
 */
export async function launchCdpBrowser(site: Pick<Site, 'attach'>, { identity }: { identity?: HostIdentity } = {}): Promise<CdpBrowser> {
  // Short: Chromium cannot start when its user-data-dir's socket path is too long (a long TMPDIR).
  const dir = await mkdtemp(join(identity ? sandboxBase() : tmpdir(), workerFolder('cdp')));
  const userDataDir = join(dir, 'profile');
  let started: Promise<{ context: BrowserContext; devtools: () => Socket }> | undefined;
  const start = () => (started ??= startChromium(dir, userDataDir, site, identity));
  const sockets = new Set<Socket>();
  const failures: string[] = [];
  // Kept for the run's trace, once per client that asked (a CDP connection, an MCP session's first call).
  const failed = (error: Error) => failures.push(error.message.split('\n')[0]!);
  const server = createServer((client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    start().then(
      ({ devtools }) => {
        if (client.destroyed) return;
        const upstream = devtools();
        sockets.add(upstream);
        upstream.on('close', () => sockets.delete(upstream));
        client.pipe(upstream).pipe(client);
        upstream.on('error', () => client.destroy());
        client.on('error', () => upstream.destroy());
      },
      (error: Error) => {
        // Said to the client in its own protocol's terms, and kept for the run's trace: never a bare hang-up to guess at.
        failed(error);
        client.end(`HTTP/1.1 502 Bad Gateway\r\ncontent-type: text/plain\r\nconnection: close\r\n\r\nharness-eval: the run's Chromium did not start: ${failures.at(-1)}\n`);
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    userDataDir,
    get launched() {
      return started !== undefined;
    },
    failures,
    context: () =>
      start().then(
        ({ context }) => context,
        (error: Error) => {
          failed(error);
          throw error;
        },
      ),
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
      const browser = await started?.catch(() => undefined);
      await browser?.context.close().catch(() => undefined);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Chromium with the worker's environment cut to what it needs to start: Playwright would pass it
 * all, keys included, and a page can read file:///proc/self/environ. Sandboxed, it runs in
 * bubblewrap (sandbox.ts) and its DevTools port is reached through a Unix socket.
 */
async function startChromium(dir: string, userDataDir: string, site: Pick<Site, 'attach'>, identity: HostIdentity | undefined): Promise<{ context: BrowserContext; devtools: () => Socket }> {
  const launch = chromiumAsFound();
  const wrapper = identity ? await sandboxedChromium(launch.executablePath ?? chromium.executablePath(), dir, userDataDir, identity) : undefined;
  const context = await chromium.launchPersistentContext(userDataDir, {
    ...launch,
    ...(wrapper && { executablePath: wrapper.path }),
    env: startupEnv(),
    args: [...(launch.args ?? []), `--remote-debugging-port=${wrapper ? SANDBOXED_DEVTOOLS_PORT : 0}`],
  });
  try {
    await site.attach(context);
    if (wrapper) {
      // Its port is known (Chromium writes no DevToolsActivePort for a port it was given): its relay's socket is what to wait for.
      await poll(async () => existsSync(wrapper.devtoolsSocket) || undefined, 'the sandboxed Chromium\u2019s DevTools relay did not start within 10 s');
      return { context, devtools: () => connect(wrapper.devtoolsSocket) };
    }
    const port = await devToolsPort(userDataDir);
    return { context, devtools: () => connect(port, '127.0.0.1') };
  } catch (error) {
    await context.close();
    throw error;
  }
}

/** The port Chromium chose: the first line of `DevToolsActivePort`, written once it listens. */
function devToolsPort(userDataDir: string): Promise<number> {
  return poll(async () => {
    const text = await readFile(join(userDataDir, 'DevToolsActivePort'), 'utf8').catch(() => '');
    const port = Number.parseInt(text.split('\n')[0] ?? '', 10);
    return port > 0 ? port : undefined;
  }, 'Chromium did not open its DevTools port (no DevToolsActivePort after 10 s)');
}

/** What `read` answers once it answers something, trying every 100 ms for 10 s. */
async function poll<T>(read: () => Promise<T | undefined>, failure: string): Promise<T> {
  for (let tries = 0; tries < 100; tries++) {
    const value = await read();
    if (value !== undefined) return value;
    await sleep(100);
  }
  throw new Error(failure);
}
