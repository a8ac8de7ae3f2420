import { existsSync } from 'node:fs';
import { copyFile, lstat, mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { chromium, type BrowserContext, type CDPSession } from '@playwright/test';
import { chromiumAsFound } from '../playwright/chromium.ts';
import type { EscapeAttempt } from '../core/agent.ts';
import { BrowserReach } from '../reach.ts';
import type { Site } from '../core/site.ts';
import { serveCdp, type CdpCommand } from './cdp-relay.ts';
import { SANDBOXED_DEVTOOLS_PORT, SANDBOXED_DEVTOOLS_SOCKET, sandboxBase, sandboxedChromium, startupEnv } from './sandbox.ts';
import type { HostIdentity } from './sandbox-identity.ts';
import { ownFolder } from '../leftovers.ts';
import { tmpfsFull } from './sandbox-limits.ts';
import type { View } from './sandbox-mounts.ts';

/** Where a run's browser may download: nowhere unless given; given, into the run's folder, at most `maxFiles` files and `maxBytes` bytes in all. */
export interface Downloads {
  maxBytes: number;
  maxFiles: number;
}

/** What the run's browser did that its trace records: a page of its crashed, or the browser itself ended, while the agent drove it. */
export interface BrowserEvent {
  name: 'browser page crashed' | 'browser ended';
  data?: Record<string, string>;
}

export interface CdpBrowser {
  /** `http://127.0.0.1:PORT`: what `chromium.connectOverCDP()` and other CDP clients take. */
  url: string;
  /** Chromium's profile for this run: removed by `close()`. */
  userDataDir: string;
  /** Whether a client has connected, so Chromium was started. */
  readonly launched: boolean;
  /** Why Chromium could not start, once per client that asked: the run's trace says so. */
  readonly failures: readonly string[];
  /** What it did that the run's trace records, in order. */
  readonly events: readonly BrowserEvent[];
  /** What it refused: downloads while they are off, and past their cap (`kind: 'browser'`). */
  readonly attempts: readonly EscapeAttempt[];
  /** Its context, Chromium started if no client has connected yet: what the run's MCP server drives (mcp-surface.ts). */
  context(): Promise<BrowserContext>;
  /** Copies what it downloaded (regular files, within the cap) to `destination`: only with `downloads`. */
  keepDownloads(destination: string): Promise<void>;
  close(): Promise<void>;
}

export interface CdpBrowserOptions {
  /** The run's sandbox: Chromium runs in one of its own, as the agent's identity, showing what the agent's shows. None: unsandboxed. */
  sandbox?: { identity: HostIdentity; view: View };
  /** Downloads allowed, within their cap; off (refused) when not given. */
  downloads?: Downloads;
  /** Routes of the run's own on its context, after the site's, so asked first (an ACP agent's layers' request checks). */
  guard?: (context: BrowserContext) => Promise<void>;
}

/**
 * A Chromium of its own for one run, driven over CDP by an agent outside harness-eval, with the
 * site attached: its pages (in its default context or new ones) reach the site at its real origin,
 * as the test's own browser does. Chromium starts when a client first connects to `url` (most
 * agents never do: they use HTTP), through a relay (cdp-relay.ts) that gives every
 * `setDownloadBehavior` a client sends the run's policy: downloads refused, or into the run's
 * downloads folder. A session of its own watches every download (refused, past the cap: an
 * escape attempt each) and every crash.
 */
export async function launchCdpBrowser(site: Pick<Site, 'attach' | 'origin'>, { sandbox, downloads, guard }: CdpBrowserOptions = {}): Promise<CdpBrowser> {
  // Short: Chromium cannot start when its user-data-dir's socket path is too long (a long TMPDIR).
  const dir = await mkdtemp(join(sandbox ? sandboxBase() : tmpdir(), ownFolder('cdp')));
  const userDataDir = join(dir, 'profile');
  // In the sandbox, a tmpfs of the cap's size; unsandboxed, a folder of the run's, held to the cap by watching.
  const downloadsDir = join(dir, 'downloads');
  let started: Promise<Started> | undefined;
  let closing = false;
  const events: BrowserEvent[] = [];
  // What its guard refused (another origin, a refused scheme, a loopback or metadata host), with its own downloads' refusals: the downloads are its own policy's.
  const reach = new BrowserReach(site.origin, false);
  const attempts = reach.attempts;
  const attempt = (detail: string) => void (attempts.some((seen) => seen.detail === detail) || attempts.push({ kind: 'browser', detail }));
  const start = () =>
    (started ??= startChromium({ dir, userDataDir, site, reach, sandbox, guard, downloads: downloads && { ...downloads, dir: downloadsDir } }).then((running) => {
      // Crashed or closed by a client (Browser.crash, Browser.close): the agent's doing, noted; the run goes on and is judged.
      running.context.on('close', () => closing || events.push({ name: 'browser ended' }));
      watch(running.session, downloads, { attempt, event: (event) => events.push(event), downloadsDir: running.root + downloadsDir });
      return running;
    }));
  const failures: string[] = [];
  // Kept for the run's trace, once per client that asked (a CDP connection, an MCP session's first call).
  const failed = (error: Error) => failures.push(error.message.split('\n')[0]!);
  const relay = await serveCdp({ connect: () => start().then(({ devtools }) => devtools()), rewrite: downloadPolicy(downloads && downloadsDir), failed });
  return {
    url: relay.url,
    userDataDir,
    get launched() {
      return started !== undefined;
    },
    failures,
    events,
    attempts,
    context: () =>
      start().then(
        ({ context }) => context,
        (error: Error) => {
          failed(error);
          throw error;
        },
      ),
    async keepDownloads(destination) {
      const running = await started?.catch(() => undefined);
      if (downloads && running) await copyDownloads(running.root + downloadsDir, destination, downloads);
    },
    async close() {
      closing = true;
      await relay.close();
      const running = await started?.catch(() => undefined);
      await running?.context.close().catch(() => undefined);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

interface Started {
  context: BrowserContext;
  /** Its browser-wide session: downloads and crashes are watched there. */
  session: CDPSession;
  /** A new connection to its DevTools port. */
  devtools: () => Socket;
  /** Where the host sees its filesystem: `/proc/<pid>/root` of its sandbox's first process, or '' unsandboxed. */
  root: string;
}

/**
 * Chromium with the worker's environment cut to what it needs to start: Playwright would pass it
 * all, keys included, and a page can read file:///proc/self/environ. Sandboxed, it runs in
 * bubblewrap (sandbox.ts) and its DevTools port is reached through a Unix socket in its sandbox.
 */
async function startChromium({ dir, userDataDir, site, reach, sandbox, guard, downloads }: { dir: string; userDataDir: string; site: Pick<Site, 'attach' | 'origin'>; reach: BrowserReach; sandbox: CdpBrowserOptions['sandbox']; guard: CdpBrowserOptions['guard']; downloads: (Downloads & { dir: string }) | undefined }): Promise<Started> {
  const launch = chromiumAsFound();
  const wrapper = sandbox ? await sandboxedChromium(launch.executablePath ?? chromium.executablePath(), dir, userDataDir, { ...sandbox, ...(downloads && { downloads }) }) : undefined;
  const context = await chromium.launchPersistentContext(userDataDir, {
    ...launch,
    ...(wrapper && { executablePath: wrapper.path }),
    env: startupEnv(),
    // Refused until the session below sets the run's policy.
    acceptDownloads: false,
    args: [...(launch.args ?? []), `--remote-debugging-port=${wrapper ? SANDBOXED_DEVTOOLS_PORT : 0}`],
  });
  try {
    // Guarded as the test's browser is (reach.ts), before the site, so the site's route is asked first: what its agent sends elsewhere is refused and named.
    await reach.guard(context);
    await site.attach(context);
    await guard?.(context);
    const session = await context.browser()!.newBrowserCDPSession();
    await session.send('Browser.setDownloadBehavior', downloads ? { behavior: 'allow', downloadPath: downloads.dir, eventsEnabled: true } : { behavior: 'deny', eventsEnabled: true });
    await session.send('Target.setDiscoverTargets', { discover: true });
    if (wrapper) {
      const pid = await poll(async () => childPid(await readFile(wrapper.info, 'utf8').catch(() => '')), 'the sandboxed Chromium\u2019s bwrap did not say its pid within 10 s');
      const root = `/proc/${pid}/root`;
      const socket = root + SANDBOXED_DEVTOOLS_SOCKET;
      // Its port is known (Chromium writes no DevToolsActivePort for a port it was given): its relay's socket is what to wait for.
      await poll(async () => existsSync(socket) || undefined, 'the sandboxed Chromium\u2019s DevTools relay did not start within 10 s');
      return { context, session, root, devtools: () => connect(socket) };
    }
    const port = await devToolsPort(userDataDir);
    return { context, session, root: '', devtools: () => connect(port, '127.0.0.1') };
  } catch (error) {
    await context.close();
    throw error;
  }
}

/** bwrap's `--info-fd` JSON: the pid of its sandbox's first process, once written whole. */
function childPid(info: string): number | undefined {
  try {
    const pid: unknown = (JSON.parse(info) as Record<string, unknown>)['child-pid'];
    return typeof pid === 'number' && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The run's download policy, as the relay applies it to each command a client sends: every
 * `setDownloadBehavior` (Browser's, for any context; Page's, deprecated) refuses downloads, or,
 * when `downloadsDir` is given, sends them there whatever folder the client named.
 */
export function downloadPolicy(downloadsDir: string | undefined): (command: CdpCommand) => CdpCommand {
  return (command) => {
    if (command.method !== 'Browser.setDownloadBehavior' && command.method !== 'Page.setDownloadBehavior') return command;
    const { downloadPath: _named, behavior, ...params } = command.params ?? {};
    if (downloadsDir === undefined || behavior === 'deny') return { ...command, params: { ...params, behavior: 'deny' } };
    return { ...command, params: { ...params, behavior: behavior === 'allowAndName' ? 'allowAndName' : 'allow', downloadPath: downloadsDir } };
  };
}

/**
 * Watches the browser-wide session for every download in any context, which Chromium reports there
 * once any session asked for download events: off, each is cancelled (the first named, with its
 * URL); on, each past `maxFiles`, or whose bytes would take the downloads past `maxBytes`, is
 * cancelled and named. Every crashed page is noted.
 */
function watch(session: CDPSession, downloads: Downloads | undefined, { attempt, event, downloadsDir }: { attempt: (detail: string) => void; event: (event: BrowserEvent) => void; downloadsDir: string }): void {
  const cancel = async (guid: string) => {
    // A download is cancelled in its own context, which its events do not name: the default first, then each other.
    const { browserContextIds } = await session.send('Target.getBrowserContexts').catch(() => ({ browserContextIds: [] as string[] }));
    for (const browserContextId of [undefined, ...browserContextIds]) {
      if (await session.send('Browser.cancelDownload', { guid, ...(browserContextId && { browserContextId }) }).then(() => true, () => false)) return;
    }
  };
  const cancelled = new Set<string>();
  const refuse = (guid: string, detail: string | undefined) => {
    cancelled.add(guid);
    if (detail) attempt(detail);
    void cancel(guid);
  };
  const received = new Map<string, number>();
  let begun = 0;
  session.on('Browser.downloadWillBegin', ({ guid, url }) => {
    begun += 1;
    // Off, the relay and the default context refuse it already; cancelling holds for a context a client left as Chromium's default. The first is named.
    if (!downloads) refuse(guid, begun === 1 ? `a download refused (downloads are off): ${url.slice(0, 200)}` : undefined);
    else if (begun > downloads.maxFiles) refuse(guid, `a download refused: past its cap (downloads.maxFiles: ${downloads.maxFiles})`);
  });
  const pastBytes = `a download cut short: past its cap (downloads.maxBytes: ${downloads?.maxBytes})`;
  session.on('Browser.downloadProgress', ({ guid, state, receivedBytes, totalBytes }) => {
    if (!downloads || cancelled.has(guid)) return;
    received.delete(guid);
    // Failed where the downloads folder is full (in the sandbox, its tmpfs fills before a total is known to be past the cap).
    if (state === 'canceled') return void (tmpfsFull(downloadsDir, ROOM_BYTES) && attempt(pastBytes));
    // What it takes: its whole size once known, else its bytes so far.
    const bytes = state === 'inProgress' ? Math.max(receivedBytes, totalBytes) : receivedBytes;
    const others = [...received.values()].reduce((sum, taken) => sum + taken, 0);
    if (state === 'inProgress' && others + bytes > downloads.maxBytes) return refuse(guid, pastBytes);
    received.set(guid, bytes);
  });
  session.on('Target.targetCrashed', ({ targetId, status }) => event({ name: 'browser page crashed', data: { targetId, status } }));
}

/** Less room than this left in the downloads folder: a download that failed there failed for want of room. */
const ROOM_BYTES = 1024 * 1024;

/**
 * Copies the regular files of the flat folder `from` (Chromium's downloads: no subfolder, no
 * link) to `to`: at most `maxFiles` files, `maxBytes` bytes in all, downloads still in progress
 * (`.crdownload`) left out.
 */
async function copyDownloads(from: string, to: string, { maxBytes, maxFiles }: Downloads): Promise<void> {
  let [files, bytes] = [0, 0];
  for (const name of (await readdir(from).catch(() => [])).sort()) {
    const stat = await lstat(join(from, name)).catch(() => undefined);
    if (!stat?.isFile() || name.endsWith('.crdownload') || files >= maxFiles || bytes + stat.size > maxBytes) continue;
    await mkdir(to, { recursive: true });
    await copyFile(join(from, name), join(to, name));
    [files, bytes] = [files + 1, bytes + stat.size];
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
