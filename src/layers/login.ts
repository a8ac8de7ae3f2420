import type { Page } from '@playwright/test';
import { z } from 'zod';
import type { RunContext } from '../harness/context.ts';
import { defineLayer } from '../harness/layer.ts';
import { postLoginForm } from '../http.ts';
import { HN_ORIGIN } from '../sites/hn/options.ts';
import { defineTool, type Tool } from '../tools/registry.ts';

export const loginOptions = z
  .object({
    maxLogins: z.number().int().min(1).default(3),
    /** The site the credentials are for: a login form anywhere else is never answered. */
    origin: z.url({ protocol: /^https?$/ }).default(HN_ORIGIN),
  })
  .strict();

/** The harness's own tool: hidden from the model, called only by this layer. */
export const SIGN_IN = 'sign_in';

/** HN pages that only show things: where a sign-in may send the browser. */
const READ_ONLY_PAGES = new Set(['/', '/news', '/newest', '/front', '/best', '/ask', '/show', '/jobs', '/item', '/user', '/from', '/submitted', '/threads']);

/**
 * A handler for a known failure state: when the browser lands on the site's login form (`/login`,
 * or the login wall an action such as `/vote`, `/hide` or `/fave` answers), the harness logs in with the run's credentials and tells
 * the model it may continue.
 *
 * The sign-in is a tool call of the harness's own (`sign_in`, hidden from the model, marked `by:
 * harness` in the trace), so it meets the same permission and approval checks as the model's calls.
 * It only signs in: HN's login completes the action waiting in the form's `goto` (a vote), so the
 * harness sends a page that reads instead (the story of a pending vote, else the front page), and
 * the model does the action itself, as it chose to.
 *
 * It submits the form from the harness's own HTTP client, then hands the session cookie to the
 * browser: the password never enters the page, so it cannot reach a DOM snapshot, a screenshot or
 * Playwright's trace (which records what `fill` types and every request body), nor the conversation.
 */
export const login = defineLayer({
  name: 'login',
  options: loginOptions,
  create({ maxLogins, origin }) {
    const site = new URL(origin).origin;
    let signedIn = false;
    return {
      tools(run, offered) {
        const signIn = defineTool({
          name: SIGN_IN,
          effect: 'act',
          hidden: true,
          description: "The harness signs in with the run's credentials, from the login form on the page, and opens a page that only reads.",
          parameters: z.object({}),
          output: z.object({ signedIn: z.boolean(), url: z.string() }),
          async execute() {
            signedIn = await signInFrom(run, site);
            return { signedIn, url: run.page.url() };
          },
        });
        return [...offered, signIn] satisfies Tool[];
      },
      async afterTools(run) {
        const logins = run.trace.of('harness_auto_login').filter((event) => event.attempt === run.attempt).length;
        const page = run.page;
        const url = new URL(page.url());
        // HN answers the login page in place wherever an action needs a session (/vote, /hide, /fave, /reply): the form is what counts.
        if (url.origin !== site) return;
        if (logins >= maxLogins) return;
        if (!(await loginForm(page, site))) return;
        if (!run.credentials) {
          run.tell('login', 'The browser is on a login page and the harness has no credentials for this site.');
          return;
        }
        const from = page.url();
        signedIn = false;
        const outcome = await run.callTool({ id: `login-${run.attempt}.${logins + 1}`, name: SIGN_IN, arguments: '{}' }, { by: 'harness' });
        const ok = outcome.ok && signedIn;
        run.record({ type: 'harness_auto_login', ok, from, to: page.url() });
        run.tell(
          'login',
          ok
            ? `The browser reached a login page, so the harness logged in as the configured user. You are now logged in and may continue the task. The browser is on ${page.url()}; the action that led to the login page was not carried out.`
            : outcome.ok
              ? 'The browser reached a login page; the harness tried to log in, but the site refused the credentials.'
              : `The browser reached a login page; the harness could not log in: ${outcome.error}`,
        );
      },
    };
  },
});

interface LoginForm {
  /** The form's absolute action URL. */
  action: string;
  /** Its fields as the page would send them (the hidden `goto`), without the account's. */
  fields: Array<[string, string]>;
}

/** The site's login form on the page (a wrong password answers it again), read in one round trip; none that posts elsewhere. */
async function loginForm(page: Page, site: string): Promise<LoginForm | undefined> {
  const form = await page.evaluate(() => {
    const element = document.querySelector<HTMLFormElement>('form:has(input[name="acct"])');
    if (!element) return undefined;
    const fields = [...new FormData(element)].filter(([name]) => name !== 'acct' && name !== 'pw').map(([name, value]) => [name, String(value)] as [string, string]);
    return { action: element.action, fields };
  });
  return form && URL.canParse(form.action) && new URL(form.action).origin === site ? form : undefined;
}

/** Signs in from the page's login form; true when the site set a session. The browser then opens a page that reads. */
async function signInFrom(run: RunContext, site: string): Promise<boolean> {
  const form = await loginForm(run.page, site);
  if (!form || !run.credentials) return false;
  const { username, password } = run.credentials;
  const goto = readOnlyGoto(form.fields.find(([name]) => name === 'goto')?.[1]);
  const fields = [...form.fields.filter(([name]) => name !== 'goto'), ['goto', goto]];
  const context = run.page.context();
  const cookies = await context.cookies(form.action);
  const { cookies: session } = await postLoginForm(
    (request) => run.siteFetch(request),
    form.action,
    [...fields, ['acct', username], ['pw', password]],
    cookies.map((cookie) => `${cookie.name}=${cookie.value}`).join('; '),
  );
  if (session.length === 0) return false;
  await context.addCookies(session.map(([name, value]) => ({ name, value, url: form.action })));
  // The page we chose, not the site's redirect: whatever the site answers, the browser only reads.
  await run.page.goto(new URL(goto, `${site}/`).href);
  return true;
}

/** The form's `goto` made harmless: a pending vote becomes its story's page; any other action, the front page. */
export function readOnlyGoto(goto: string | undefined): string {
  const target = new URL(goto ?? 'news', 'https://site.invalid/');
  const id = target.searchParams.get('id');
  if (target.pathname === '/vote' && id && /^\d+$/.test(id)) return `item?id=${id}`;
  return READ_ONLY_PAGES.has(target.pathname) && !target.searchParams.has('goto') ? `${target.pathname.slice(1)}${target.search}` : 'news';
}
