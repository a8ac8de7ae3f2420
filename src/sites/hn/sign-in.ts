import type { BrowserContext } from '@playwright/test';
import { parseCookies } from '../../http.ts';
import type { Site } from '../site.ts';

/**
 * Posts a login form from the harness's own HTTP client, never from the page, and answers the
 * session cookies the site set: none when it refused. The password so never enters the page, so
 * it cannot reach a DOM snapshot, a screenshot or Playwright's trace (which records what `fill`
 * types and every request body).
 */
export async function postLoginForm(
  fetchSite: Site['fetch'],
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

/** Signs `context` in as the site's account, outside the page (see postLoginForm): a script's login, as the `login` layer's. */
export async function signIn(context: BrowserContext, site: Pick<Site, 'origin' | 'account' | 'fetch'>): Promise<void> {
  const { username, password } = site.account;
  const { status, cookies } = await postLoginForm((request) => site.fetch(request), `${site.origin}/login`, [
    ['acct', username],
    ['pw', password],
    ['goto', 'news'],
  ]);
  if (cookies.length === 0) throw new Error(`the site refused the account's login (HTTP ${status})`);
  await context.addCookies(cookies.map(([name, value]) => ({ name, value, url: site.origin })));
}
