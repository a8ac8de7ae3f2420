import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { chromium, type BrowserContext } from '@playwright/test';
import { chromiumLaunchOptions } from '../playwright/chromium.ts';
import type { Site } from '../sites/site.ts';

export interface CdpBrowser {
  /** `http://127.0.0.1:PORT`: what `chromium.connectOverCDP()` and other CDP clients take. */
  url: string;
  /** Chromium's profile for this run: removed by `close()`. */
  userDataDir: string;
  /** Whether a client has connected, so Chromium was started. */
  readonly launched: boolean;
  close(): Promise<void>;
}

/**
 * A Chromium of its own for one run, driven over CDP by an agent outside harness-eval, with the
 * site attached: its pages (in its default context or new ones) reach the site at its real origin,
 * as the test's own browser does. Chromium starts when a client first connects to `url` (most
 * agents never do: they use HTTP), and the connection is passed through to its DevTools port.
 */
export async function launchCdpBrowser(site: Pick<Site, 'attach'>): Promise<CdpBrowser> {
  // Short: Chromium cannot start when its user-data-dir's socket path is too long (a long TMPDIR).
  const userDataDir = await mkdtemp(join(tmpdir(), 'he-cdp-'));
  let started: Promise<{ context: BrowserContext; port: number }> | undefined;
  const start = () => (started ??= startChromium(userDataDir, site));
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    start().then(
      ({ port }) => {
        if (client.destroyed) return;
        const upstream = connect(port, '127.0.0.1');
        sockets.add(upstream);
        upstream.on('close', () => sockets.delete(upstream));
        client.pipe(upstream).pipe(client);
        upstream.on('error', () => client.destroy());
        client.on('error', () => upstream.destroy());
      },
      () => client.destroy(),
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
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
      const browser = await started?.catch(() => undefined);
      await browser?.context.close().catch(() => undefined);
      await rm(userDataDir, { recursive: true, force: true });
    },
  };
}

async function startChromium(userDataDir: string, site: Pick<Site, 'attach'>): Promise<{ context: BrowserContext; port: number }> {
  const launch = chromiumLaunchOptions();
  const context = await chromium.launchPersistentContext(userDataDir, { ...launch, args: [...(launch.args ?? []), '--remote-debugging-port=0'] });
  try {
    await site.attach(context);
    return { context, port: await devToolsPort(userDataDir) };
  } catch (error) {
    await context.close();
    throw error;
  }
}

/** The port Chromium chose: the first line of `DevToolsActivePort`, written once it listens. */
async function devToolsPort(userDataDir: string): Promise<number> {
  for (let tries = 0; tries < 100; tries++) {
    const text = await readFile(join(userDataDir, 'DevToolsActivePort'), 'utf8').catch(() => '');
    const port = Number.parseInt(text.split('\n')[0] ?? '', 10);
    if (port > 0) return port;
    await sleep(100);
  }
  throw new Error('Chromium did not open its DevTools port (no DevToolsActivePort after 10 s)');
}
