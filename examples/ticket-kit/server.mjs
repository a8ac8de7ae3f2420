// The ticket tracker: a small web app run as a server process of its own, as a team's app is.
// Plain Node (no build step): `PORT=8080 TICKET_USER=ada TICKET_PASSWORD=… ADMIN_TOKEN=… node server.mjs`.
// Signed in, a user sees the tickets, assigns one to themselves or closes it (buttons that post with
// fetch()), and comments on a ticket (an HTML form). Its whole state is JSON at /admin/state, for a
// bearer of ADMIN_TOKEN only; /admin/password (a new password), /admin/session (a session, as a
// saved login) and /admin/reset are the harness's too.
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';

const { PORT = '8080', TICKET_USER = 'ada', ADMIN_TOKEN } = process.env;
if (!ADMIN_TOKEN || !process.env.TICKET_PASSWORD) {
  console.error('server.mjs: ADMIN_TOKEN and TICKET_PASSWORD must be set');
  process.exit(2);
}
let password = process.env.TICKET_PASSWORD;

/** The tickets a fresh app starts with; ids are fixed, so a task names the same ticket on every run. */
const seed = () => ({
  tickets: [
    { id: '1', title: 'Login page times out', status: 'open', assignee: null },
    { id: '2', title: 'Search is slow', status: 'open', assignee: 'grace' },
    { id: '3', title: 'Duplicate: export fails', status: 'open', assignee: null },
    { id: '4', title: 'Export fails on large files', status: 'open', assignee: 'grace' },
    { id: '5', title: 'Typo on the pricing page', status: 'closed', assignee: 'linus' },
  ],
  comments: [{ id: 'c1', ticket: '2', by: 'grace', text: 'Started on an index for titles.' }],
});
let state = seed();
let nextComment = 2;
/** Session id → user name. */
const sessions = new Map();

const escape = (value) => String(value).replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
const bearer = (request) => {
  const given = Buffer.from(request.headers.authorization ?? '');
  const wanted = Buffer.from(`Bearer ${ADMIN_TOKEN}`);
  return given.length === wanted.length && timingSafeEqual(given, wanted);
};
const userOf = (request) => {
  const sid = (request.headers.cookie ?? '').split(';').map((pair) => pair.trim().split('=')).find(([name]) => name === 'sid')?.[1];
  return sid === undefined ? undefined : sessions.get(sid);
};
const readBody = (request) =>
  new Promise((resolve, reject) => {
    let body = '';
    request.setEncoding('utf8');
    request.on('data', (chunk) => {
      body += chunk;
      if (body.length > 64 * 1024) reject(new Error('body too large'));
    });
    request.on('end', () => resolve(body));
    request.on('error', reject);
  });
const safeGoto = (goto) => (typeof goto === 'string' && goto.startsWith('/') && !goto.startsWith('//') ? goto : '/tickets');

function send(response, status, body, headers = {}) {
  response.writeHead(status, { 'content-type': 'text/html; charset=utf-8', ...headers });
  response.end(body);
}
const json = (response, status, value) => send(response, status, JSON.stringify(value), { 'content-type': 'application/json' });
const redirect = (response, location, headers = {}) => send(response, 303, '', { location, ...headers });

function page(title, user, body) {
  const who = user ? `signed in as <b id="me">${escape(user)}</b> <form method="post" action="/logout" class="inline"><button>Log out</button></form>` : '<a href="/login">Log in</a>';
  return `<!doctype html><html><head><meta charset="utf-8"><title>${escape(title)}</title></head><body><header><a href="/tickets">Tickets</a> · ${who}</header><main>${body}</main></body></html>`;
}

/** The list: each ticket a row with its status and assignee, and buttons that post with fetch() and reload. */
function listBody() {
  const rows = state.tickets.map(
    (ticket) =>
      `<tr class="ticket ${ticket.status}" data-id="${ticket.id}"><td>#${ticket.id}</td><td><a href="/tickets/${ticket.id}">${escape(ticket.title)}</a></td>` +
      `<td class="status">${ticket.status}</td><td class="assignee">${escape(ticket.assignee ?? 'nobody')}</td>` +
      `<td>${ticket.status === 'open' ? `<button class="assign" data-id="${ticket.id}">Assign to me</button> <button class="close" data-id="${ticket.id}">Close</button>` : ''}</td></tr>`,
  );
  const script = `<script>
for (const button of document.querySelectorAll('button.assign, button.close')) {
  button.addEventListener('click', async () => {
    const action = button.classList.contains('assign') ? 'assign' : 'close';
    const response = await fetch('/api/tickets/' + button.dataset.id + '/' + action, { method: 'POST' });
    document.querySelector('#notice').textContent = response.ok ? 'Saved.' : 'Failed: HTTP ' + response.status;
    if (response.ok) location.reload();
  });
}
</script>`;
  return `<h1>Tickets</h1><p id="notice"></p><table id="tickets"><tr><th>#</th><th>Title</th><th>Status</th><th>Assignee</th><th></th></tr>${rows.join('')}</table>${script}`;
}

function ticketBody(ticket) {
  const comments = state.comments.filter((comment) => comment.ticket === ticket.id).map((comment) => `<li class="comment" id="${comment.id}"><b>${escape(comment.by)}</b>: <span class="text">${escape(comment.text)}</span></li>`);
  return (
    `<h1>#${ticket.id} ${escape(ticket.title)}</h1><p>Status: <span class="status">${ticket.status}</span> · Assignee: <span class="assignee">${escape(ticket.assignee ?? 'nobody')}</span></p>` +
    `<h2>Comments</h2><ul id="comments">${comments.join('')}</ul>` +
    `<form id="comment" method="post" action="/tickets/${ticket.id}/comments"><textarea name="text" aria-label="Comment"></textarea><button>Comment</button></form>`
  );
}

function loginBody(goto, problem) {
  return (
    `<h1>Log in</h1>${problem ? `<p class="error">${problem}</p>` : ''}<form method="post" action="/login"><input type="hidden" name="goto" value="${escape(goto)}">` +
    '<label>Username <input name="username"></label> <label>Password <input name="password" type="password"></label> <button>Log in</button></form>'
  );
}

async function answer(request, response) {
  const url = new URL(request.url, `http://${request.headers.host}`);
  const path = url.pathname;
  const post = request.method === 'POST';
  // A form or fetch() from another site is refused: the browser says where it came from.
  if (post && request.headers.origin !== undefined && request.headers.origin !== url.origin) return send(response, 403, 'Cross-site request refused.');
  const body = post ? await readBody(request) : '';
  const user = userOf(request);

  if (path.startsWith('/admin/')) {
    if (!bearer(request)) return json(response, 403, { error: 'forbidden' });
    if (path === '/admin/state' && request.method === 'GET') return json(response, 200, state);
    if (path === '/admin/password' && post) {
      password = JSON.parse(body).password;
      sessions.clear();
      return json(response, 200, { ok: true });
    }
    if (path === '/admin/session' && post) {
      const sid = randomBytes(18).toString('base64url');
      sessions.set(sid, TICKET_USER);
      return json(response, 200, { cookie: 'sid', value: sid });
    }
    if (path === '/admin/reset' && post) {
      state = seed();
      nextComment = 2;
      sessions.clear();
      return json(response, 200, { ok: true });
    }
    return json(response, 404, { error: 'not found' });
  }
  if (path === '/' ) return redirect(response, '/tickets');
  if (path === '/login') {
    if (!post) return send(response, 200, page('Log in', user, loginBody(safeGoto(url.searchParams.get('goto')))));
    const form = new URLSearchParams(body);
    const goto = safeGoto(form.get('goto'));
    if (form.get('username') !== TICKET_USER || form.get('password') !== password) return send(response, 401, page('Log in', user, loginBody(goto, 'Wrong username or password.')));
    const sid = randomBytes(18).toString('base64url');
    sessions.set(sid, TICKET_USER);
    return redirect(response, goto, { 'set-cookie': `sid=${sid}; Path=/; HttpOnly; SameSite=Lax` });
  }
  if (path === '/logout' && post) {
    const sid = (request.headers.cookie ?? '').match(/(?:^|;\s*)sid=([^;]+)/)?.[1];
    if (sid) sessions.delete(sid);
    return redirect(response, '/login', { 'set-cookie': 'sid=; Path=/; Max-Age=0' });
  }

  const api = /^\/api\/tickets\/([^/]+)\/(assign|close)$/.exec(path);
  if (api) {
    if (!post) return json(response, 405, { error: 'POST only' });
    if (!user) return json(response, 401, { error: 'sign in first' });
    const ticket = state.tickets.find((one) => one.id === api[1]);
    if (!ticket) return json(response, 404, { error: 'no such ticket' });
    if (ticket.status === 'closed') return json(response, 409, { error: 'the ticket is closed' });
    if (api[2] === 'assign') ticket.assignee = user;
    else ticket.status = 'closed';
    return json(response, 200, ticket);
  }

  if (!user) return redirect(response, `/login?goto=${encodeURIComponent(path)}`);
  if (path === '/tickets' && !post) return send(response, 200, page('Tickets', user, listBody()));
  const one = /^\/tickets\/([^/]+)(\/comments)?$/.exec(path);
  const ticket = one && state.tickets.find((candidate) => candidate.id === one[1]);
  if (!ticket) return send(response, 404, page('Not found', user, '<p>No such ticket.</p>'));
  if (!one[2] && !post) return send(response, 200, page(`#${ticket.id}`, user, ticketBody(ticket)));
  if (one[2] && post) {
    const text = (new URLSearchParams(body).get('text') ?? '').trim();
    if (text === '' || text.length > 2000) return send(response, 400, page('Comment', user, '<p class="error">A comment has 1 to 2000 characters.</p>'));
    state.comments.push({ id: `c${nextComment++}`, ticket: ticket.id, by: user, text });
    return redirect(response, `/tickets/${ticket.id}`);
  }
  return send(response, 405, 'Method not allowed.');
}

createServer((request, response) => {
  answer(request, response).catch((error) => {
    if (!response.headersSent) send(response, 500, `Internal error: ${escape(error.message)}`);
    else response.end();
  });
}).listen(Number(PORT), '127.0.0.1', () => console.log(`tickets on http://127.0.0.1:${PORT}`));
