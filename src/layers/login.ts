import type { Page } from '@playwright/test';
import { z } from 'zod';
import type { Layer } from '../harness/layer.ts';
import { parseInput } from '../input.ts';

export const loginOptions = z.object({ maxLogins: z.number().int().min(1).default(3) }).strict();

/**
 * A handler for a known failure state: when the browser lands on HN's login form (`/login`, or
 * the login wall a `/vote` answers), the harness logs in with the run's credentials and tells
 * the model it may continue. The credentials go into the form only, never into the conversation.
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
      if (logins >= maxLogins || !(await hasLoginForm(page))) return;
      const form = page.locator('form:has(input[name="acct"])').first();
      if (!run.credentials) {
        run.tell('login', 'The browser is on a login page and the harness has no credentials for this site.');
        return;
      }
      const from = page.url();
      await form.locator('input[name="acct"]').fill(run.credentials.username);
      await form.locator('input[name="pw"]').fill(run.credentials.password);
      await Promise.all([page.waitForEvent('load'), form.locator('input[type="submit"]').click()]);
      const ok = !(await hasLoginForm(page));
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

/** One round trip: is HN's login form on the page (a wrong password answers it again)? */
function hasLoginForm(page: Page): Promise<boolean> {
  return page.evaluate(() => document.querySelector('form input[name="acct"]') !== null);
}
