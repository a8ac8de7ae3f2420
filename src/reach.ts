import type { Browser, BrowserContext, ConsoleMessage, Download, Frame, Page, Request, Route, WebSocketRoute } from '@playwright/test';
import type { Containment, EscapeAttempt, Escapes } from './core/agent.ts';

/**
 * What a browser a run drives may reach: its site, at the site's one origin, over http(s), and
 * nothing else. `refusedUrl` is the one decision, used by every tool that opens a URL and by the
 * guard on every browser context a run uses (BrowserReach), which refuses, below the tools, every
 * request, WebSocket, navigation and download the site does not account for, and records each
 * as the run's escape attempt (`{ kind: 'browser', detail: <the URL> }`). The browser's own
 * network (chromiumLaunchOptions()) is the line under both: it has none but Playwright's routing.
 */

/** Names of hosts that serve cloud metadata: never a site's. */
const METADATA_HOSTS = new Set(['metadata', 'metadata.google.internal', 'metadata.goog', 'instance-data', 'instance-data.ec2.internal']);

/** What a host is, when it is one no page of a run may reach: loopback, link-local (cloud metadata), a private range, a metadata name. */
export function reservedHost(hostname: string): string | undefined {
  const host = hostname.replace(/^\[|\]$/g, '').replace(/\.$/, '').toLowerCase();
  if (host === 'localhost' || host.endsWith('.localhost')) return 'a loopback name';
  if (METADATA_HOSTS.has(host)) return 'a cloud metadata host';
  const v4 = /^(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(host.replace(/^::ffff:/, ''))?.slice(1).map(Number);
  if (v4) {
    const [a, b] = v4 as [number, number];
    if (a === 127) return 'a loopback address';
    if (a === 169 && b === 254) return 'a link-local address (cloud metadata)';
    if (a === 10 || (a === 172 && b >= 16 && b < 32) || (a === 192 && b === 168) || (a === 100 && b >= 64 && b < 128)) return 'a private address';
    if (a === 0) return 'an unspecified address';
    return undefined;
  }
  if (!host.includes(':')) return undefined;
  // WHATWG URLs write IPv6 hosts compressed and in lower case: the prefixes are plain text.
  if (host === '::1' || host === '::') return 'a loopback address';
  if (/^fe[89ab]/.test(host)) return 'a link-local address';
  if (/^f[cd]/.test(host)) return 'a private address';
  // An IPv4 address mapped into IPv6, as the URL parser writes it (`::ffff:7f00:1`).
  const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(host);
  if (mapped) {
    const [high, low] = [Number.parseInt(mapped[1]!, 16), Number.parseInt(mapped[2]!, 16)];
    return reservedHost(`${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`);
  }
  return undefined;
}

/**
 * Why a browser of a run may not open `url`, or undefined when it may. With the site's `origin`:
 * only that origin, over http(s) (a site on a loopback origin is served by routing, never by the
 * network). Without one (a page no run guards): any http(s) URL but a reserved host's.
 * Every other scheme is refused: `file:`, `view-source:`, `chrome:`, `devtools:`, `data:`, `blob:`,
 * `javascript:`…
 */
export function refusedUrl(url: string, origin?: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'it is not a URL';
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return `${parsed.protocol} URLs are refused: the browser opens the site's http(s) pages only`;
  if (origin !== undefined) return parsed.origin === origin ? undefined : `${parsed.origin} is not the site's origin (${origin}): the browser reaches the run's site only`;
  const reserved = reservedHost(parsed.hostname);
  return reserved && `${parsed.hostname} is ${reserved}: the browser never reaches one`;
}

/** Why `url` is refused to the pages of `context`: by its guard (and recorded as the run's attempt), or as for any page when no run guards it. */
export function refusedIn(context: BrowserContext, url: string): string | undefined {
  const reach = reaches.get(context);
  return reach ? reach.check(url) : refusedUrl(url);
}

/** Records `url` as refused to the page that sent `request`, when a run guards its context (a site's redirect to another origin). */
export function recordRefused(request: Request, url: string): void {
  if (!request.serviceWorker()) reaches.get(request.frame().page().context())?.record(url);
}

/** The guard of each browser context a run uses, while it does: how a tool records what it refused. */
const reaches = new WeakMap<BrowserContext, BrowserReach>();

/** Attempts kept per run, each URL once: a page that loops over origins cannot grow its record without end. */
export const MAX_BROWSER_ATTEMPTS = 50;
/** What stands for the attempts past MAX_BROWSER_ATTEMPTS (the same words in every run, so the report counts them as one). */
export const MORE_ATTEMPTS = `more URLs refused than the ${MAX_BROWSER_ATTEMPTS} listed`;
/** A URL is kept to this many characters (a data: URL can be megabytes). */
const URL_CHARS = 300;

/** Chromium's own words for a page's navigation it blocked before any request (`location = 'file:///…'`, a top-level `data:` URL). */
const BLOCKED_BY_CHROMIUM = /^Not allowed to (?:load local resource|navigate top frame to data URL): (.+)$/;
/** Chromium's words for a request it blocked as mixed content (`http:` from an https page: a resource, an XMLHttpRequest, a form's target). */
const MIXED_CONTENT = /^Mixed Content: .*? insecure [\w ]+ '([^']+)'/;

/** Where a main frame may be that is not the site: a blank page, and the error page of a request refused. */
const NOWHERE = new Set(['about:blank', 'chrome-error://chromewebdata/']);

/**
 * One run's guard on the browser contexts it uses, for its site at `origin`: on each context,
 *  - a route under the site's own (registered first, so the site's route wins) that refuses every
 *    request to another origin: a page load is answered 204 (the page stays), anything else aborted;
 *  - a WebSocket route that refuses (closes) every socket to another origin;
 *  - a watch on every page: a main frame that arrives somewhere refused (a `view-source:` or `data:`
 *    page a tool did not open) is recorded and sent to about:blank; a download is recorded and
 *    cancelled; Chromium's own refusals of a page's navigation (`location = 'file:///…'`) and of
 *    mixed content are recorded.
 * Every refusal is an escape attempt of the run (`attempts`), each URL once.
 */
export class BrowserReach {
  readonly attempts: EscapeAttempt[] = [];
  private readonly released: Array<() => Promise<void>> = [];

  /** `refuseDownloads`: false where the browser's owner keeps its own download policy (a command agent's Chromium, cdp-browser.ts). */
  constructor(
    readonly origin: string,
    private readonly refuseDownloads = true,
  ) {}

  /**
   * Why `url` is refused, recorded as an attempt when it is (a string that is no URL is a mistake,
   * not an attempt); undefined when the browser may go there. `as`: the URL it is judged as (a socket's, as http).
   */
  check(url: string, as = url): string | undefined {
    const refused = refusedUrl(as, this.origin);
    if (refused && URL.canParse(as)) this.record(url);
    return refused;
  }

  /** Records a URL the run's browser was refused. */
  record(url: string): void {
    const detail = url.length > URL_CHARS ? `${url.slice(0, URL_CHARS)}…` : url;
    if (this.attempts.some((attempt) => attempt.detail === detail)) return;
    if (this.attempts.length < MAX_BROWSER_ATTEMPTS) this.attempts.push({ kind: 'browser', detail });
    else if (this.attempts.length === MAX_BROWSER_ATTEMPTS) this.attempts.push({ kind: 'browser', detail: MORE_ATTEMPTS });
  }

  /** Guards `context` until `release()`; before the site is attached to it, so the site's route is asked first. */
  async guard(context: BrowserContext): Promise<void> {
    reaches.set(context, this);
    const route = (route: Route) => {
      const request = route.request();
      if (!this.check(request.url())) return route.fallback();
      return request.isNavigationRequest() ? route.fulfill({ status: 204 }) : route.abort('blockedbyclient');
    };
    let guarding = true;
    const socket = (socket: WebSocketRoute) => {
      // A socket's origin is its http(s) one; once the run is over, the context is the test's again.
      if (!guarding || !this.check(socket.url(), socket.url().replace(/^ws/, 'http'))) return socket.connectToServer();
      return socket.close({ code: 1008, reason: 'harness-eval: the browser reaches the run’s site only' });
    };
    const onConsole = (message: ConsoleMessage) => {
      const url = message.type() === 'error' && (BLOCKED_BY_CHROMIUM.exec(message.text()) ?? MIXED_CONTENT.exec(message.text()))?.[1];
      if (url) this.record(url);
    };
    const watched = new Map<Page, () => void>();
    const watch = (page: Page) => watched.set(page, this.watch(page));
    await context.route('**/*', route);
    await context.routeWebSocket(/.*/, socket);
    context.on('console', onConsole);
    context.pages().forEach(watch);
    context.on('page', watch);
    this.released.push(async () => {
      guarding = false;
      if (reaches.get(context) === this) reaches.delete(context);
      context.off('page', watch);
      context.off('console', onConsole);
      for (const unwatch of watched.values()) unwatch();
      await context.unroute('**/*', route).catch(() => {});
    });
  }

  /** Takes the guard off every context it is on (the test's context outlives the run). */
  async release(): Promise<void> {
    for (const release of this.released.splice(0)) await release();
  }

  /** An agent's escapes with the browser's attempts after them: undefined when there are none of either. */
  escapes(agent: Escapes | undefined): Escapes | undefined {
    if (this.attempts.length === 0) return agent;
    return { processesLeft: agent?.processesLeft ?? 0, attempts: [...(agent?.attempts ?? []), ...this.attempts] };
  }

  /** A page's main frame kept on the site, and its downloads refused; answers how to stop watching. */
  private watch(page: Page): () => void {
    const onFrame = (frame: Frame) => {
      const url = frame.url();
      if (frame !== page.mainFrame() || NOWHERE.has(url) || !this.check(url)) return;
      void page.goto('about:blank').catch(() => {});
    };
    const onDownload = (download: Download) => {
      this.record(download.url());
      void download.cancel().catch(() => {});
    };
    page.on('framenavigated', onFrame);
    if (this.refuseDownloads) page.on('download', onDownload);
    return () => {
      page.off('framenavigated', onFrame);
      page.off('download', onDownload);
    };
  }
}

/** The command-line switch that says how the browser is contained (chromiumLaunchOptions() adds it; its value is the Containment as URI-encoded JSON). */
export const CONTAINMENT_SWITCH = '--harness-eval-containment';

/** `containment` as a switch on Chromium's command line. */
export function containmentSwitch(containment: Containment): string {
  return `${CONTAINMENT_SWITCH}=${encodeURIComponent(JSON.stringify(containment))}`;
}

const containments = new WeakMap<Browser, Promise<Containment>>();

/**
 * How `browser` is contained, as its own command line says (the switch chromiumLaunchOptions()
 * gave it, the last one standing), asked once per browser: a browser launched otherwise says
 * nothing, and is not contained.
 */
export function browserContainment(browser: Browser | null): Promise<Containment> {
  const unknown: Containment = { contained: false, reason: 'its browser does not say it is sandboxed: it was not launched with chromiumLaunchOptions()' };
  if (!browser) return Promise.resolve(unknown);
  const known = containments.get(browser) ?? readContainment(browser).then((said) => said ?? unknown, () => unknown);
  containments.set(browser, known);
  return known;
}

async function readContainment(browser: Browser): Promise<Containment | undefined> {
  const session = await browser.newBrowserCDPSession();
  try {
    const { commandLine } = await session.send('SystemInfo.getInfo');
    const value = [...commandLine.matchAll(new RegExp(`${CONTAINMENT_SWITCH}=(\\S+)`, 'g'))].at(-1)?.[1];
    if (value === undefined) return undefined;
    const { contained, reason } = JSON.parse(decodeURIComponent(value)) as Partial<Containment>;
    return typeof contained === 'boolean' && typeof reason === 'string' ? { contained, reason } : undefined;
  } finally {
    await session.detach().catch(() => {});
  }
}
