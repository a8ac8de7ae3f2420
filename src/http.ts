/** Small pieces of HTTP that the site adapters, the live site, the site kit's sign-in, the harness's request check and the model providers share. */
import type { Request as PlaywrightRequest, Route } from '@playwright/test';
import { recordRefused } from './reach.ts';

/**
 * Hop-by-hop and transport headers: they describe the client's connection, not the request, and
 * Node's fetch refuses some of them (`keep-alive`, `transfer-encoding`, `upgrade`, `expect`). It
 * negotiates `accept-encoding` itself, so the body it hands back is always decoded.
 */
export const REQUEST_HEADERS_NOT_FORWARDED = ['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'te', 'trailer', 'expect', 'host', 'content-length', 'accept-encoding'];
/** A body handed on is decoded and whole, so these no longer describe it. */
export const RESPONSE_HEADERS_NOT_FORWARDED = ['connection', 'keep-alive', 'transfer-encoding', 'content-encoding', 'content-length'];

/** `name=value` pairs of a Cookie header (or of Set-Cookie values' first parts), by name. */
export function parseCookies(pairs: readonly string[]): Map<string, string> {
  const jar = new Map<string, string>();
  for (const pair of pairs) {
    const [name, ...value] = pair.trim().split('=');
    if (name) jar.set(name, value.join('='));
  }
  return jar;
}

export function cookieHeaderPairs(header: string | null | undefined): string[] {
  return header?.split(';') ?? [];
}

/** A Cookie header with the cookies that Set-Cookie answers have since set (or cleared, with an empty value). */
export function withSetCookies(header: string | null | undefined, setCookies: readonly string[]): string {
  const jar = parseCookies([...cookieHeaderPairs(header), ...setCookies.map((setCookie) => setCookie.split(';')[0]!)]);
  return [...jar].filter(([, value]) => value !== '').map(([name, value]) => `${name}=${value}`).join('; ');
}

/**
 * A `retry-after` header (delay-seconds or an HTTP date) in milliseconds from now, capped so that
 * one header cannot stall a run; undefined when absent or unreadable.
 */
export function retryAfterMs(header: string | null, maxMs: number): number | undefined {
  if (!header?.trim()) return undefined;
  const seconds = Number(header);
  const ms = Number.isFinite(seconds) ? seconds * 1000 : Date.parse(header) - Date.now();
  if (Number.isNaN(ms)) return undefined;
  return Math.min(Math.max(ms, 0), maxMs);
}

/**
 * Posts a login form from the harness's own HTTP client, never from the page, and answers the
 * session cookies the site set: none when it refused. The password so never enters the page, so
 * it cannot reach a DOM snapshot, a screenshot or Playwright's trace (which records what `fill`
 * types and every request body).
 */
export async function postLoginForm(
  fetchSite: (request: Request) => Promise<Response>,
  action: string,
  /** Name and value pairs, in the form's order. */
  fields: string[][],
  cookie = '',
): Promise<{ status: number; cookies: Array<[string, string]> }> {
  const response = await fetchSite(
    new Request(action, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...(cookie && { cookie }) },
      body: new URLSearchParams(fields),
      redirect: 'manual',
    }),
  );
  void response.body?.cancel();
  if (response.status < 300 || response.status >= 400) return { status: response.status, cookies: [] };
  const cookies = [...parseCookies(response.headers.getSetCookie().map((header) => header.split(';')[0]!))].filter(([, value]) => value !== '');
  return { status: response.status, cookies };
}

/** A site as one function: a request in, its response out, redirects answered, not followed. */
export type SiteHandler = (request: Request) => Promise<Response>;

/** A request as a hop check reads it: the browser's own, or one a redirect of it leads to. */
export interface Hop {
  method: string;
  url: string;
  /** A form post's body, as sent. */
  body?: string;
}

export interface ServeOptions {
  /** Whether the page that asked for `response` dies instead of receiving it (a site's crash fault): it is closed. */
  crashes?: (response: Response) => boolean;
  /**
   * Asked before each request is sent to the site (the browser's own, then each redirect hop this
   * follows) and before the browser is handed a redirect off the site: a reason refuses it, and it
   * is never sent. A refused page load is answered 204 No Content (the page stays where it was,
   * with the cookies earlier hops set); any other refused request is aborted.
   */
  check?: (hop: Hop) => Promise<string | undefined>;
}

const MAX_REDIRECTS = 5;

/**
 * Answers a routed request from `handler`, the site at `origin`. Playwright does not intercept the
 * request that a fulfilled redirect leads to: the browser sends it to the network
 * (microsoft/playwright#23301). So this follows the site's redirects on its origin itself, as the
 * browser would (a GET, with the cookies just set), serves the final page, and for a page load puts
 * the final URL in the address bar with `history.replaceState`; a redirect to another origin is
 * refused (and, on a run's guarded context, recorded as its escape attempt). A handler that throws
 * is answered 502, as a gateway's error page: nothing is left hanging.
 */
export async function serveRoute(route: Route, handler: SiteHandler, origin: string, { crashes = () => false, check = async () => undefined }: ServeOptions = {}): Promise<void> {
  const request = route.request();
  const navigation = request.isNavigationRequest();
  const cookies: string[] = [];
  const refuse = async () => {
    if (!navigation) return route.abort('blockedbyclient');
    // Cookies earlier hops set (a login's session) still reach the browser: those hops happened.
    await route.fulfill({ status: 204, headers: cookies.length > 0 ? { 'set-cookie': cookies.join('\n') } : {} });
  };
  try {
    const headers = forwardable(await request.allHeaders());
    let url = request.url();
    const body = bodyOf(request);
    if (await check({ method: request.method(), url, ...(body && { body: new TextDecoder().decode(body) }) })) return await refuse();
    let response = await handler(new Request(url, { method: request.method(), headers, body, redirect: 'manual' }));
    for (let hops = 0; hops < MAX_REDIRECTS && !crashes(response); hops++) {
      const next = redirectOf(response, url);
      if (!next) break;
      if (await check({ method: 'GET', url: next })) {
        cookies.push(...response.headers.getSetCookie());
        void response.body?.cancel();
        return await refuse();
      }
      cookies.push(...response.headers.getSetCookie());
      void response.body?.cancel();
      // A redirect off the site is refused, never handed to the browser, which would follow it unrouted: the run's browser reaches its site only.
      if (new URL(next).origin !== origin) {
        recordRefused(request, next);
        return await refuse();
      }
      url = next;
      response = await handler(new Request(url, { headers: { ...headers, cookie: withSetCookies(headers.cookie, cookies) }, redirect: 'manual' }));
    }
    if (crashes(response)) return await request.frame().page().close();
    const responseHeaders = Object.fromEntries([...response.headers].filter(([name]) => !RESPONSE_HEADERS_NOT_FORWARDED.includes(name) && name !== 'set-cookie'));
    const allCookies = [...cookies, ...response.headers.getSetCookie()];
    if (allCookies.length > 0) responseHeaders['set-cookie'] = allCookies.join('\n');
    let answer = Buffer.from(await response.arrayBuffer());
    if (url !== request.url() && navigation && /text\/html/.test(responseHeaders['content-type'] ?? '')) {
      answer = Buffer.concat([Buffer.from(`<script>history.replaceState(null, '', ${JSON.stringify(url)})</script>`), answer]);
    }
    await route.fulfill({ status: response.status, headers: responseHeaders, body: answer });
  } catch (error) {
    await route.fulfill({ status: 502, contentType: 'text/plain; charset=utf-8', body: `harness-eval could not get this page from ${origin}: ${(error as Error).message}` });
  }
}

function forwardable(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !REQUEST_HEADERS_NOT_FORWARDED.includes(name)));
}

function bodyOf(request: PlaywrightRequest): Uint8Array<ArrayBuffer> | undefined {
  const method = request.method();
  const buffer = method === 'GET' || method === 'HEAD' ? null : request.postDataBuffer();
  return buffer ? new Uint8Array(buffer) : undefined;
}

/** Where a redirect answer sends the browser (absolute), or undefined when `response` is none. */
function redirectOf(response: Response, url: string): string | undefined {
  const location = response.headers.get('location');
  return response.status >= 300 && response.status < 400 && location !== null ? new URL(location, url).href : undefined;
}
