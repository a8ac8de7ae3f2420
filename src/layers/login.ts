import type { Page } from '@playwright/test';
import { z } from 'zod';
import type { RunContext } from '../harness/context.ts';
import type { Layer } from '../harness/layer.ts';
import { parseInput } from '../input.ts';
import { parseCookies } from '../http.ts';

export const loginOptions = z.object({ maxLogins: z.number().int().min(1).default(3) }).strict();

/**
 * A handler for a known failure state: when the browser lands on HN's login form (`/login`, or
 * the login wall a `/vote` answers), the harness logs in with the run's credentials and tells
 * the model it may continue.
 *
 * It submits the page's form from the harness's own HTTP client, then hands the session cookie to
 * the browser and follows the site's redirect: the password never enters the page, so it cannot
 * reach a DOM snapshot, a screenshot or Playwright's trace (which records what `fill` types and
 * every request body). Nor does it enter the conversation.
 */
export function login(options: z.input<typeof loginOptions> = {}): Layer {
  const { maxLogins } = parseInput(loginOptions, options, 'layer login');
  return {
    name: 'login',
    async afterTools(run) {
      const logins = run.trace.of('harness_auto_login').filter((event) => event.attempt === run.attempt).length;
      const page = run.page;
      const path = new URL(page.url()).pathname;
      if (path !== '/login' && path !== '/vote') return;
      if (logins >= maxLogins) return;
      const form = await loginForm(page);
      if (!form) return;
      if (!run.credentials) {
        run.tell('login', 'The browser is on a login page and the harness has no credentials for this site.');
        return;
      }
      const from = page.url();
      const ok = await signIn(run, form);
      run.record({ type: 'harness_auto_login', ok, from, to: page.url() });
      run.tell(
        'login',
        ok
          ? 'The browser reached a login page, so the harness logged in as the configured user. You are now logged in and may continue the task.'
          : 'The browser reached a login page; the harness tried to log in, but the site refused the credentials.',
      );
    },
  };
}

interface LoginForm {
  /** The form's absolute action URL. */
  action: string;
  /** Its fields as the page would send them (the hidden `goto`), without the account's. */
  fields: Array<[string, string]>;
}

/** HN's login form on the page (a wrong password answers it again), read in one round trip. */
function loginForm(page: Page): Promise<LoginForm | undefined> {
  return page.evaluate(() => {
    const form = document.querySelector<HTMLFormElement>('form:has(input[name="acct"])');
    if (!form) return undefined;
    const fields = [...new FormData(form)].filter(([name]) => name !== 'acct' && name !== 'pw').map(([name, value]) => [name, String(value)] as [string, string]);
    return { action: form.action, fields };
  });
}

/** Posts the form as the browser would, with the browser's cookies; true when the site set a session. */
async function signIn(run: RunContext, { action, fields }: LoginForm): Promise<boolean> {
  const { username, password } = run.credentials!;
  const context = run.page.context();
  const cookies = await context.cookies(action);
  const response = await run.siteFetch(
    new Request(action, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: cookies.map((cookie) => `${cookie.name}=${cookie.value}`).join('; ') },
      body: new URLSearchParams([...fields, ['acct', username], ['pw', password]]),
      redirect: 'manual',
    }),
  );
  void response.body?.cancel();
  const location = response.headers.get('location');
  const session = [...parseCookies(response.headers.getSetCookie().map((header) => header.split(';')[0]!))].filter(([, value]) => value !== '');
  if (response.status < 300 || response.status >= 400 || !location || session.length === 0) return false;
  await context.addCookies(session.map(([name, value]) => ({ name, value, url: action })));
  await run.page.goto(new URL(location, action).href);
  return true;
}
