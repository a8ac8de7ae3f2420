import type { BrowserContext, Page, Request as PlaywrightRequest, Route } from '@playwright/test';
import { HN_ORIGIN } from '../options.ts';
import { cookieHeaderPairs, parseCookies } from '../cookies.ts';
import type { HnReplica } from '../replica.ts';

const MAX_REDIRECTS = 5;

/**
 * Serves the replica at the real origin inside a browser context, so a task's URLs are the same
 * against the replica and the live site. Nothing leaves the machine.
 *
 * Playwright does not intercept the request that a fulfilled redirect leads to: the browser sends
 * it to the network (microsoft/playwright#23301). So this adapter follows the replica's redirects
 * itself, as the browser would (a GET, with the cookies just set), serves the final page, and for
 * a page load puts the final URL in the address bar with `history.replaceState`. The server and
 * msw adapters answer real 302s.
 */
export async function routeReplica(target: BrowserContext | Page, replica: HnReplica, origin = HN_ORIGIN): Promise<void> {
  await target.route(`${origin}/**`, (route) => fulfill(route, replica));
}

async function fulfill(route: Route, replica: HnReplica): Promise<void> {
  const request = route.request();
  const method = request.method();
  const headers = await request.allHeaders();
  let url = request.url();
  let response = await replica.handle(new Request(url, { method, headers, body: bodyOf(request) }));
  const cookies: string[] = [];
  for (let hops = 0; isRedirect(response) && hops < MAX_REDIRECTS; hops++) {
    const setCookie = response.headers.get('set-cookie');
    if (setCookie) cookies.push(setCookie);
    url = new URL(response.headers.get('location')!, url).href;
    response = await replica.handle(new Request(url, { headers: { ...headers, cookie: withCookies(headers.cookie, cookies) } }));
  }
  const responseHeaders = Object.fromEntries(response.headers);
  const allCookies = [...cookies, ...(response.headers.get('set-cookie') ? [response.headers.get('set-cookie')!] : [])];
  if (allCookies.length > 0) responseHeaders['set-cookie'] = allCookies.join('\n');
  let body = Buffer.from(await response.arrayBuffer());
  if (url !== request.url() && request.isNavigationRequest() && /text\/html/.test(responseHeaders['content-type'] ?? '')) {
    body = Buffer.concat([Buffer.from(`<script>history.replaceState(null, '', ${JSON.stringify(url)})</script>`), body]);
  }
  await route.fulfill({ status: response.status, headers: responseHeaders, body });
}

function bodyOf(request: PlaywrightRequest): Uint8Array<ArrayBuffer> | undefined {
  const method = request.method();
  const buffer = method === 'GET' || method === 'HEAD' ? null : request.postDataBuffer();
  return buffer ? new Uint8Array(buffer) : undefined;
}

function isRedirect(response: Response): boolean {
  return response.status >= 300 && response.status < 400 && response.headers.has('location');
}

/** The request's cookie header with the cookies the redirect chain has set (name=value parts). */
function withCookies(header: string | undefined, setCookies: readonly string[]): string {
  const jar = parseCookies([...cookieHeaderPairs(header), ...setCookies.map((setCookie) => setCookie.split(';')[0]!)]);
  return [...jar].filter(([, value]) => value !== '').map(([name, value]) => `${name}=${value}`).join('; ');
}
