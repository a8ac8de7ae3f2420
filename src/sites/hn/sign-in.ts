import type { BrowserContext, Page } from '@playwright/test';
import { postLoginForm } from '../../http.ts';
import type { LoginWall, SignedIn, Site, SiteAccount } from '../../core/site.ts';

/** HN pages that only show things: where a sign-in may send the browser. */
const READ_ONLY_PAGES = new Set(['/', '/news', '/newest', '/front', '/best', '/ask', '/show', '/jobs', '/item', '/user', '/from', '/submitted', '/threads']);

/** HN's login form on `page` (`/login`, or the wall `/vote`, `/hide`, `/fave` or `/reply` answer in place without a session), read in one round trip. */
export async function hnLoginWall(page: Page, origin: string): Promise<LoginWall | undefined> {
  if (!URL.canParse(page.url()) || new URL(page.url()).origin !== origin) return undefined;
  const form = await page.evaluate(() => {
    const element = document.querySelector<HTMLFormElement>('form:has(input[name="acct"])');
    if (!element) return undefined;
    const fields = [...new FormData(element)].filter(([name]) => name !== 'acct' && name !== 'pw').map(([name, value]) => [name, String(value)] as [string, string]);
    return { action: element.action, fields };
  });
  return form && URL.canParse(form.action) && new URL(form.action).origin === origin ? form : undefined;
}

/**
 * HN's sign-in for the kit (`Site.signIn`): posts the login form from `fetchSite`, never from the
 * page, with its `goto` made harmless, and hands the session cookie to `context`.
 */
export function hnSignIn(fetchSite: Site['fetch'], origin: string) {
  return async (context: BrowserContext, { username, password }: SiteAccount, wall?: LoginWall): Promise<SignedIn> => {
    const action = wall?.action ?? `${origin}/login`;
    const given = wall?.fields ?? [];
    const next = readOnlyGoto(given.find(([name]) => name === 'goto')?.[1]);
    const fields = [...given.filter(([name]) => name !== 'goto'), ['goto', next], ['acct', username], ['pw', password]];
    const cookies = await context.cookies(action);
    const { cookies: session } = await postLoginForm(fetchSite, action, fields, cookies.map((cookie) => `${cookie.name}=${cookie.value}`).join('; '));
    if (session.length > 0) await context.addCookies(session.map(([name, value]) => ({ name, value, url: action })));
    return { signedIn: session.length > 0, next: new URL(next, `${origin}/`).href };
  };
}

/** Signs `context` in as the site's account, outside the page: a script's login, as the `login` layer's. */
export async function signIn(context: BrowserContext, site: Pick<Site, 'origin' | 'account' | 'fetch'>): Promise<void> {
  const { signedIn } = await hnSignIn((request) => site.fetch(request), site.origin)(context, site.account);
  if (!signedIn) throw new Error("the site refused the account's login");
}

/** The form's `goto` made harmless: a pending vote becomes its story's page; any other action, the front page. */
export function readOnlyGoto(goto: string | undefined): string {
  const target = new URL(goto ?? 'news', 'https://site.invalid/');
  const id = target.searchParams.get('id');
  if (target.pathname === '/vote' && id && /^\d+$/.test(id)) return `item?id=${id}`;
  return READ_ONLY_PAGES.has(target.pathname) && !target.searchParams.has('goto') ? `${target.pathname.slice(1)}${target.search}` : 'news';
}
