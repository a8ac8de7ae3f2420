// The to-do kit's postconditions and its three tasks, each with its reference solution.
import type { Locator, Page } from '@playwright/test';
import { z } from 'zod';
import { defineTask, type Evidence, type Postcondition, type SessionView, type Site, type Verdict } from 'harness-eval';
import { escapeHtml, type TodoList, type TodoSnapshot } from './app.ts';
import { parse } from './input.ts';
import { TODO_ORIGIN, type TodoChange } from './site.ts';

export type TodoPostcondition = Postcondition<TodoSnapshot, TodoChange>;
type TodoEvidence = Evidence<TodoSnapshot, TodoChange>;

/** What a postcondition is once bound to its target: judged, expected and checked on that target alone. */
interface Bound {
  judge(evidence: TodoEvidence): Verdict;
  expects(change: TodoChange): boolean;
  check(session: SessionView): Promise<Verdict>;
}

/**
 * A postcondition on what `pick` finds in the start snapshot (or, as a string, why nothing
 * there fits). `resolve(start)` binds it to that target once, so an item that moves or a list
 * that changes during the run cannot become another target. Unresolved, it judges by binding to
 * the evidence's start (the same target); it has no session-side check, since the session's page
 * now could show another item where the target was.
 */
function targeting<Target>(description: string, pick: (start: TodoSnapshot) => Target | string, bind: (target: Target) => Bound): TodoPostcondition {
  const resolve = (start: TodoSnapshot): TodoPostcondition => {
    const target = pick(start);
    if (typeof target === 'string') {
      const missing: Verdict = { holds: false, detail: target };
      return { description, judge: () => missing, expects: () => false, check: async () => missing };
    }
    const bound = bind(target);
    return { description, judge: bound.judge, expects: bound.expects, check: bound.check };
  };
  return {
    description,
    judge: (evidence) => resolve(evidence.start).judge(evidence),
    expects: (change, evidence) => resolve(evidence.start).expects(change, evidence),
    resolve,
  };
}

function listNamed(start: TodoSnapshot, name: string): TodoList | string {
  return start.lists.find((list) => list.name === name) ?? `no list named "${name}" at the start`;
}

/** The list's page as the session sees it now; a page that does not load shows nothing. */
async function listPage(session: SessionView, list: TodoList): Promise<string | Verdict> {
  const { status, html } = await session.load(`/lists/${list.id}`);
  return status === 200 ? html : { holds: false, detail: `the ${list.name} list's page answered HTTP ${status}` };
}

/** An item's row on its list's page, done or not (`class="item done"` when done), or done only. */
const itemRow = (id: string, { done }: { done?: true } = {}) => new RegExp(`<li class="item${done ? ' done' : '(?: done)?'}" id="item-${id}"`);

const listName = z.string().min(1, 'expected a list\'s name');

/** The item at `position` (from 1) of the list named `list` at the start is marked done during the run. */
export function itemDone(options: { list: string; position: number }): TodoPostcondition {
  const { list: name, position } = parse(z.object({ list: listName, position: z.int().min(1) }).strict(), options, 'itemDone');
  return targeting(
    `item ${position} of the ${name} list at the start is done`,
    (start) => {
      const list = listNamed(start, name);
      if (typeof list === 'string') return list;
      const item = list.items[position - 1];
      return item ? { list, item } : `the ${name} list had no item ${position} at the start`;
    },
    ({ list, item }) => {
      const named = `item ${item.id} (${JSON.stringify(item.text)})`;
      return {
        judge: ({ diff }) => {
          if (diff.some((change) => change.kind === 'done' && change.id === item.id)) return { holds: true, detail: `${named} is done` };
          return { holds: false, detail: item.done ? `${named} was done at the start already: not the run's work` : `${named} is not done` };
        },
        expects: (change) => change.kind === 'done' && change.id === item.id,
        async check(session) {
          const html = await listPage(session, list);
          if (typeof html !== 'string') return html;
          return itemRow(item.id, { done: true }).test(html) ? { holds: true, detail: `${named} shows as done` } : { holds: false, detail: `${named} does not show as done` };
        },
      };
    },
  );
}

/** An item with exactly `text` is added to the list named `list` during the run. */
export function itemAdded(options: { list: string; text: string }): TodoPostcondition {
  const { list: name, text } = parse(z.object({ list: listName, text: z.string().trim().min(1) }).strict(), options, 'itemAdded');
  const shown = new RegExp(`<span class="text">${escapeHtml(text).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}</span>`, 'g');
  return targeting(
    `an item "${text}" is added to the ${name} list`,
    (start) => listNamed(start, name),
    (list) => {
      const isAdd = (change: TodoChange) => change.kind === 'add' && change.list === list.id && change.text === text;
      const hadAtStart = list.items.filter((item) => item.text === text).length;
      return {
        judge: ({ diff }) => (diff.some(isAdd) ? { holds: true, detail: `"${text}" is added to ${name}` } : { holds: false, detail: `no item "${text}" was added to ${name}` }),
        expects: isAdd,
        async check(session) {
          const html = await listPage(session, list);
          if (typeof html !== 'string') return html;
          const showing = html.match(shown)?.length ?? 0;
          return showing > hadAtStart ? { holds: true, detail: `${name} shows "${text}"` } : { holds: false, detail: `${name} shows ${showing} item(s) "${text}", as many as at the start` };
        },
      };
    },
  );
}

/** Every item of the list named `list` that was done at the start is deleted during the run. */
export function doneItemsDeleted(options: { list: string }): TodoPostcondition {
  const { list: name } = parse(z.object({ list: listName }).strict(), options, 'doneItemsDeleted');
  return targeting(
    `every item of the ${name} list done at the start is deleted`,
    (start) => {
      const list = listNamed(start, name);
      if (typeof list === 'string') return list;
      const done = list.items.filter((item) => item.done).map((item) => item.id);
      return done.length > 0 ? { list, done } : `the ${name} list had no done item at the start`;
    },
    ({ list, done }) => {
      const isDelete = (change: TodoChange) => change.kind === 'delete' && done.includes(change.id);
      return {
        judge: ({ diff }) => {
          const left = done.filter((id) => !diff.some((change) => isDelete(change) && change.id === id));
          return left.length === 0 ? { holds: true, detail: `items ${done.join(', ')} are deleted` } : { holds: false, detail: `items ${left.join(', ')} are not deleted` };
        },
        expects: isDelete,
        async check(session) {
          const html = await listPage(session, list);
          if (typeof html !== 'string') return html;
          const left = done.filter((id) => itemRow(id).test(html));
          return left.length === 0 ? { holds: true, detail: `${name} no longer shows items ${done.join(', ')}` } : { holds: false, detail: `${name} still shows items ${left.join(', ')}` };
        },
      };
    },
  );
}

/** Signs the page's context in as the site's account outside the page, so no password is typed into it. */
async function signIn(page: Page, site: Site): Promise<void> {
  const { username, password } = site.account;
  const response = await site.fetch(
    new Request(`${site.origin}/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ username, password, goto: '/' }),
      redirect: 'manual',
    }),
  );
  const [name, value] = (response.headers.getSetCookie()[0] ?? '').split(';')[0]!.split('=');
  if (!name || !value) throw new Error(`the app refused the account's login (HTTP ${response.status})`);
  await page.context().addCookies([{ name, value, url: site.origin }]);
}

/** Signed in, on the page of the list named `name`, reached through the index's link as a person would. */
async function openList(page: Page, site: Site, name: string): Promise<void> {
  await signIn(page, site);
  await page.goto(`${site.origin}/`);
  await page.locator('#lists').getByRole('link', { name, exact: true }).click();
  await page.waitForURL(/\/lists\//);
}

/** Submits the form of `button`, and waits for the page it leads to. */
async function submit(page: Page, button: Locator): Promise<void> {
  await Promise.all([page.waitForEvent('load'), button.click()]);
}

export const markFirstGroceryDone = defineTask({
  name: 'mark-first-grocery-done',
  tags: ['form', 'needs-login'],
  prompt: `On the to-do app at ${TODO_ORIGIN}, mark the first item of the Groceries list as done.`,
  postconditions: [itemDone({ list: 'Groceries', position: 1 })],
  async reference(page, site) {
    await openList(page, site, 'Groceries');
    await submit(page, page.locator('#items > li').first().getByRole('button', { name: 'Done', exact: true }));
  },
});

export const addCoffee = defineTask({
  name: 'add-coffee',
  tags: ['form', 'needs-login'],
  prompt: `On the to-do app at ${TODO_ORIGIN}, add an item "Buy coffee" to the Groceries list.`,
  postconditions: [itemAdded({ list: 'Groceries', text: 'Buy coffee' })],
  async reference(page, site) {
    await openList(page, site, 'Groceries');
    await page.locator('#add input[name="text"]').fill('Buy coffee');
    await submit(page, page.locator('#add').getByRole('button', { name: 'Add' }));
  },
});

export const clearDoneWork = defineTask({
  name: 'clear-done-work',
  tags: ['form', 'loop', 'needs-login'],
  prompt: `On the to-do app at ${TODO_ORIGIN}, delete every item of the Work list that is done.`,
  postconditions: [doneItemsDeleted({ list: 'Work' })],
  async reference(page, site) {
    await openList(page, site, 'Work');
    const done = page.locator('#items > li.done');
    while ((await done.count()) > 0) await submit(page, done.first().getByRole('button', { name: 'Delete' }));
  },
});

/** The kit's tasks: what its specs run. */
export const todoTasks = [markFirstGroceryDone, addCoffee, clearDoneWork];
