// The ticket tracker as a harness-eval site kit: its server (server.mjs) runs as a process of its
// own for every run, reached through proxySite at a reserved origin; its state is read from the
// app's token-protected admin endpoint. Written from the package's public entry points only.
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type { Site, SiteFactory, StateChange } from 'harness-eval';
import { proxySite, spawnApp, type Records, type SiteAccount, type SiteAction, type SiteRequest, type SpawnedApp } from 'harness-eval/sites';

/** Where the app answers for the browser and the agent: a reserved name, so nothing leaves the machine for it. */
export const TICKET_ORIGIN = 'https://tickets.example';

export interface Ticket {
  id: string;
  title: string;
  status: 'open' | 'closed';
  assignee: string | null;
}

export interface TicketComment {
  id: string;
  ticket: string;
  by: string;
  text: string;
}

/** The app's whole state, as /admin/state answers it. */
export interface TicketState {
  tickets: Ticket[];
  comments: TicketComment[];
}

/** A change between two states, in the app's words; `id` is the ticket's or the comment's. */
export interface TicketChange extends StateChange {
  kind: 'assign' | 'close' | 'reopen' | 'retitle' | 'add-ticket' | 'remove-ticket' | 'comment' | 'edit-comment' | 'remove-comment';
}

/** The tickets and the comments, as the postconditions over records read them. */
export const tickets: Records<TicketState, Ticket> = { noun: 'ticket', read: (state) => state.tickets, id: (ticket) => ticket.id };
export const comments: Records<TicketState, TicketComment> = { noun: 'comment', read: (state) => state.comments, id: (comment) => comment.id };

const SERVER = join(import.meta.dirname, 'server.mjs');

/** The session cookie a login as the site's account gets, from outside any page: no password is typed into one. */
export async function sessionOf(site: Site): Promise<{ name: string; value: string; url: string }> {
  const { username, password } = site.account;
  const response = await site.fetch(
    new Request(`${site.origin}/login`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ username, password }), redirect: 'manual' }),
  );
  const [name, value] = (response.headers.getSetCookie()[0] ?? '').split(';')[0]!.split('=');
  if (!name || !value) throw new Error(`the app refused the account's login (HTTP ${response.status})`);
  return { name, value, url: site.origin };
}

/**
 * The ticket kit's site: a fresh server process (fresh state, its own port, a new password and
 * admin token) for every run. `startLoggedIn`: the browser starts signed in, as a saved login
 * would leave it (the doubles follow a reference's page moves, and its sign-in is not one).
 */
export function ticketSite({ startLoggedIn = false }: { startLoggedIn?: boolean } = {}): SiteFactory<TicketState, TicketChange> {
  return {
    name: 'tickets',
    condition: { site: 'tickets', startLoggedIn },
    async create() {
      const account: SiteAccount = { username: 'ada', password: randomBytes(12).toString('base64url') };
      const adminToken = randomBytes(18).toString('base64url');
      const admin = (app: SpawnedApp, path: string, init: RequestInit = {}) =>
        fetch(app.url + path, { ...init, headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' } }).then(async (response) => {
          if (!response.ok) throw new Error(`the ticket app's ${path} answered HTTP ${response.status}`);
          return response.json() as Promise<unknown>;
        });
      const site = proxySite({
        name: 'tickets',
        origin: TICKET_ORIGIN,
        account,
        start: () => spawnApp({ command: process.execPath, args: [SERVER], env: { TICKET_USER: account.username, TICKET_PASSWORD: account.password, ADMIN_TOKEN: adminToken }, ready: '/login' }),
        state: async (app) => (await admin(app, '/admin/state')) as TicketState,
        diff: ticketDiff,
        classify: classifyTickets,
        secrets: [adminToken],
        async issueCredential(app) {
          const password = randomBytes(12).toString('base64url');
          await admin(app, '/admin/password', { method: 'POST', body: JSON.stringify({ password }) });
          return { username: account.username, password };
        },
      });
      if (!startLoggedIn) return site;
      const minted: string[] = [];
      return {
        ...site,
        async attach(context) {
          await site.attach(context);
          // A session the app makes for the account, as a saved login: no password (a command agent's login may have replaced it).
          const { cookie, value } = (await admin(await site.app(), '/admin/session', { method: 'POST' })) as { cookie: string; value: string };
          minted.push(value);
          await context.addCookies([{ name: cookie, value, url: TICKET_ORIGIN }]);
        },
        secrets: () => [...site.secrets!(), ...minted],
      };
    },
  };
}

/** Every ticket and comment changed between `start` and `end`. */
export function ticketDiff(start: TicketState, end: TicketState): TicketChange[] {
  const changes: TicketChange[] = [];
  const before = new Map(start.tickets.map((ticket) => [ticket.id, ticket]));
  for (const ticket of end.tickets) {
    const was = before.get(ticket.id);
    const named = `ticket ${ticket.id} (${JSON.stringify(ticket.title)})`;
    if (!was) changes.push({ kind: 'add-ticket', id: ticket.id, detail: `added ${named}` });
    else {
      if (was.assignee !== ticket.assignee) changes.push({ kind: 'assign', id: ticket.id, detail: `assigned ${named} to ${ticket.assignee ?? 'nobody'}` });
      if (was.status !== ticket.status) changes.push({ kind: ticket.status === 'closed' ? 'close' : 'reopen', id: ticket.id, detail: `${ticket.status === 'closed' ? 'closed' : 'reopened'} ${named}` });
      if (was.title !== ticket.title) changes.push({ kind: 'retitle', id: ticket.id, detail: `retitled ${named}` });
    }
  }
  const after = new Set(end.tickets.map((ticket) => ticket.id));
  for (const ticket of start.tickets) if (!after.has(ticket.id)) changes.push({ kind: 'remove-ticket', id: ticket.id, detail: `removed ticket ${ticket.id}` });
  const earlier = new Map(start.comments.map((comment) => [comment.id, comment]));
  for (const comment of end.comments) {
    const was = earlier.get(comment.id);
    if (!was) changes.push({ kind: 'comment', id: comment.id, detail: `${comment.by} commented ${JSON.stringify(comment.text)} on ticket ${comment.ticket}` });
    else if (was.text !== comment.text) changes.push({ kind: 'edit-comment', id: comment.id, detail: `edited comment ${comment.id}` });
  }
  const kept = new Set(end.comments.map((comment) => comment.id));
  for (const comment of start.comments) if (!kept.has(comment.id)) changes.push({ kind: 'remove-comment', id: comment.id, detail: `removed comment ${comment.id}` });
  return changes;
}

/** What a request does: the buttons' fetch() posts, the comment form, a login or logout. A GET only reads. */
export function classifyTickets(request: SiteRequest): SiteAction | undefined {
  if (request.method.toUpperCase() !== 'POST' || !URL.canParse(request.url)) return undefined;
  const path = new URL(request.url).pathname;
  if (path === '/login') return { kind: 'login', detail: 'log in' };
  if (path === '/logout') return { kind: 'logout', detail: 'log out' };
  const api = /^\/api\/tickets\/([^/]+)\/(assign|close)$/.exec(path);
  if (api) return { kind: api[2]!, target: api[1], detail: `${api[2]} ticket ${api[1]}` };
  const comment = /^\/tickets\/([^/]+)\/comments$/.exec(path);
  if (comment) return { kind: 'comment', target: comment[1], detail: `comment on ticket ${comment[1]}` };
  return undefined;
}
