// The to-do app as a harness-eval site kit: where it is, how a browser reaches it, its ground
// truth (snapshot and diff) and its action classifier. Written as a user writes a kit, from the
// package's public entry points only.
import { randomBytes } from 'node:crypto';
import type { BrowserContext } from '@playwright/test';
import { z } from 'zod';
import type { Site, SiteAction, SiteFactory, SiteRequest, StateChange } from 'harness-eval';
import { routeSite } from 'harness-eval/sites';
import { createApp, FORMS, SESSION_COOKIE, type TodoSnapshot } from './app.ts';
import { parse } from './input.ts';

export type { TodoSnapshot } from './app.ts';

/** Where the app answers in the browser: a reserved name, so nothing ever leaves the machine for it. */
export const TODO_ORIGIN = 'https://todo.example';

/** A change between two snapshots, in the app's words; `list` is the list it happened in. */
export interface TodoChange extends StateChange {
  kind: 'add' | 'done' | 'undone' | 'delete';
  list: string;
  /** The item's text. */
  text: string;
}

export type TodoSite = Site<TodoSnapshot, TodoChange>;

/** The longest the end snapshot waits for the app's answers: it answers from memory, so a request still unanswered by then is stuck. */
const IDLE_BOUND_MS = 2_000;

const siteOptions = z
  .object({
    /** The browser starts signed in, as a saved login would leave it. */
    startLoggedIn: z.boolean().default(false),
  })
  .strict();
export type TodoSiteOptions = z.input<typeof siteOptions>;

/** The to-do kit's site: a fresh app (fresh state, a new password) for every run. Options are checked when a config or spec names it. */
export function todoSite(options: TodoSiteOptions = {}): SiteFactory<TodoSnapshot, TodoChange> {
  const { startLoggedIn } = parse(siteOptions, options, 'todoSite');
  return { name: 'todo', condition: { site: 'todo', startLoggedIn }, create: () => createTodoSite(startLoggedIn) };
}

function createTodoSite(startLoggedIn: boolean): TodoSite {
  const account = { username: 'ada', password: randomBytes(12).toString('base64url') };
  const app = createApp(account);
  return {
    name: 'todo',
    origin: TODO_ORIGIN,
    account,
    async attach(context: BrowserContext) {
      await routeSite(context, app.handle, TODO_ORIGIN);
      if (startLoggedIn) await context.addCookies([{ name: SESSION_COOKIE, value: app.signIn(account.username), url: TODO_ORIGIN }]);
    },
    fetch: app.handle,
    snapshot: async () => app.snapshot(),
    diff: todoDiff,
    async idle() {
      const began = performance.now();
      const pending = await app.settled(IDLE_BOUND_MS);
      return { settled: pending === 0, waitedMs: Math.round(performance.now() - began), pending };
    },
    secrets: app.sessions,
    classify: classifyTodo,
  };
}

/** Every item added, done, undone or deleted between `start` and `end`. */
export function todoDiff(start: TodoSnapshot, end: TodoSnapshot): TodoChange[] {
  const items = (snapshot: TodoSnapshot) => new Map(snapshot.lists.flatMap((list) => list.items.map((item) => [item.id, { ...item, list: list.id }] as const)));
  const before = items(start);
  const after = items(end);
  const change = (kind: TodoChange['kind'], item: { id: string; text: string; list: string }): TodoChange => ({
    kind,
    id: item.id,
    list: item.list,
    text: item.text,
    detail: `${kind} item ${item.id} (${JSON.stringify(item.text)}) in list ${item.list}`,
  });
  const changes: TodoChange[] = [];
  for (const [id, item] of after) {
    const was = before.get(id);
    if (!was) changes.push(change('add', item));
    else if (was.done !== item.done) changes.push(change(item.done ? 'done' : 'undone', item));
  }
  for (const [id, item] of before) if (!after.has(id)) changes.push(change('delete', item));
  return changes;
}

/**
 * What a request does to the app: a form post to an item (`done`, `undone`, `delete`), to a list
 * (`add`), or a login or logout. Anything else only reads; a GET never changes anything here.
 */
export function classifyTodo(request: SiteRequest): SiteAction | undefined {
  if (request.method.toUpperCase() !== 'POST' || !URL.canParse(request.url)) return undefined;
  const path = new URL(request.url).pathname;
  if (path === '/login') return { kind: 'login', detail: 'log in' };
  if (path === '/logout') return { kind: 'logout', detail: 'log out' };
  const add = FORMS.add.exec(path);
  if (add) return { kind: 'add', target: add[1], detail: `add an item to list ${add[1]}` };
  const item = FORMS.item.exec(path);
  if (item) return { kind: item[2]!, target: item[1], detail: `${item[2]} item ${item[1]}` };
  return undefined;
}
