// A stand-in for your app: a notes app run as a server process of its own. Replace it with yours
// (site.ts says how it is started) and keep its three duties to the harness:
//   - it listens on the port in PORT, on 127.0.0.1;
//   - it signs in the account it is given (APP_USER, APP_PASSWORD);
//   - it answers its whole state as JSON at GET /admin/state, to a bearer of ADMIN_TOKEN only.
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';

const { PORT, APP_USER, APP_PASSWORD, ADMIN_TOKEN } = process.env;
const state = { notes: [{ id: '1', text: 'Buy milk' }, { id: '2', text: 'Call the plumber' }] };
let nextId = 3;
const sessions = new Set();

const escape = (value) => String(value).replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
const signedIn = (request) => sessions.has(/(?:^|;\s*)sid=([^;]+)/.exec(request.headers.cookie ?? '')?.[1]);
const page = (body) => `<!doctype html><html><head><meta charset="utf-8"><title>Notes</title></head><body>${body}</body></html>`;

createServer(async (request, response) => {
  let body = '';
  for await (const chunk of request) body += chunk;
  const form = new URLSearchParams(body);
  const path = new URL(request.url, 'http://app').pathname;
  const send = (status, html, headers = {}) => response.writeHead(status, { 'content-type': 'text/html; charset=utf-8', ...headers }).end(html);
  const to = (location, headers = {}) => response.writeHead(303, { location, ...headers }).end();

  if (path === '/admin/state') {
    if (request.headers.authorization !== `Bearer ${ADMIN_TOKEN}`) return send(403, 'Forbidden.');
    return response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(state));
  }
  if (path === '/login' && request.method === 'POST') {
    if (form.get('username') !== APP_USER || form.get('password') !== APP_PASSWORD) return send(401, page('<p>Wrong username or password.</p>'));
    const sid = randomBytes(18).toString('base64url');
    sessions.add(sid);
    return to('/notes', { 'set-cookie': `sid=${sid}; Path=/; HttpOnly; SameSite=Lax` });
  }
  if (path === '/login') return send(200, page('<form method="post" action="/login"><input name="username"> <input name="password" type="password"> <button>Log in</button></form>'));
  if (!signedIn(request)) return to('/login');
  if (path === '/notes' && request.method === 'POST') {
    const text = (form.get('text') ?? '').trim();
    if (text) state.notes.push({ id: String(nextId++), text });
    return to('/notes');
  }
  const remove = /^\/notes\/([^/]+)\/delete$/.exec(path);
  if (remove && request.method === 'POST') {
    state.notes = state.notes.filter((note) => note.id !== remove[1]);
    return to('/notes');
  }
  if (path === '/notes' || path === '/') {
    const rows = state.notes.map((note) => `<li id="note-${note.id}"><span class="text">${escape(note.text)}</span> <form method="post" action="/notes/${note.id}/delete"><button>Delete</button></form></li>`);
    return send(200, page(`<h1>Notes</h1><ul id="notes">${rows.join('')}</ul><form id="add" method="post" action="/notes"><input name="text" aria-label="New note"> <button>Add</button></form>`));
  }
  return send(404, page('<p>Not found.</p>'));
}).listen(Number(PORT), '127.0.0.1');
