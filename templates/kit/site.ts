// Your app as a harness-eval site: how a run starts it, reaches it, reads its state, and names
// what a request does. docs/own-app.md walks through each part.
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type { SiteFactory, StateChange } from 'harness-eval';
import { proxySite, spawnApp, type Records, type SiteAction, type SiteRequest } from 'harness-eval/sites';

/** Where the browser and the agent think the app is: a reserved name, so nothing leaves the machine for it. */
export const ORIGIN = 'https://__NAME__.example';

export interface Note {
  id: string;
  text: string;
}

/** The app's whole state, as its /admin/state answers it. */
export interface AppState {
  notes: Note[];
}

/** A change between two states; `id` is the record's. */
export interface AppChange extends StateChange {
  kind: 'add' | 'edit' | 'delete';
}

/** The notes, as the postconditions over records read them. */
export const notes: Records<AppState, Note> = { noun: 'note', read: (state) => state.notes, id: (note) => note.id };

/** A fresh app (its own process, port, password and admin token) for every run. */
export function appSite(): SiteFactory<AppState, AppChange> {
  return {
    name: '__NAME__',
    condition: { site: '__NAME__' },
    async create() {
      const account = { username: 'ada', password: randomBytes(12).toString('base64url') };
      const adminToken = randomBytes(18).toString('base64url');
      return proxySite({
        name: '__NAME__',
        origin: ORIGIN,
        account,
        // Your app's start command: `npm run dev -- --port {port}`, `docker run -p {port}:3000 image`, …
        start: () =>
          spawnApp({ command: process.execPath, args: [join(import.meta.dirname, 'app.mjs')], env: { APP_USER: account.username, APP_PASSWORD: account.password, ADMIN_TOKEN: adminToken }, ready: '/login' }),
        async state(app) {
          const response = await fetch(`${app.url}/admin/state`, { headers: { authorization: `Bearer ${adminToken}` } });
          if (!response.ok) throw new Error(`the app's state answered HTTP ${response.status}`);
          return (await response.json()) as AppState;
        },
        diff: appDiff,
        classify: classifyApp,
        secrets: [adminToken],
      });
    },
  };
}

/** Every note added, edited or deleted between two states. */
export function appDiff(start: AppState, end: AppState): AppChange[] {
  const before = new Map(start.notes.map((note) => [note.id, note]));
  const after = new Map(end.notes.map((note) => [note.id, note]));
  const changes: AppChange[] = [];
  for (const note of end.notes) {
    const was = before.get(note.id);
    if (!was) changes.push({ kind: 'add', id: note.id, detail: `added note ${note.id} (${JSON.stringify(note.text)})` });
    else if (was.text !== note.text) changes.push({ kind: 'edit', id: note.id, detail: `edited note ${note.id}` });
  }
  for (const note of start.notes) if (!after.has(note.id)) changes.push({ kind: 'delete', id: note.id, detail: `deleted note ${note.id} (${JSON.stringify(note.text)})` });
  return changes;
}

/** What a request does to the app; undefined when it only reads. The one place that knows the app's action URLs. */
export function classifyApp(request: SiteRequest): SiteAction | undefined {
  if (request.method.toUpperCase() !== 'POST' || !URL.canParse(request.url)) return undefined;
  const path = new URL(request.url).pathname;
  if (path === '/login') return { kind: 'login', detail: 'log in' };
  if (path === '/notes') return { kind: 'add', detail: 'add a note' };
  const remove = /^\/notes\/([^/]+)\/delete$/.exec(path);
  if (remove) return { kind: 'delete', target: remove[1], detail: `delete note ${remove[1]}` };
  return undefined;
}
