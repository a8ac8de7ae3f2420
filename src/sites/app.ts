// A team's own web app as a site: a server that runs apart from the harness (a process, a
// container, a shared dev server), reached through a forwarding handler at a reserved origin.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrowserContext } from '@playwright/test';
import { SiteDown, type Site, type SiteAccount, type SiteAction, type SiteRequest } from '../core/site.ts';
import type { StateChange } from '../core/state.ts';
import { REQUEST_HEADERS_NOT_FORWARDED, RESPONSE_HEADERS_NOT_FORWARDED, type SiteHandler } from '../http.ts';
import { InputError } from '../input.ts';
import { routeSite } from './route.ts';
import { idleBoundMs, requestsInFlight, sessionCookies } from './site.ts';

/** One run's app: where it answers (`http://127.0.0.1:PORT`), and how to stop it (absent: a server the runs share, left running). */
export interface AppInstance {
  url: string;
  stop?(): Promise<void> | void;
  /** Why the app is gone, if it is (`exited with code 1: …`): said when it no longer answers. */
  ended?(): string | undefined;
}

/**
 * Forwards a request made to `origin` (where the browser and the agent think the app is) to the app
 * at `base`, as it was sent: hop-by-hop and transport headers dropped (fetch sets `host` and
 * `content-length` anew), redirects never followed (the harness follows them, checking each hop),
 * an `Origin` or `Referer` of `origin` shown as `base`'s (a CSRF check then sees its own site),
 * an absolute `Location` to `base` (by 127.0.0.1 or localhost) pointed back at `origin`, a `Set-Cookie`'s `Domain` dropped
 * (the app's host is not the origin's). `base` may be a function: the app's address once it runs.
 */
export function forwardTo(base: string | (() => Promise<string>), origin: string): SiteHandler {
  const at = typeof base === 'string' ? async () => base : base;
  return async (request) => {
    const target = new URL(await at());
    const url = new URL(request.url);
    const headers = new Headers();
    for (const [name, value] of request.headers) if (!REQUEST_HEADERS_NOT_FORWARDED.includes(name)) headers.set(name, value);
    if (headers.get('origin') === origin) headers.set('origin', target.origin);
    const referer = headers.get('referer');
    if (referer !== null && sameOrigin(referer, origin)) headers.set('referer', target.origin + referer.slice(origin.length));
    const body = request.method === 'GET' || request.method === 'HEAD' ? undefined : await request.arrayBuffer();
    const answer = await fetch(new URL(url.pathname + url.search, target), { method: request.method, headers, body, redirect: 'manual' });
    const out = new Headers();
    for (const [name, value] of answer.headers) if (!RESPONSE_HEADERS_NOT_FORWARDED.includes(name) && name !== 'set-cookie') out.set(name, value);
    for (const cookie of answer.headers.getSetCookie()) out.append('set-cookie', cookie.replace(/;\s*domain=[^;]*/gi, ''));
    const location = out.get('location');
    const own = location === null ? undefined : ownOrigins(target).find((one) => sameOrigin(location, one));
    if (location !== null && own !== undefined) out.set('location', origin + location.slice(own.length));
    return new Response(answer.body, { status: answer.status, statusText: answer.statusText, headers: out });
  };
}

/** The app's own address, and the other name of its host on this machine (`localhost` for 127.0.0.1, and back): an app may write either in a redirect. */
function ownOrigins(target: URL): string[] {
  const other = { '127.0.0.1': 'localhost', localhost: '127.0.0.1' }[target.hostname];
  return other === undefined ? [target.origin] : [target.origin, `${target.protocol}//${other}${target.port ? `:${target.port}` : ''}`];
}

/** Whether `url` is `origin` itself or a path under it. */
const sameOrigin = (url: string, origin: string) => url === origin || url.startsWith(`${origin}/`) || url.startsWith(`${origin}?`);

export interface ProxySiteOptions<App extends AppInstance, State, Change extends StateChange> {
  /** The site's name in cells. */
  name: string;
  /** Where the browser and the agent think the app is: a reserved name (`https://tickets.example`), so nothing leaves the machine for it. */
  origin: string;
  /** The account a run signs in with: the app must know it (seed it at start). */
  account: SiteAccount;
  /**
   * This run's app, started on first use (attach, fetch, snapshot), once: a fresh instance
   * (`spawnApp`, a container), or a server the runs share put back to its start (a reset endpoint).
   */
  start(): Promise<App>;
  /** The app's whole state, as the oracle trusts it: read from its own API (a token the agent lacks) or its database. Never sessions. */
  state(app: App): Promise<State>;
  /** What changed between two states, in the app's own words. */
  diff(start: State, end: State): Change[];
  /** The action a request performs (a form post, a `fetch()` call), or undefined when it only reads. */
  classify(request: SiteRequest): SiteAction | undefined;
  /** Secrets of the run beside the sessions the app sets (those are caught from its `Set-Cookie`s): an admin token. */
  secrets?: readonly string[];
  /** A login made in the app for one run of untrusted code (a command agent with `account: true`). */
  issueCredential?(app: App): Promise<SiteAccount>;
  /** The app's slowest answer, in ms: the end snapshot waits for requests in flight up to 2 s + twice this. Default 0. */
  latencyMs?: number;
}

/** A site over an app of its own: `app()` is the run's instance (started if it was not). */
export type ProxySite<App extends AppInstance, State, Change extends StateChange> = Site<State, Change> & { app(): Promise<App> };

/** After a request to the app fails, how long its exit may take to be seen before the failure is taken as the request's own. */
const APP_EXIT_MS = 500;

/**
 * A `Site` that forwards to a running app (`forwardTo`): started on first use, its session cookies
 * kept as secrets, its requests in flight counted for the end snapshot, its state read by `state`,
 * and stopped by `dispose` (an app without `stop`, a shared one, is left running). Spread it to add
 * the rest of the contract (`loginWall`, `signIn`, `tools`).
 */
export function proxySite<App extends AppInstance, State, Change extends StateChange>(options: ProxySiteOptions<App, State, Change>): ProxySite<App, State, Change> {
  const { name, origin, account, latencyMs = 0 } = options;
  if (!URL.canParse(origin) || new URL(origin).origin !== origin) throw new InputError(`proxySite: origin: expected an origin such as https://app.example, got "${origin}"`);
  let started: Promise<App> | undefined;
  const app = () => (started ??= options.start());
  const inFlight = requestsInFlight();
  const sessions = sessionCookies();
  const forward = forwardTo(async () => (await app()).url, origin);
  /** `use`'s answer; an app that is gone says why (SiteDown), not only that it did not answer. */
  const whileUp = async <T>(use: () => Promise<T>): Promise<T> => {
    try {
      return await use();
    } catch (error) {
      const running = await app();
      // A connection refused may come before the app's exit is seen: a moment for it.
      for (let waited = 0; running.ended && running.ended() === undefined && waited < APP_EXIT_MS; waited += 10) await new Promise((resolve) => setTimeout(resolve, 10));
      const ended = running.ended?.();
      throw ended === undefined ? error : new SiteDown(`${name}: the app ${ended}`);
    }
  };
  const handle: SiteHandler = (request) => inFlight.track(() => whileUp(async () => sessions.observe(await forward(request))));
  const { issueCredential } = options;
  return {
    name,
    origin,
    account,
    app,
    async attach(context: BrowserContext) {
      await app();
      await routeSite(context, handle, origin);
    },
    fetch: handle,
    snapshot: () => whileUp(async () => options.state(await app())),
    diff: options.diff,
    idle: () => inFlight.idle(idleBoundMs(latencyMs)),
    secrets: () => [...(options.secrets ?? []), ...sessions.secrets()],
    classify: options.classify,
    ...(issueCredential && { issueCredential: async () => issueCredential(await app()) }),
    async dispose() {
      const running = await started?.catch(() => undefined);
      await running?.stop?.();
    },
  };
}

export interface SpawnAppOptions {
  /** The program (`node`, `npm`, `docker`) and its arguments; `{port}` in an argument is the app's port. */
  command: string;
  args?: readonly string[];
  cwd?: string;
  /** Added to the harness's environment, with `PORT` set to the app's port; `{port}` in a value is replaced too. */
  env?: Readonly<Record<string, string>>;
  /** The path asked until the app answers (any status below 500). Default `/`. */
  ready?: string;
  /** How long the app may take to answer, in ms. Default 20 000. */
  timeoutMs?: number;
  /** The host it listens on: `localhost` for an app that listens there only (on `::1`, as Vite's dev server may). Default `127.0.0.1`. */
  host?: string;
}

/** A spawned app: its port and process, stopped by `stop()` (its whole process group). */
export interface SpawnedApp extends AppInstance {
  port: number;
  pid: number;
  stop(): Promise<void>;
  ended(): string | undefined;
}

/** Apps still running: killed when the process exits, so a worker that dies leaves none behind. */
const running = new Set<ChildProcess>();
let exitHook = false;

/** Output kept for an app's start error: its last lines. */
const OUTPUT_TAIL = 2_000;
/** After SIGTERM, how long an app has to exit before SIGKILL. */
const STOP_GRACE_MS = 5_000;

/**
 * Starts one instance of an app on a port of its own (the OS's choice, held while it runs: runs in
 * parallel never share one) and waits until it answers on 127.0.0.1. An app that exits first, or does not answer
 * in time, fails in one line with the end of its output.
 */
export async function spawnApp(options: SpawnAppOptions): Promise<SpawnedApp> {
  const { command, args = [], cwd, env = {}, ready = '/', timeoutMs = 20_000, host = '127.0.0.1' } = options;
  const port = await holdPort();
  const fill = (value: string) => value.replaceAll('{port}', String(port));
  const child = spawn(command, args.map(fill), {
    cwd,
    env: { ...process.env, PORT: String(port), ...Object.fromEntries(Object.entries(env).map(([key, value]) => [key, fill(value)])) },
    stdio: ['ignore', 'pipe', 'pipe'],
    // A group of its own: `npm run dev` and its server stop together.
    detached: true,
  });
  let output = '';
  const keep = (chunk: Buffer) => (output = (output + chunk.toString()).slice(-OUTPUT_TAIL));
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const exited = new Promise<string>((resolve) => {
    child.once('exit', (code, signal) => resolve(signal ? `was killed by ${signal}` : `exited with code ${code}`));
    child.once('error', (error) => resolve(`could not start: ${error.message}`));
  });
  let gone: string | undefined;
  const lastLines = () => output.trim().split('\n').slice(-5).join(' | ');
  running.add(child);
  void exited.then((why) => {
    gone = why;
    running.delete(child);
    releasePort(port);
  });
  if (!exitHook) {
    exitHook = true;
    process.once('exit', () => {
      for (const app of running) killGroup(app, 'SIGKILL');
      for (const held of heldPorts.keys()) releasePort(held);
    });
  }
  const url = `http://${host}:${port}`;
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
    killGroup(child, 'SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), STOP_GRACE_MS)));
    if ((await Promise.race([exited, late])) === 'late') killGroup(child, 'SIGKILL');
    clearTimeout(timer);
    await exited;
  };
  const problem = await answering(`${url}${ready.startsWith('/') ? ready : `/${ready}`}`, exited, timeoutMs);
  if (problem !== undefined) {
    await stop();
    const tail = lastLines();
    throw new Error(`spawnApp: ${[command, ...args].join(' ')} ${problem}${tail ? `: ${tail}` : ''}`);
  }
  const ended = () => (gone === undefined ? undefined : `${gone}${lastLines() ? `: ${lastLines()}` : ''}`);
  return { url, port, pid: child.pid!, stop, ended };
}

/** Undefined once `url` answers below 500; else why not (the app exited, or the time ran out). */
async function answering(url: string, exited: Promise<string>, timeoutMs: number): Promise<string | undefined> {
  let ended: string | undefined;
  void exited.then((why) => (ended = why));
  const deadline = Date.now() + timeoutMs;
  while (ended === undefined) {
    try {
      const response = await fetch(url, { redirect: 'manual', signal: AbortSignal.timeout(2_000) });
      void response.body?.cancel();
      if (response.status < 500) return undefined;
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline) return `did not answer at ${url} within ${timeoutMs} ms`;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return `${ended} before it answered`;
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  try {
    process.kill(-child.pid!, signal);
  } catch {
    // Already gone.
  }
}

/** Ports this process's apps hold until they exit, each with its lock file. */
const heldPorts = new Map<number, string>();
/** Tries at a port no app holds before giving up: each try is the OS's choice of a free one. */
const PORT_TRIES = 50;

/**
 * A port for one app, held until the app exits: free on 127.0.0.1 now (the OS's choice), and
 * claimed by a lock file in the system's temporary folder, so that no other app of this process or
 * of another harness process (a worker) is handed it while this one starts or runs: two runs never
 * share an app. A lock whose process is gone is cleared.
 */
async function holdPort(): Promise<number> {
  for (let tries = 0; tries < PORT_TRIES; tries++) {
    const port = await freePort();
    const lock = join(tmpdir(), `harness-eval-port-${port}.lock`);
    try {
      writeFileSync(lock, String(process.pid), { flag: 'wx' });
    } catch {
      clearStale(lock);
      continue;
    }
    heldPorts.set(port, lock);
    return port;
  }
  throw new Error(`spawnApp: no port free of other apps in ${PORT_TRIES} tries`);
}

function releasePort(port: number): void {
  const lock = heldPorts.get(port);
  if (lock === undefined) return;
  heldPorts.delete(port);
  rmSync(lock, { force: true });
}

/** Removes a lock left by a process that is gone (killed before it could). */
function clearStale(lock: string): void {
  try {
    process.kill(Number(readFileSync(lock, 'utf8')), 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') rmSync(lock, { force: true });
  }
}

/** A port the OS says is free on 127.0.0.1 now: the app binds it moments later (taken in between, rarely, the app's start fails in one line). */
export async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve, reject) => {
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', resolve);
  });
  const { port } = probe.address() as { port: number };
  await new Promise((resolve) => probe.close(resolve));
  return port;
}
