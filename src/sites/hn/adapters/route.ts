import type { BrowserContext, Page, Request as PlaywrightRequest, Route } from '@playwright/test';
import { HN_ORIGIN } from '../options.ts';
import { REQUEST_HEADERS_NOT_FORWARDED, RESPONSE_HEADERS_NOT_FORWARDED, withSetCookies } from '../../../http.ts';
import type { HnReplica } from '../replica.ts';

/** A site as one function: a request in, its response out, redirects answered, not followed. */
export type SiteHandler = (request: Request) => Promise<Response>;

/** Whether the page that asked for a response crashes instead of receiving it (a site's crash fault). */
export type CrashesPage = (response: Response) => boolean;

const MAX_REDIRECTS = 5;

/** The replica served at the real origin inside a browser context. Nothing leaves the machine. */
export async function routeReplica(target: BrowserContext | Page, replica: HnReplica, origin = HN_ORIGIN): Promise<void> {
  await routeSite(target, (request) => replica.handle(request), origin, replica.crashesPage);
}

/**
 * Serves `origin` inside a browser context from `handler`: the replica's, or for the live site a
 * polite fetch, so every request the page sends goes through Node (spaced, and mockable).
 *
 * Playwright does not intercept the request that a fulfilled redirect leads to: the browser sends
 * it to the network (microsoft/playwright#23301). So this adapter follows the site's redirects on
 * the same origin itself, as the browser would (a GET, with the cookies just set), serves the final
 * page, and for a page load puts the final URL in the address bar with `history.replaceState`. The
 * server and msw adapters answer real 302s.
 */
export async function routeSite(target: BrowserContext | Page, handler: SiteHandler, origin: string, crashes: CrashesPage = () => false): Promise<void> {
  await target.route(`${origin}/**`, async (route) => {
    try {
      await fulfill(route, handler, origin, crashes);
    } catch (error) {
      // The page sees why, as it would see a gateway's error page; nothing is left hanging.
      await route.fulfill({ status: 502, contentType: 'text/plain; charset=utf-8', body: `harness-eval could not get this page from ${origin}: ${(error as Error).message}` });
    }
  });
}

async function fulfill(route: Route, handler: SiteHandler, origin: string, crashes: CrashesPage): Promise<void> {
  const request = route.request();
  const headers = forwardable(await request.allHeaders());
  let url = request.url();
  let response = await handler(new Request(url, { method: request.method(), headers, body: bodyOf(request), redirect: 'manual' }));
  const cookies: string[] = [];
  for (let hops = 0; !crashes(response) && isRedirect(response, url, origin) && hops < MAX_REDIRECTS; hops++) {
    cookies.push(...response.headers.getSetCookie());
    void response.body?.cancel();
    url = new URL(response.headers.get('location')!, url).href;
    response = await handler(new Request(url, { headers: { ...headers, cookie: withSetCookies(headers.cookie, cookies) }, redirect: 'manual' }));
  }
  if (crashes(response)) return closePage(route);
  const responseHeaders = Object.fromEntries([...response.headers].filter(([name]) => !RESPONSE_HEADERS_NOT_FORWARDED.includes(name) && name !== 'set-cookie'));
  const allCookies = [...cookies, ...response.headers.getSetCookie()];
  if (allCookies.length > 0) responseHeaders['set-cookie'] = allCookies.join('\n');
  let body = Buffer.from(await response.arrayBuffer());
  if (url !== request.url() && request.isNavigationRequest() && /text\/html/.test(responseHeaders['content-type'] ?? '')) {
    body = Buffer.concat([Buffer.from(`<script>history.replaceState(null, '', ${JSON.stringify(url)})</script>`), body]);
  }
  await route.fulfill({ status: response.status, headers: responseHeaders, body });
}

/**
 * The page that sent the route's request dies before its answer comes: it is closed, as a tab
 * whose renderer died is gone. Its context, cookies and the worker's shared browser stay. (CDP's
 * `Page.crash` is the truer crash, but Chromium does not carry it out while the page waits on an
 * intercepted request; a real crash is still noticed: the harness watches for `crash` too.)
 */
async function closePage(route: Route): Promise<void> {
  await route.request().frame().page().close();
}

function forwardable(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !REQUEST_HEADERS_NOT_FORWARDED.includes(name)));
}

function bodyOf(request: PlaywrightRequest): Uint8Array<ArrayBuffer> | undefined {
  const method = request.method();
  const buffer = method === 'GET' || method === 'HEAD' ? null : request.postDataBuffer();
  return buffer ? new Uint8Array(buffer) : undefined;
}

/** A redirect this adapter follows: one that stays on the site (the browser follows any other itself). */
function isRedirect(response: Response, url: string, origin: string): boolean {
  const location = response.headers.get('location');
  return response.status >= 300 && response.status < 400 && location !== null && new URL(location, url).origin === origin;
}
