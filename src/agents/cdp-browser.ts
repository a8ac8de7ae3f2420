import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { chromium } from '@playwright/test';
import { chromiumLaunchOptions } from '../playwright/chromium.ts';
import type { Site } from '../sites/site.ts';

export interface CdpBrowser {
  /** `http://127.0.0.1:PORT`: what `chromium.connectOverCDP()` and other CDP clients take. */
  url: string;
  /** Chromium's profile for this run: removed by `close()`. */
  userDataDir: string;
  close(): Promise<void>;
}

/**
 * A Chromium of its own for one run, driven over CDP by an agent outside harness-eval, with the
 * site attached: its pages reach the site at its real origin, as the test's own browser does.
 */
export async function launchCdpBrowser(site: Pick<Site, 'attach'>): Promise<CdpBrowser> {
  // Short: Chromium cannot start when its user-data-dir's socket path is too long (a long TMPDIR).
  const userDataDir = await mkdtemp(join(tmpdir(), 'he-cdp-'));
  const launch = chromiumLaunchOptions();
  try {
    const context = await chromium.launchPersistentContext(userDataDir, { ...launch, args: [...(launch.args ?? []), '--remote-debugging-port=0'] });
    await site.attach(context);
    const port = await devToolsPort(userDataDir);
    return {
      url: `http://127.0.0.1:${port}`,
      userDataDir,
      async close() {
        await context.close().catch(() => undefined);
        await rm(userDataDir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await rm(userDataDir, { recursive: true, force: true });
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
