import type { BrowserContext } from '@playwright/test';
import { postLoginForm } from '../../http.ts';
import type { Site } from '../../core/site.ts';

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
