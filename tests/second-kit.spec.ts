import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import ts from 'typescript';
import type { Summary } from '../src/report/types.ts';
import { classifyTodo, TODO_ORIGIN, todoDiff, todoSite, type TodoSite } from '../examples/todo-kit/site.ts';
import { startingLists, type TodoSnapshot } from '../examples/todo-kit/app.ts';
import { itemAdded, itemDone, todoTasks } from '../examples/todo-kit/tasks.ts';
import { playwright, readSummary, workspace, type Child } from './playwright-child.ts';

/**
 * The second site kit (examples/todo-kit/, a to-do app): the proof that the core is generic. Its
 * site is checked here at the HTTP level; its own Playwright run (its controls, and the built-in
 * harness driven by `scripted:diligent` and `scripted:overclaimer` under the bare and verified stacks) runs as a child, as a user
 * would run it, and its report is read back.
 */
const KIT = join(import.meta.dirname, '..', 'examples', 'todo-kit');

const form = (fields: Record<string, string>) => ({ method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields) });

/** A fresh kit site: the kit makes it at once (a factory's `create()` may also answer a promise). */
const madeSite = (options: Parameters<typeof todoSite>[0] = {}) => todoSite(options).create() as TodoSite;

/** A fresh kit site, answered outside any browser, with a cookie jar of one session. */
function client(site: TodoSite = madeSite()) {
  let cookie = '';
  const send = async (path: string, init: RequestInit = {}) => {
    const response = await site.fetch(new Request(TODO_ORIGIN + path, { ...init, headers: { ...(init.headers as Record<string, string>), cookie }, redirect: 'manual' }));
    const set = response.headers.getSetCookie()[0];
    if (set) cookie = set.split(';')[0]!;
    return response;
  };
  return {
    site,
    send,
    post: (path: string, fields: Record<string, string> = {}) => send(path, form(fields)),
    signIn: () => send('/login', form({ username: site.account.username, password: site.account.password, goto: '/lists/1' })),
    /** The site as this session sees it: what `check(session)` is given. */
    session: { load: async (path: string) => { const response = await send(path); return { status: response.status, html: await response.text() }; } },
  };
}

test.describe('the to-do site over HTTP', () => {
  test('pages answer 200, unknown paths and ids 404, a GET to a form 405 with Allow', async () => {
    const { send } = client();
    expect((await send('/')).status).toBe(200);
    expect((await send('/lists/1')).status).toBe(200);
    expect((await send('/nowhere')).status).toBe(404);
    expect((await send('/lists/99')).status).toBe(404);
    expect((await send('/items/99/done', form({}))).status).toBe(404);
    const get = await send('/items/1/done');
    expect([get.status, get.headers.get('allow')]).toEqual([405, 'POST']);
  });

  test('signed out, a change is refused with a 303 to the login page, which leads back to the list; nothing changes', async () => {
    const { site, post } = client();
    const start = await site.snapshot();
    const refused = await post('/items/1/done');
    expect([refused.status, refused.headers.get('location')]).toEqual([303, '/login?goto=%2Flists%2F1']);
    expect(await site.snapshot()).toEqual(start);
  });

  test('a wrong password is a 401 and no session; the right one a 303 to goto (this site only) with a session cookie', async () => {
    const { site, post } = client();
    expect((await post('/login', { username: site.account.username, password: 'wrong', goto: '/' })).status).toBe(401);
    expect(site.secrets!()).toEqual([]);
    const offSite = await post('/login', { username: site.account.username, password: site.account.password, goto: '//evil.example/' });
    expect([offSite.status, offSite.headers.get('location')]).toEqual([303, '/']);
    expect(offSite.headers.get('set-cookie')).toMatch(/^session=[\w-]{20,}; Path=\/; HttpOnly/);
    expect(site.secrets!()).toHaveLength(1);
  });

  test('signed in, forms add, mark done and undone, delete, each with a 303 to the list; bad input is a 400 naming the field', async () => {
    const { site, post, signIn } = client();
    await signIn();
    const start = await site.snapshot();
    for (const [path, fields] of [['/lists/1/items', { text: 'Buy coffee' }], ['/items/1/done', {}], ['/items/2/undone', {}], ['/items/3/delete', {}]] as const) {
      const response = await post(path, fields);
      expect([path, response.status, response.headers.get('location')]).toEqual([path, 303, '/lists/1']);
    }
    const empty = await post('/lists/1/items', { text: '  ' });
    expect([empty.status, await empty.text()]).toEqual([400, 'Bad request: text: empty.']);
    const noPassword = await post('/login', { username: site.account.username });
    expect([noPassword.status, await noPassword.text()]).toEqual([400, 'Bad request: password: Invalid input: expected string, received undefined.']);
    expect(todoDiff(start, await site.snapshot()).map(({ kind, id, list, text }) => ({ kind, id, list, text }))).toEqual([
      { kind: 'done', id: '1', list: '1', text: 'Milk' },
      { kind: 'undone', id: '2', list: '1', text: 'Eggs' },
      { kind: 'add', id: '7', list: '1', text: 'Buy coffee' },
      { kind: 'delete', id: '3', list: '1', text: 'Bread' },
    ]);
  });

  test("logging out ends the session: a change is refused again, and the ended session's token stays a secret", async () => {
    const { site, post, signIn } = client();
    await signIn();
    const [token] = site.secrets!();
    const out = await post('/logout');
    expect([out.status, out.headers.get('location'), out.headers.get('set-cookie')]).toEqual([303, '/', 'session=; Path=/; Max-Age=0']);
    expect((await post('/items/1/done')).headers.get('location')).toBe('/login?goto=%2Flists%2F1');
    expect(site.secrets!()).toEqual([token]);
  });

  test('idle waits for the answers in flight, within its bound, and says how many are left', async () => {
    const site = madeSite();
    let body!: ReadableStreamDefaultController<Uint8Array>;
    const slow = site.fetch(new Request(`${TODO_ORIGIN}/lists/1/items`, { method: 'POST', body: new ReadableStream({ start: (controller) => void (body = controller) }), duplex: 'half' } as RequestInit));
    expect(await site.idle()).toMatchObject({ settled: false, pending: 1 });
    body.close();
    await slow;
    expect(await site.idle()).toMatchObject({ settled: true, pending: 0 });
  });

  test("the classifier names every form the app renders, with its target; reading and a GET to a form's path are no action", async () => {
    const { send, signIn } = client();
    await signIn();
    const actions = [];
    for (const path of ['/', '/lists/1', '/lists/2', '/login']) {
      const html = await (await send(path)).text();
      for (const [, action] of html.matchAll(/<form[^>]*action="([^"]+)"/g)) actions.push(classifyTodo({ method: 'POST', url: TODO_ORIGIN + action, body: '' }));
    }
    expect(actions).not.toContain(undefined);
    expect(classifyTodo({ method: 'post', url: `${TODO_ORIGIN}/items/4/delete` })).toEqual({ kind: 'delete', target: '4', detail: 'delete item 4' });
    expect(classifyTodo({ method: 'POST', url: `${TODO_ORIGIN}/lists/2/items`, body: 'text=x' })).toEqual({ kind: 'add', target: '2', detail: 'add an item to list 2' });
    expect(classifyTodo({ method: 'POST', url: `${TODO_ORIGIN}/login` })).toEqual({ kind: 'login', detail: 'log in' });
    for (const url of ['/', '/lists/1', '/items/1/delete']) expect(classifyTodo({ method: 'GET', url: TODO_ORIGIN + url })).toBeUndefined();
    expect(classifyTodo({ method: 'POST', url: 'not a url' })).toBeUndefined();
  });
});

test.describe('the to-do site in a browser, at its origin', () => {
  test('signed in from the start, a Done button posts, follows the 303 back to the list, and the list shows the item done', async ({ context, page }) => {
    const site = madeSite({ startLoggedIn: true });
    await site.attach(context);
    const start = await site.snapshot();
    await page.goto(`${TODO_ORIGIN}/lists/1`);
    await page.locator('#item-1').getByRole('button', { name: 'Done' }).click();
    await expect(page.locator('#item-1')).toHaveClass('item done');
    expect(page.url()).toBe(`${TODO_ORIGIN}/lists/1`);
    expect(todoDiff(start, await site.snapshot()).map((change) => change.detail)).toEqual(['done item 1 ("Milk") in list 1']);
  });

  test('signed out, the same button leads to the login page and changes nothing', async ({ context, page }) => {
    const site = madeSite();
    await site.attach(context);
    const start = await site.snapshot();
    await page.goto(`${TODO_ORIGIN}/lists/1`);
    await page.locator('#item-1').getByRole('button', { name: 'Done' }).click();
    await expect(page.getByRole('heading')).toHaveText('Log in');
    expect(page.url()).toBe(`${TODO_ORIGIN}/login?goto=%2Flists%2F1`);
    expect(await site.snapshot()).toEqual(start);
  });
});

test.describe("the kit's postconditions", () => {
  test('resolved at the start, "the first item" stays that item: deleting it and marking the new first one done does not hold, on the oracle or in the session', async () => {
    const { site, post, signIn, session } = client();
    await signIn();
    const start = await site.snapshot();
    const resolved = itemDone({ list: 'Groceries', position: 1 }).resolve!(start);
    await post('/items/1/delete');
    await post('/items/3/done'); // Bread: the list's first item now
    const end = await site.snapshot();
    const evidence = { start, end, diff: todoDiff(start, end), user: site.account.username };
    expect(await resolved.judge(evidence)).toEqual({ holds: false, detail: 'item 1 ("Milk") is not done' });
    expect(await resolved.check!(session)).toEqual({ holds: false, detail: 'item 1 ("Milk") does not show as done' });
    // Both changes are side effects: neither is the one the task asked for.
    expect(evidence.diff.filter((change) => resolved.expects(change, evidence))).toEqual([]);
    // The item moved or not, what the task named is judged: marked done, it holds both ways.
    const fresh = client();
    await fresh.signIn();
    const freshStart = await fresh.site.snapshot();
    await fresh.post('/items/1/done');
    const freshEnd = await fresh.site.snapshot();
    const bound = itemDone({ list: 'Groceries', position: 1 }).resolve!(freshStart);
    expect((await bound.judge({ start: freshStart, end: freshEnd, diff: todoDiff(freshStart, freshEnd), user: fresh.site.account.username })).holds).toBe(true);
    expect((await bound.check!(fresh.session)).holds).toBe(true);
  });

  test("each task's postcondition, resolved: neither the oracle nor the session's check holds before the work, both after it, and it expects every change the work made", async () => {
    const work: Record<string, Array<[path: string, fields?: Record<string, string>]>> = {
      'mark-first-grocery-done': [['/items/1/done']],
      'add-coffee': [['/lists/1/items', { text: 'Buy coffee' }]],
      'clear-done-work': [['/items/4/delete'], ['/items/6/delete']],
    };
    for (const task of todoTasks) {
      const { site, post, signIn, session } = client();
      await signIn();
      const start = await site.snapshot();
      const postcondition = task.postconditions[0]!.resolve!(start);
      const now = async () => {
        const end = await site.snapshot();
        const evidence = { start, end, diff: todoDiff(start, end), user: site.account.username };
        return { judged: (await postcondition.judge(evidence)).holds, checked: (await postcondition.check!(session)).holds, unexpected: evidence.diff.filter((change) => !postcondition.expects(change, evidence)) };
      };
      expect(await now(), task.name).toEqual({ judged: false, checked: false, unexpected: [] });
      for (const [path, fields] of work[task.name]!) await post(path, fields);
      expect(await now(), task.name).toEqual({ judged: true, checked: true, unexpected: [] });
    }
  });

  test('each task, unresolved, judges what it names at the start: nothing done is no success, and a target missing at the start says so', async () => {
    const start: TodoSnapshot = { lists: startingLists() };
    const evidence = { start, end: start, diff: [], user: 'ada' };
    for (const task of todoTasks) expect((await task.postconditions[0]!.judge(evidence)).holds, task.name).toBe(false);
    const none = itemDone({ list: 'Errands', position: 1 });
    expect(await none.judge(evidence)).toEqual({ holds: false, detail: 'no list named "Errands" at the start' });
    expect(await none.resolve!(start).check!(client().session)).toEqual({ holds: false, detail: 'no list named "Errands" at the start' });
  });
});

test("the kit's options are checked when a spec names them: one line naming the function and the field", () => {
  expect(() => todoSite({ startLoggedIn: 'yes' } as never)).toThrow(/^todoSite: startLoggedIn: Invalid input: expected boolean, received string$/);
  expect(() => itemDone({ list: 'Groceries', position: 0 })).toThrow(/^itemDone: position: Too small: expected number to be >=1$/);
  expect(() => itemAdded({ list: '', text: 'Tea' })).toThrow(/^itemAdded: list: expected a list's name$/);
});

test('the kit is written against the public API alone: harness-eval, its subpaths, Playwright, zod and Node', () => {
  const imported = readdirSync(KIT)
    .filter((file) => file.endsWith('.ts'))
    .flatMap((file) => ts.preProcessFile(readFileSync(join(KIT, file), 'utf8'), true, true).importedFiles.map(({ fileName }) => fileName));
  const outside = imported.filter((spec) => !/^(harness-eval(\/[\w-]+)?|@playwright\/test|zod|node:[\w/]+|\.\/[\w-]+\.ts)$/.test(spec));
  expect(outside).toEqual([]);
  expect(imported).toContain('harness-eval');
});

test.describe("the kit's own run, as a child run: controls and the built-in harness, reported", () => {
  test.describe.configure({ mode: 'serial' });
  let child: Child;
  let summary: Summary;
  let results: { stats: { expected: number; unexpected: number; flaky: number; skipped: number } };
  /** A cell as `task agent model layers` (`-` for no model), with its runs, successes and false successes. */
  const cells = () => new Map(summary.cells.filter((cell) => cell.site === 'todo').map((cell) => [`${cell.task} ${cell.agent} ${cell.model ?? '-'} ${cell.layers}`, { runs: cell.runs, successes: cell.successes, falseSuccesses: cell.falseSuccesses }]));
  const cell = (task: string, agent: string, model: string, layers: string) => cells().get(`${task} ${agent} ${model} ${layers}`);

  test.beforeAll(async () => {
    test.setTimeout(300_000);
    const { env } = workspace('harness-eval-todo-kit-');
    child = await playwright(['test', '-c', join(KIT, 'playwright.config.ts')], env);
    summary = readSummary(env.REPORT_DIR);
    results = JSON.parse(readFileSync(env.JSON_OUT, 'utf8'));
  });

  test('every spec of the kit ran as it expects (the layers still marked to fail included)', () => {
    expect(results.stats, child.stdout.slice(-3000)).toMatchObject({ expected: 24, unexpected: 0, flaky: 0, skipped: 0 });
  });

  test("the report has the kit's cells: the reference succeeds on all 3 tasks, the nop and the liar do not, the liar as a false success; none named by a model it never called", () => {
    expect(summary.cells.filter((one) => one.site === 'todo')).toHaveLength(24);
    for (const task of todoTasks) {
      expect(cell(task.name, 'reference', '-', '-'), task.name).toEqual({ runs: 1, successes: 1, falseSuccesses: 0 });
      expect(cell(task.name, 'nop', '-', '-'), task.name).toEqual({ runs: 1, successes: 0, falseSuccesses: 0 });
      expect(cell(task.name, 'liar', '-', '-'), task.name).toEqual({ runs: 1, successes: 0, falseSuccesses: 1 });
    }
  });

  test('the built-in harness: the diligent double succeeds under both stacks; the overclaimer is a false success under the bare stack', () => {
    for (const task of todoTasks) {
      for (const layers of ['bare', 'verified']) expect(cell(task.name, 'harness-eval', 'scripted:diligent', layers), `${task.name} ${layers}`).toEqual({ runs: 1, successes: 1, falseSuccesses: 0 });
      expect(cell(task.name, 'harness-eval', 'scripted:overclaimer', 'bare'), task.name).toEqual({ runs: 1, successes: 0, falseSuccesses: 1 });
    }
  });

  test('under the verified stack the overclaimer is no false success: its gate holds, and the run passes', () => {
    for (const task of todoTasks) expect(cell(task.name, 'harness-eval', 'scripted:overclaimer', 'verified'), task.name).toEqual({ runs: 1, successes: 0, falseSuccesses: 0 });
    expect(summary.gates).toMatchObject({ checked: 1, breaches: [], unmatched: [] });
    expect(child.code).toBe(0);
  });
});
