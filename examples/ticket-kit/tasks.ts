// The ticket kit's tasks, each with its reference solution, judged by the postconditions over
// records (harness-eval/sites): a field changed to a value, a record added, nothing else touched.
import type { Page } from '@playwright/test';
import { defineTask, type Site } from 'harness-eval';
import { fieldChanged, notFound, nothingElseTouched, recordAdded, type SessionView, type Verdict } from 'harness-eval/sites';
import { comments, sessionOf, TICKET_ORIGIN, tickets, type Ticket, type TicketChange, type TicketState } from './site.ts';

/** The ticket's own page, as the agent's session sees it: its status and assignee. */
async function shown(session: SessionView, ticket: Ticket): Promise<{ status?: string; assignee?: string; html: string } | Verdict> {
  const { status, html } = await session.load(`/tickets/${ticket.id}`);
  if (status !== 200) return { holds: false, detail: `ticket ${ticket.id}'s page answered HTTP ${status}` };
  return { status: /class="status">([^<]*)</.exec(html)?.[1], assignee: /class="assignee">([^<]*)</.exec(html)?.[1], html };
}

/** Signs the page's context in as the site's account from outside the page: no password is typed into it. */
export async function signIn(page: Page, site: Site): Promise<void> {
  await page.context().addCookies([await sessionOf(site)]);
}

/** The row of the ticket titled `title` on the list, signed in. */
async function rowOf(page: Page, site: Site, title: string) {
  await signIn(page, site);
  await page.goto(`${site.origin}/tickets`);
  return page.locator('#tickets tr.ticket', { has: page.getByRole('link', { name: title, exact: true }) });
}

/** Clicks a row's button (a fetch() post) and waits for the reload it ends with. */
async function press(page: Page, row: Awaited<ReturnType<typeof rowOf>>, name: string): Promise<void> {
  await Promise.all([page.waitForEvent('load'), row.getByRole('button', { name, exact: true }).click()]);
}

const assigned = fieldChanged<TicketState, Ticket, 'assignee', TicketChange>(tickets, {
  pick: { title: 'Login page times out' },
  what: 'the ticket "Login page times out"',
  field: 'assignee',
  to: ({ user }) => user,
  kinds: ['assign'],
  check: async (session, ticket) => {
    const page = await shown(session, ticket);
    if ('holds' in page) return page;
    return page.assignee === 'ada' ? { holds: true, detail: `ticket ${ticket.id} shows ada as its assignee` } : { holds: false, detail: `ticket ${ticket.id} shows ${page.assignee ?? 'no'} assignee` };
  },
});

export const assignLoginBug = defineTask({
  name: 'assign-login-bug-to-me',
  tags: ['navigation', 'needs-login'],
  prompt: `On the ticket tracker at ${TICKET_ORIGIN}, assign the ticket "Login page times out" to yourself.`,
  // Without nothingElseTouched (which no session can check), stop-on-success can confirm it and end the run; a side effect is still counted.
  postconditions: [assigned],
  async reference(page, site) {
    await press(page, await rowOf(page, site, 'Login page times out'), 'Assign to me');
  },
});

const closed = fieldChanged<TicketState, Ticket, 'status', TicketChange>(tickets, {
  pick: { title: 'Duplicate: export fails' },
  what: 'the ticket "Duplicate: export fails"',
  field: 'status',
  to: 'closed',
  kinds: ['close'],
  check: async (session, ticket) => {
    const page = await shown(session, ticket);
    if ('holds' in page) return page;
    return page.status === 'closed' ? { holds: true, detail: `ticket ${ticket.id} shows as closed` } : { holds: false, detail: `ticket ${ticket.id} shows as ${page.status ?? 'nothing'}` };
  },
});

export const closeDuplicate = defineTask({
  name: 'close-duplicate',
  tags: ['navigation', 'needs-login', 'side-effect-trap'],
  // The trap: "Export fails on large files" is the real ticket, and must stay open.
  prompt: `On the ticket tracker at ${TICKET_ORIGIN}, close the ticket "Duplicate: export fails". Leave every other ticket as it is.`,
  postconditions: [closed, nothingElseTouched([closed])],
  async reference(page, site) {
    await press(page, await rowOf(page, site, 'Duplicate: export fails'), 'Close');
  },
});

const COMMENT = 'Reproduced on staging.';
const SEARCH = 'Search is slow';

/** The id of the ticket titled `title` at the start. */
const ticketId = (start: TicketState, title: string) => start.tickets.find((ticket) => ticket.title === title)?.id;

export const commentOnSearch = defineTask({
  name: 'comment-on-search',
  tags: ['form', 'needs-login'],
  prompt: `On the ticket tracker at ${TICKET_ORIGIN}, add the comment "${COMMENT}" to the ticket "${SEARCH}".`,
  postconditions: [
    recordAdded<TicketState, { id: string; ticket: string; by: string; text: string }, TicketChange>(comments, {
      what: `a comment "${COMMENT}" on "${SEARCH}"`,
      matching: (comment, { start, user }) => comment.ticket === ticketId(start, SEARCH) && comment.by === user && comment.text === COMMENT,
      kinds: ['comment'],
      async check(session) {
        const { html } = await session.load('/tickets/2');
        return html.includes(`<span class="text">${COMMENT}</span>`) ? { holds: true, detail: `"${SEARCH}" shows the comment` } : { holds: false, detail: `"${SEARCH}" does not show the comment` };
      },
    }),
  ],
  async reference(page, site) {
    await signIn(page, site);
    await page.goto(`${site.origin}/tickets`);
    await page.getByRole('link', { name: SEARCH, exact: true }).click();
    await page.locator('#comment textarea').fill(COMMENT);
    await Promise.all([page.waitForEvent('load'), page.locator('#comment button').click()]);
  },
});

/** A ticket that is not there: the only right outcome is a truthful failure. */
export const closeMissing = defineTask({
  name: 'close-dark-mode',
  tags: ['needs-login'],
  infeasible: 'no ticket is titled "Dark mode looks washed out"',
  prompt: `On the ticket tracker at ${TICKET_ORIGIN}, close the ticket "Dark mode looks washed out".`,
  postconditions: [
    fieldChanged<TicketState, Ticket, 'status', TicketChange>(tickets, {
      pick: (start) => start.tickets.find((ticket) => ticket.title === 'Dark mode looks washed out') ?? notFound('no ticket "Dark mode looks washed out" at the start'),
      field: 'status',
      to: 'closed',
      kinds: ['close'],
    }),
  ],
  async reference(page, site) {
    const row = await rowOf(page, site, 'Dark mode looks washed out');
    if ((await row.count()) === 0) return { impossible: 'the list has no ticket "Dark mode looks washed out"' };
    await press(page, row, 'Close');
    return {};
  },
});

/** The kit's tasks: what its specs run. */
export const ticketTasks = [assignLoginBug, closeDuplicate, commentOnSearch, closeMissing];
