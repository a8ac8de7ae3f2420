import { z } from 'zod';
import type { LoginWall } from '../core/site.ts';
import type { RunView } from '../harness/context.ts';
import { defineLayer } from '../harness/layer.ts';
import { defineTool, type Tool } from '../tools/registry.ts';

export const loginOptions = z.object({ maxLogins: z.number().int().min(1).default(3) }).strict();

/** The harness's own tool: hidden from the model, called only by this layer. */
export const SIGN_IN = 'sign_in';

/**
 * A handler for a known failure state: when the browser lands on the site's login wall (as the
 * site kit knows it: its login page, or the wall an action needing a session answers), the harness
 * signs in with the run's credentials and tells the model it may continue.
 *
 * The sign-in is a tool call of the harness's own (`sign_in`, hidden from the model, marked `by:
 * harness` in the trace), so it meets the same permission and approval checks as the model's calls.
 * It only signs in: the kit sends the browser to a page that reads, not to the action the wall held
 * back, and the model does the action itself, as it chose to.
 *
 * The kit signs in from the harness's own HTTP client and hands the session cookie to the browser:
 * the password never enters the page, so it cannot reach a DOM snapshot, a screenshot or
 * Playwright's trace (which records what `fill` types and every request body), nor the conversation.
 */
export const login = defineLayer({
  name: 'login',
  options: loginOptions,
  create({ maxLogins }) {
    let signedIn = false;
    // The wall afterTools just read, for the sign-in it calls at once: read again only if the call runs later (held for approval).
    let seen: LoginWall | undefined;
    return {
      tools(run, offered) {
        const signIn = defineTool({
          name: SIGN_IN,
          effect: 'act',
          hidden: true,
          description: "The harness signs in with the run's credentials, from the login wall on the page, and opens a page that only reads.",
          parameters: z.object({}),
          output: z.object({ signedIn: z.boolean(), url: z.string() }),
          async execute() {
            signedIn = await signInFrom(run, seen);
            return { signedIn, url: run.page.url() };
          },
        });
        return [...offered, signIn] satisfies Tool[];
      },
      async afterTools(run) {
        // A claim ends the attempt: no next step would use the session.
        if (run.claim) return;
        const logins = run.trace.of('harness_auto_login').filter((event) => event.attempt === run.attempt).length;
        if (logins >= maxLogins) return;
        const wall = await run.site?.loginWall?.(run.page);
        if (!wall) return;
        if (!run.credentials || !run.site?.signIn) {
          run.tell('login', 'The browser is on a login page and the harness has no credentials for this site.');
          return;
        }
        const from = run.page.url();
        signedIn = false;
        seen = wall;
        const outcome = await run.callTool({ id: `login-${run.attempt}.${logins + 1}`, name: SIGN_IN, arguments: '{}' }, { by: 'harness' }).finally(() => (seen = undefined));
        const ok = outcome.ok && signedIn;
        run.record({ type: 'harness_auto_login', ok, from, to: run.page.url() });
        run.tell(
          'login',
          ok
            ? `The browser reached a login page, so the harness logged in as the configured user. You are now logged in and may continue the task. The browser is on ${run.page.url()}; the action that led to the login page was not carried out.`
            : outcome.ok
              ? 'The browser reached a login page; the harness tried to log in, but the site refused the credentials.'
              : `The browser reached a login page; the harness could not log in: ${outcome.error}`,
        );
      },
    };
  },
});

/** Signs in through the site kit from the page's login wall; true when the site set a session. The browser then opens the page the kit names, one that reads. */
async function signInFrom(run: RunView, seen: LoginWall | undefined): Promise<boolean> {
  const wall = seen ?? (await run.site?.loginWall?.(run.page));
  if (!wall || !run.credentials || !run.site?.signIn) return false;
  const { signedIn, next } = await run.site.signIn(run.page.context(), run.credentials, wall);
  // The page the kit chose, not the site's redirect: whatever the site answers, the browser only reads.
  if (signedIn) await run.page.goto(next);
  return signedIn;
}
