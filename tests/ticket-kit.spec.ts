import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test, type Browser } from '@playwright/test';
import ts from 'typescript';
import { commandAgent } from '../src/agents/command.ts';
import { functionAgent } from '../src/agents/function.ts';
import { liarAgent, nopAgent, referenceAgent } from '../src/agents/controls.ts';
import type { Agent } from '../src/eval/agent.ts';
import { evaluate } from '../src/eval/evaluate.ts';
import type { RunRecord } from '../src/core/run.ts';
import type { Task } from '../src/core/task.ts';
import type { ProxySite, SpawnedApp } from '../src/sites/app.ts';
import { classifyTickets, TICKET_ORIGIN, ticketSite, type TicketChange, type TicketState } from '../examples/ticket-kit/site.ts';
import { assignLoginBug, commentOnSearch, ticketTasks } from '../examples/ticket-kit/tasks.ts';
import { layerStacks, test as harnessTest } from '../src/index.ts';

/**
 * The third site kit (examples/ticket-kit/, a ticket tracker run as a server process of its own,
 * wrapped with proxySite): its app over HTTP, its controls on every task, a command agent, honest
 * and lying, and the doubles under the bare and verified stacks, each run on a server of its own.
 * The kit's own specs (`playwright test -c examples/ticket-kit`, from the project) run them all on every task;
 * here, in-process, a sample.
 */
const KIT = join(import.meta.dirname, '..', 'examples', 'ticket-kit');
const made = async () => (await ticketSite().create()) as ProxySite<SpawnedApp, TicketState, TicketChange>;
/** One run in a context of its own: runs at once never share a context's routes. */
async function run(browser: Browser, agent: Agent, task: Task) {
  const context = await browser.newContext();
  try {
    return await evaluate({ context, site: await made(), agent, model: 'scripted:diligent', task });
  } finally {
    await context.close();
  }
}
const form = (fields: Record<string, string>, headers: Record<string, string> = {}) => ({ method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, body: new URLSearchParams(fields), redirect: 'manual' as const });

test('the app over HTTP: signed out, pages lead to the login; a cross-site post is refused; its state answers the admin token only; every button and form it renders is an action', async () => {
  const site = await made();
  try {
    const send = (path: string, init: RequestInit = {}) => site.fetch(new Request(TICKET_ORIGIN + path, { redirect: 'manual', ...init }));
    const out = await send('/tickets');
    expect([out.status, out.headers.get('location')]).toEqual([303, '/login?goto=%2Ftickets']);
    const login = await send('/login', form({ username: 'ada', password: site.account.password }));
    const cookie = login.headers.getSetCookie()[0]!.split(';')[0]!;
    expect(site.secrets!()).toContain(cookie.split('=')[1]);
    const crossSite = await send('/api/tickets/1/close', { method: 'POST', headers: { cookie, origin: 'https://evil.example' } });
    expect(crossSite.status).toBe(403);
    const start = await site.snapshot();
    expect(start.tickets.find((ticket) => ticket.id === '1')).toMatchObject({ status: 'open' });
    const { url } = await site.app();
    expect((await fetch(`${url}/admin/state`)).status).toBe(403);
    const html = [await (await send('/tickets', { headers: { cookie } })).text(), await (await send('/tickets/2', { headers: { cookie } })).text()].join('');
    const posts = [...html.matchAll(/action="([^"]+)"/g)].map(([, action]) => action!);
    for (const [, kind, id] of html.matchAll(/<button class="(assign|close)" data-id="(\d+)"/g)) posts.push(`/api/tickets/${id}/${kind}`);
    expect(posts.length).toBeGreaterThan(8);
    for (const path of posts) expect(classifyTickets({ method: 'POST', url: TICKET_ORIGIN + path }), path).toBeDefined();
    expect(classifyTickets({ method: 'GET', url: `${TICKET_ORIGIN}/tickets/1` })).toBeUndefined();
  } finally {
    await site.dispose!();
  }
});

test.describe('the controls on every task, each on a server of its own', () => {
  for (const task of ticketTasks) {
    test(`${task.name}: the reference does it (or says it is impossible), the nop fails truthfully, the liar is a false success`, async ({ browser }) => {
      const feasible = task.infeasible === undefined;
      const [reference, nop, liar] = (await Promise.all([referenceAgent(), nopAgent(), liarAgent()].map((agent) => run(browser, agent, task)))) as [RunRecord, RunRecord, RunRecord];
      expect(reference, `${reference.summary}; ${reference.verdicts.map((verdict) => verdict.detail).join('; ')}`).toMatchObject({ actual: feasible, claimed: feasible, sideEffects: [] });
      expect(nop).toMatchObject({ actual: false, claimed: false, falseSuccess: false, sideEffects: [] });
      expect(liar).toMatchObject({ actual: false, claimed: true, falseSuccess: true, sideEffects: [] });
    });
  }
});

test('a sandboxed command agent over HARNESS_CDP_URL with a login made for its run: the honest one succeeds, the lying one is a false success', async ({ browser }) => {
  const script = join(KIT, 'agents', 'assign.mjs');
  const [honest, lying] = await Promise.all([
    run(browser, commandAgent(['node', script], { name: 'assign', account: true }), assignLoginBug),
    run(browser, commandAgent(['node', script, '--lie'], { name: 'assign-liar', account: true }), assignLoginBug),
  ]);
  expect(honest, honest.summary).toMatchObject({ claimed: true, actual: true, sideEffects: [], summary: '"Login page times out" is assigned to ada.' });
  expect(lying).toMatchObject({ claimed: true, actual: false, falseSuccess: true, sideEffects: [] });
});

test("an agent that brings the team's app down is still counted: its claim a false success, the app's going a side effect", async ({ browser }) => {
  const context = await browser.newContext();
  try {
    const site = await made();
    const { pid } = await site.app();
    // As a request the app dies of would: the agent's work began, and then the app is gone.
    const crasher = functionAgent(
      async ({ page }) => {
        await page.goto(`${TICKET_ORIGIN}/login`);
        process.kill(-pid, 'SIGKILL');
        return { success: true, summary: 'assigned' };
      },
      { name: 'crasher' },
    );
    const run = await evaluate({ context, site, agent: crasher, model: 'scripted:diligent', task: assignLoginBug });
    expect(run.excluded).toBeUndefined();
    expect(run).toMatchObject({ claimed: true, actual: false, falseSuccess: true, judged: true, sideEffects: [{ kind: 'site down', detail: expect.stringMatching(/^the site went down during the run: tickets: the app was killed by SIGKILL/) }] });
  } finally {
    await context.close();
  }
});

harnessTest.describe("the doubles on the kit, signed in: scripted:diligent follows each reference (a fetch() button that reloads, a form), scripted:overclaimer claims without acting", () => {
  harnessTest.use({ site: ticketSite({ startLoggedIn: true }) });
  for (const stack of ['bare', 'verified'] as const) {
    harnessTest.describe(stack, () => {
      harnessTest.use({ layers: [...layerStacks[stack]], layerStack: stack });
      harnessTest.describe(() => {
        harnessTest.use({ model: 'scripted:diligent' });
        harnessTest('scripted:diligent succeeds', async ({ harness }) => {
          for (const task of [assignLoginBug, commentOnSearch]) {
            const run = await harness.run(task);
            expect(run, `${task.name}: ${run.summary}`).toMatchObject({ claimed: true, actual: true, sideEffects: [], stopReason: 'finished' });
          }
        });
      });
      harnessTest.describe(() => {
        harnessTest.use({ model: 'scripted:overclaimer' });
        harnessTest(stack === 'verified' ? 'scripted:overclaimer is caught by verify' : 'scripted:overclaimer is a false success', async ({ harness }) => {
          for (const task of [assignLoginBug, commentOnSearch]) {
            const run = await harness.run(task);
            expect(run, `${task.name}: ${run.summary}`).toMatchObject({ claimed: stack === 'bare', actual: false, falseSuccess: stack === 'bare', sideEffects: [] });
          }
        });
      });
    });
  }
});

test('the kit is written against the public API alone: harness-eval, its subpaths, Playwright and Node', () => {
  const imported = readdirSync(KIT)
    .filter((file) => file.endsWith('.ts'))
    .flatMap((file) => ts.preProcessFile(readFileSync(join(KIT, file), 'utf8'), true, true).importedFiles.map(({ fileName }) => fileName));
  expect(imported.filter((spec) => !/^(harness-eval(\/[\w-]+)?|@playwright\/test|node:[\w/]+|\.\/[\w-]+\.ts)$/.test(spec))).toEqual([]);
});
