// Recording any kit's app: its pages by URL, as a browser got them, and its state as the kit reads
// it, into a folder a replayed site serves again without the app. What it replays only reads.
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { BrowserContext, Page } from '@playwright/test';
import { z } from 'zod';
import type { Site, SiteAction, SiteRequest, SyncSiteFactory } from '../core/site.ts';
import type { StateChange } from '../core/state.ts';
import { InputError, parseInput } from '../input.ts';
import { routeSite } from './route.ts';

/** The folder's index: where the pages are, and the state they show. */
const RECORDING = 'recording.json';

const recordingSchema = z.object({
  name: z.string(),
  origin: z.string(),
  username: z.string(),
  /** Each path (with its query) as the browser asked for it: the page it got, or where the app sent it. */
  pages: z.record(z.string(), z.object({ status: z.number(), contentType: z.string(), file: z.string().optional(), redirect: z.string().optional() })),
  state: z.unknown(),
});
type Recording = z.infer<typeof recordingSchema>;

export interface RecordSiteOptions<State> {
  /** A site of the kit, fresh (`await factory.create()`): its app is started, read and disposed of here. */
  site: Site<State, StateChange>;
  /** A browser context to read the pages in (a test's `context`). */
  context: BrowserContext;
  /** The paths to save, with their queries: `/tickets`, `/tickets/2`. */
  paths: readonly string[];
  /** The folder to write; made if missing. */
  out: string;
  /** Run first in the page, before any path: signing in (the kit's own helper), so the pages show what a member sees. */
  before?: (page: Page, site: Site<State, StateChange>) => Promise<void>;
}

/**
 * Saves each path's page as the browser got it from the kit's site (after the app's redirects,
 * each recorded), with the site's secrets (its password, the sessions it set) cut out, and the
 * site's state (`snapshot()`) beside them. Reading must change nothing: a page whose load changed
 * the state (a GET that acts) fails the recording, naming the change. Answers the paths saved.
 */
export async function recordSite<State>({ site, context, paths, out, before }: RecordSiteOptions<State>): Promise<string[]> {
  const recording: Recording = { name: site.name, origin: site.origin, username: site.account.username, pages: {}, state: undefined };
  try {
    await site.attach(context);
    const page = await context.newPage();
    await before?.(page, site);
    const afterSignIn = await site.snapshot();
    mkdirSync(join(out, 'pages'), { recursive: true });
    const redact = (text: string) => [site.account.password, ...(site.secrets?.() ?? [])].filter((secret) => secret.length > 0).reduce((body, secret) => body.replaceAll(secret, '[redacted]'), text);
    let saved = 0;
    for (const path of paths) {
      if (!path.startsWith('/')) throw new InputError(`recordSite: paths: expected a path starting with /, got "${path}"`);
      const response = await page.goto(site.origin + path);
      if (!response) throw new Error(`recordSite: ${path} answered nothing`);
      const landed = new URL(page.url());
      const at = landed.pathname + landed.search;
      if (landed.origin === site.origin && at !== path) recording.pages[path] = { status: 303, contentType: '', redirect: at };
      const file = `pages/${++saved}.body`;
      writeFileSync(join(out, file), redact(await response.text()));
      recording.pages[landed.origin === site.origin ? at : path] = { status: response.status(), contentType: (await response.allHeaders())['content-type'] ?? 'text/html', file };
    }
    const end = await site.snapshot();
    const changed = site.diff(afterSignIn, end);
    if (changed.length > 0) throw new Error(`recordSite: reading the pages changed the app's state (${changed.map((change) => change.detail).join('; ')}): a path that acts is no page to record`);
    recording.state = end;
    writeFileSync(join(out, RECORDING), `${JSON.stringify(recording, null, 2)}\n`);
    return Object.keys(recording.pages);
  } finally {
    await site.dispose?.();
  }
}

export interface ReplayedOptions<State, Change extends StateChange> {
  /** A folder `recordSite` wrote. */
  dir: string;
  /** The kit's diff and classifier: the replayed site speaks the kit's words. */
  diff: (start: State, end: State) => Change[];
  classify: (request: SiteRequest) => SiteAction | undefined;
}

/**
 * A kit's recorded app, served again without it: each recorded path answers its page (or its
 * redirect), anything else 404, and any request but a GET 405, so its state stays the recorded one.
 * What it serves only reads: information tasks, the controls, an agent's way around the pages; a
 * task that changes the app needs the app. Options are checked here; the folder is read once.
 */
export function replayed<State, Change extends StateChange>(options: ReplayedOptions<State, Change>): SyncSiteFactory<State, Change> {
  const dir = resolve(options.dir);
  let recording: Recording;
  try {
    recording = parseInput(recordingSchema, JSON.parse(readFileSync(join(dir, RECORDING), 'utf8')), `replayed: ${join(options.dir, RECORDING)}`);
  } catch (error) {
    if (error instanceof InputError) throw error;
    throw new InputError(`replayed: dir: no recording in ${options.dir} (${(error as Error).message})`);
  }
  const bodies = new Map(Object.entries(recording.pages).flatMap(([path, page]) => (page.file ? [[path, readFileSync(join(dir, page.file))] as const] : [])));
  const name = `${recording.name}-recorded`;
  const handle = async (request: Request): Promise<Response> => {
    const url = new URL(request.url);
    if (request.method !== 'GET' && request.method !== 'HEAD') return new Response('This recording takes no changes.', { status: 405, headers: { allow: 'GET', 'content-type': 'text/plain' } });
    const page = url.origin === recording.origin ? recording.pages[url.pathname + url.search] : undefined;
    if (!page) return new Response('Not recorded.', { status: 404, headers: { 'content-type': 'text/plain' } });
    if (page.redirect !== undefined) return new Response(null, { status: 303, headers: { location: page.redirect } });
    return new Response(request.method === 'HEAD' ? null : bodies.get(url.pathname + url.search)!, { status: page.status, headers: { 'content-type': page.contentType } });
  };
  return {
    name,
    condition: { site: name, recording: dir },
    create: () => ({
      name,
      origin: recording.origin,
      account: { username: recording.username, password: randomBytes(12).toString('base64url') },
      attach: (context) => routeSite(context, handle, recording.origin),
      fetch: handle,
      snapshot: async () => structuredClone(recording.state) as State,
      diff: options.diff,
      idle: async () => ({ settled: true, waitedMs: 0, pending: 0 }),
      classify: options.classify,
    }),
  };
}
