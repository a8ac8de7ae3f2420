import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { recordSite, replayed } from '../src/sites/record.ts';
import { proxySite, spawnApp } from '../src/sites/app.ts';
import { classifyTickets, ticketDiff, ticketSite, TICKET_ORIGIN, type TicketChange, type TicketState } from '../examples/ticket-kit/site.ts';
import { signIn } from '../examples/ticket-kit/tasks.ts';

/** Recording any kit's app (src/sites/record.ts): its pages by URL and its state, replayed without the app. */
test('the ticket app, recorded signed in, replays its pages, redirects and state without the app; nothing but a recorded GET answers; no secret is saved', async ({ context, browser }, testInfo) => {
  const out = testInfo.outputPath('tickets');
  const site = await ticketSite().create();
  const secrets: string[] = [];
  const saved = await recordSite({
    site,
    context,
    out,
    paths: ['/', '/tickets/2'],
    before: async (page, recorded) => {
      await signIn(page, recorded);
      secrets.push(recorded.account.password, ...recorded.secrets!());
    },
  });
  expect(saved).toEqual(['/', '/tickets', '/tickets/2']);
  const files = readdirSync(join(out, 'pages')).map((file) => readFileSync(join(out, 'pages', file), 'utf8'));
  for (const secret of secrets) for (const file of files) expect(file).not.toContain(secret);

  const factory = replayed<TicketState, TicketChange>({ dir: out, diff: ticketDiff, classify: classifyTickets });
  expect(factory).toMatchObject({ name: 'tickets-recorded', condition: { site: 'tickets-recorded', recording: out } });
  const replay = factory.create();
  const state = await replay.snapshot();
  expect(state.tickets.map((ticket) => ticket.title)).toContain('Login page times out');
  const fresh = await browser.newContext();
  try {
    await replay.attach(fresh);
    const page = await fresh.newPage();
    await page.goto(`${TICKET_ORIGIN}/`);
    expect(page.url()).toBe(`${TICKET_ORIGIN}/tickets`);
    await expect(page.locator('#me')).toHaveText('ada');
    await page.getByRole('link', { name: 'Search is slow' }).click();
    await expect(page.locator('#comments .text')).toHaveText(['Started on an index for titles.']);
    const post = await replay.fetch(new Request(`${TICKET_ORIGIN}/api/tickets/1/assign`, { method: 'POST' }));
    const unknown = await replay.fetch(new Request(`${TICKET_ORIGIN}/tickets/3`));
    expect([post.status, unknown.status]).toEqual([405, 404]);
    expect(replay.diff(state, await replay.snapshot())).toEqual([]);
  } finally {
    await fresh.close();
  }
});

test('a page whose load changes the state (a GET that acts) fails the recording, naming the change; the app is stopped either way', async ({ context }, testInfo) => {
  let stopped = false;
  const site = proxySite({
    name: 'echo',
    origin: 'https://app.example',
    account: { username: 'ada', password: 'pw-0123456789' },
    start: async () => {
      const app = await spawnApp({ command: process.execPath, args: [join(import.meta.dirname, 'fixtures', 'apps', 'echo.mjs')] });
      return { url: app.url, stop: async () => ((stopped = true), app.stop()) };
    },
    state: async (app) => ((await (await fetch(`${app.url}/`)).json()) as { posts: number }).posts,
    diff: (start, end) => (end > start ? [{ kind: 'bump', id: 'app', detail: `${end - start} bumps` }] : []),
    classify: () => undefined,
  });
  await expect(recordSite({ site, context, out: testInfo.outputPath('echo'), paths: ['/', '/bump'] })).rejects.toThrow(/^recordSite: reading the pages changed the app's state \(1 bumps\): a path that acts is no page to record$/);
  expect(stopped).toBe(true);
});

test('a folder with no recording is bad input, in one line', () => {
  expect(() => replayed({ dir: '/nonexistent-recording', diff: () => [], classify: () => undefined })).toThrow(/^replayed: dir: no recording in \/nonexistent-recording \(ENOENT/);
});
