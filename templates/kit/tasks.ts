// Your tasks: a prompt, the postconditions the oracle judges it by, and a reference solution that
// proves the task can be done (the controls run it).
import type { Page } from '@playwright/test';
import { defineTask, type Site } from 'harness-eval';
import { nothingElseTouched, recordAdded, recordRemoved } from 'harness-eval/sites';
import { notes, ORIGIN, type AppChange, type AppState, type Note } from './site.ts';

/** Signs the page in as the site's account from outside the page: no password is typed into it. */
export async function signIn(page: Page, site: Site): Promise<void> {
  const { username, password } = site.account;
  const response = await site.fetch(
    new Request(`${site.origin}/login`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ username, password }), redirect: 'manual' }),
  );
  const [name, value] = (response.headers.getSetCookie()[0] ?? '').split(';')[0]!.split('=');
  if (!name || !value) throw new Error(`the app refused the account's login (HTTP ${response.status})`);
  await page.context().addCookies([{ name, value, url: site.origin }]);
}

const added = recordAdded<AppState, Note, AppChange>(notes, { matching: { text: 'Water the plants' }, kinds: ['add'] });

export const addNote = defineTask({
  name: 'add-note',
  tags: ['form', 'needs-login'],
  prompt: `On the notes app at ${ORIGIN}, add a note "Water the plants".`,
  postconditions: [added, nothingElseTouched([added])],
  async reference(page, site) {
    await signIn(page, site);
    await page.goto(`${site.origin}/notes`);
    await page.locator('#add input[name="text"]').fill('Water the plants');
    await Promise.all([page.waitForEvent('load'), page.locator('#add button').click()]);
  },
});

const removed = recordRemoved<AppState, Note, AppChange>(notes, { pick: { text: 'Call the plumber' }, what: 'the note "Call the plumber"', kinds: ['delete'] });

export const deleteNote = defineTask({
  name: 'delete-note',
  tags: ['form', 'needs-login'],
  prompt: `On the notes app at ${ORIGIN}, delete the note "Call the plumber".`,
  postconditions: [removed, nothingElseTouched([removed])],
  async reference(page, site) {
    await signIn(page, site);
    await page.goto(`${site.origin}/notes`);
    await Promise.all([page.waitForEvent('load'), page.locator('#notes li', { hasText: 'Call the plumber' }).getByRole('button', { name: 'Delete' }).click()]);
  },
});

export const tasks = [addNote, deleteNote];
