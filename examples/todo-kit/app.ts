// The to-do app: lists of items, each done or not, changed through HTML forms by a signed-in
// user. Plain HTTP semantics: forms POST and answer 303 to the page to show next, a GET to a form's
// action is 405, anything unknown is 404. One account; sessions are cookies it issues.
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { problems } from './input.ts';

export interface TodoItem {
  id: string;
  text: string;
  done: boolean;
}

export interface TodoList {
  id: string;
  name: string;
  items: TodoItem[];
}

/** The whole state a run can change, as the oracle reads it (sessions are not the task's work). */
export interface TodoSnapshot {
  lists: TodoList[];
}

/** The lists a fresh app starts with: ids are fixed, so a task's target is the same item on every run. */
export function startingLists(): TodoList[] {
  let id = 0;
  const items = (...entries: Array<[text: string, done: boolean]>) => entries.map(([text, done]) => ({ id: String(++id), text, done }));
  return [
    { id: '1', name: 'Groceries', items: items(['Milk', false], ['Eggs', true], ['Bread', false]) },
    { id: '2', name: 'Work', items: items(['Write report', true], ['Review pull request', false], ['Book meeting room', true]) },
  ];
}

/** The session cookie's name. */
export const SESSION_COOKIE = 'session';

/** The paths of the forms that change a list (`/lists/1/items`) or an item (`/items/4/done`), shared with the classifier. */
export const FORMS = { add: /^\/lists\/([^/]+)\/items$/, item: /^\/items\/([^/]+)\/(done|undone|delete)$/ };

/** Longer item texts are refused: a form field, not a document. */
const MAX_TEXT = 200;

const addForm = z.object({ text: z.string().trim().min(1, 'empty').max(MAX_TEXT, `longer than ${MAX_TEXT} characters`) });
const loginForm = z.object({ username: z.string(), password: z.string(), goto: z.string().optional() });

export interface TodoApp {
  handle(request: Request): Promise<Response>;
  snapshot(): TodoSnapshot;
  /** A session for `username`, as a login would give it: the cookie's value. */
  signIn(username: string): string;
  /** Every session token issued so far, ended ones too: secrets, never to reach a trace. */
  sessions(): string[];
  /** Waits for the requests being answered now, at most `boundMs`; how many are still unanswered. */
  settled(boundMs: number): Promise<number>;
}

export function createApp(account: { username: string; password: string }): TodoApp {
  const lists = startingLists();
  let lastId = Math.max(...lists.flatMap((list) => list.items.map((item) => Number(item.id))));
  const sessions = new Map<string, string>();
  const issued: string[] = [];
  const inFlight = new Set<Promise<Response>>();

  const signIn = (username: string) => {
    const token = randomBytes(18).toString('base64url');
    sessions.set(token, username);
    issued.push(token);
    return token;
  };
  const tokenOf = (request: Request) =>
    (request.headers.get('cookie') ?? '')
      .split(';')
      .map((pair) => pair.trim().split('='))
      .find(([name]) => name === SESSION_COOKIE)?.[1];
  const itemById = (id: string) => {
    for (const list of lists) {
      const item = list.items.find((candidate) => candidate.id === id);
      if (item) return { list, item };
    }
    return undefined;
  };

  const answer = async (request: Request): Promise<Response> => {
    const url = new URL(request.url);
    const path = url.pathname;
    const token = tokenOf(request);
    const user = token === undefined ? undefined : sessions.get(token);
    const post = request.method === 'POST';
    const form = post ? Object.fromEntries(new URLSearchParams(await request.text())) : {};

    if (path === '/') return request.method === 'GET' ? page('To-do', user, indexBody(lists)) : notAllowed('GET');
    if (path === '/login') {
      if (request.method === 'GET') return page('Log in', user, loginBody(safeGoto(url.searchParams.get('goto'))));
      if (!post) return notAllowed('GET, POST');
      const login = loginForm.safeParse(form);
      if (!login.success) return badRequest(problems(login.error));
      const goto = safeGoto(login.data.goto ?? null);
      if (login.data.username !== account.username || login.data.password !== account.password) return page('Log in', user, loginBody(goto, 'Wrong username or password.'), 401);
      return seeOther(goto, `${SESSION_COOKIE}=${signIn(account.username)}; Path=/; HttpOnly; SameSite=Lax`);
    }
    if (path === '/logout') {
      if (!post) return notAllowed('POST');
      if (token !== undefined) sessions.delete(token);
      return seeOther('/', `${SESSION_COOKIE}=; Path=/; Max-Age=0`);
    }

    const listMatch = /^\/lists\/([^/]+)$/.exec(path);
    if (listMatch) {
      const list = lists.find((candidate) => candidate.id === listMatch[1]);
      if (!list) return notFound();
      return request.method === 'GET' ? page(list.name, user, listBody(list)) : notAllowed('GET');
    }

    const addMatch = FORMS.add.exec(path);
    if (addMatch) {
      const list = lists.find((candidate) => candidate.id === addMatch[1]);
      if (!list) return notFound();
      if (!post) return notAllowed('POST');
      if (!user) return loginFirst(`/lists/${list.id}`);
      const added = addForm.safeParse(form);
      if (!added.success) return badRequest(problems(added.error));
      list.items.push({ id: String(++lastId), text: added.data.text, done: false });
      return seeOther(`/lists/${list.id}`);
    }

    const itemMatch = FORMS.item.exec(path);
    if (itemMatch) {
      const found = itemById(itemMatch[1]!);
      if (!found) return notFound();
      if (!post) return notAllowed('POST');
      const back = `/lists/${found.list.id}`;
      if (!user) return loginFirst(back);
      if (itemMatch[2] === 'delete') found.list.items.splice(found.list.items.indexOf(found.item), 1);
      else found.item.done = itemMatch[2] === 'done';
      return seeOther(back);
    }
    return notFound();
  };

  return {
    handle(request) {
      const answered = answer(request);
      inFlight.add(answered);
      void answered.finally(() => inFlight.delete(answered)).catch(() => {});
      return answered;
    },
    snapshot: () => ({ lists: structuredClone(lists) }),
    signIn,
    sessions: () => [...issued],
    async settled(boundMs) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([Promise.allSettled([...inFlight]), new Promise((resolve) => (timer = setTimeout(resolve, boundMs)))]);
      clearTimeout(timer);
      return inFlight.size;
    },
  };
}

/** Where a login or a refused action goes back to: a path of this site only, never another origin. */
function safeGoto(goto: string | null): string {
  return goto && goto.startsWith('/') && !goto.startsWith('//') ? goto : '/';
}

/** A change asked for signed out: the login page, which comes back to `back` once signed in. */
const loginFirst = (back: string) => seeOther(`/login?goto=${encodeURIComponent(back)}`);

function seeOther(location: string, setCookie?: string): Response {
  const headers = new Headers({ location });
  if (setCookie) headers.append('set-cookie', setCookie);
  return new Response(null, { status: 303, headers });
}

const text = (status: number, body: string, headers: Record<string, string> = {}) => new Response(body, { status, headers: { 'content-type': 'text/plain; charset=utf-8', ...headers } });
const notFound = () => text(404, 'Not found.');
const notAllowed = (allow: string) => text(405, 'Method not allowed.', { allow });
const badRequest = (why: string) => text(400, `Bad request: ${why}.`);

/** Text as HTML shows it. */
export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}

function page(title: string, user: string | undefined, body: string, status = 200): Response {
  const who = user
    ? `signed in as ${escapeHtml(user)} <form method="post" action="/logout"><button>Log out</button></form>`
    : '<a href="/login">Log in</a>';
  const html = `<!doctype html><html><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head><body><header><a href="/">All lists</a> · ${who}</header><main>${body}</main></body></html>`;
  return new Response(html, { status, headers: { 'content-type': 'text/html; charset=utf-8' } });
}

function indexBody(lists: TodoList[]): string {
  const rows = lists.map((list) => `<li><a href="/lists/${list.id}">${escapeHtml(list.name)}</a> (${list.items.filter((item) => item.done).length} of ${list.items.length} done)</li>`);
  return `<h1>Lists</h1><ul id="lists">${rows.join('')}</ul>`;
}

const button = (action: string, label: string) => `<form method="post" action="${action}"><button>${label}</button></form>`;

/** A list's page: each item with its state in its class (`item done`), and the forms that change it. */
function listBody(list: TodoList): string {
  const rows = list.items.map(
    (item) =>
      `<li class="item${item.done ? ' done' : ''}" id="item-${item.id}"><span class="text">${escapeHtml(item.text)}</span>` +
      button(`/items/${item.id}/${item.done ? 'undone' : 'done'}`, item.done ? 'Undo' : 'Done') +
      button(`/items/${item.id}/delete`, 'Delete') +
      '</li>',
  );
  return `<h1>${escapeHtml(list.name)}</h1><ul id="items">${rows.join('')}</ul><form id="add" method="post" action="/lists/${list.id}/items"><input name="text" aria-label="New item"><button>Add</button></form>`;
}

function loginBody(goto: string, problem?: string): string {
  return (
    `<h1>Log in</h1>${problem ? `<p class="error">${problem}</p>` : ''}` +
    `<form method="post" action="/login"><input type="hidden" name="goto" value="${escapeHtml(goto)}">` +
    '<label>Username <input name="username"></label><label>Password <input name="password" type="password"></label><button>Log in</button></form>'
  );
}
