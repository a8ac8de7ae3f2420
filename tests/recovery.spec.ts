import type { BrowserContext, Page } from '@playwright/test';
import { evaluate } from '../src/eval/evaluate.ts';
import { runHarness } from '../src/harness/run.ts';
import { transcript } from '../src/harness/transcript.ts';
import { recovery } from '../src/layers/recovery.ts';
import { createReplica } from '../src/sites/hn/replica.ts';
import { recordedHn } from '../src/sites/hn/site.ts';
import { upvoteFirstPost } from '../src/sites/hn/suite.ts';
import { expect, firstStory, test, turnsDouble } from './support.ts';

const FRONT = 'https://news.ycombinator.com/news';
const call = (name: string, args: object = {}) => ({ name, arguments: JSON.stringify(args) });
type Turn = Array<ReturnType<typeof call>>;

test('the crashAfter fault marks the answer to the Nth page request, once: static files do not count', async () => {
  const replica = createReplica({ faults: { crashAfter: 2 } });
  const get = (path: string) => replica.handle(new Request(`https://news.ycombinator.com${path}`));
  expect(replica.crashesPage(await get('/news'))).toBe(false);
  expect(replica.crashesPage(await get('/news.css'))).toBe(false);
  const second = await get('/newest');
  expect(second.status).toBe(200);
  expect(replica.crashesPage(second)).toBe(true);
  for (let i = 0; i < 3; i++) expect(replica.crashesPage(await get('/news'))).toBe(false);
  // A reset starts the count again, as it does for every fault.
  replica.reset();
  await get('/news');
  expect(replica.crashesPage(await get('/news'))).toBe(true);
});

/**
 * The classic vote on a site whose page crashes at the 2nd page request (the model's second
 * navigation), signed in by a cookie in the test's context only: a fresh context has none, so a
 * page still signed in after the crash has had its cookies restored.
 */
async function crashedVote(context: BrowserContext, layers: ReturnType<typeof recovery>[]) {
  const site = recordedHn({ faults: { crashAfter: 2 } });
  const { username, password } = site.account;
  const cookie = site.replica.state.login(username, password)!;
  await context.addCookies([{ name: 'user', value: cookie, url: FRONT }]);
  const story = firstStory(site.replica);
  const double = turnsDouble([
    [call('navigate', { url: FRONT })],
    [call('navigate', { url: FRONT })],
    [call('get_text')],
    [call('click', { selector: `#up_${story.id}` })],
    [call('finish', { success: true, summary: 'voted' })],
  ]);
  const record = await evaluate({ context, site, model: double.model, layers, task: upvoteFirstPost });
  return { record, cookie, requests: double.requests, site };
}

test('a page that dies mid-run (the crash fault) is recovered: a fresh session, the cookies (still signed in), the URL; the model told once; a judged outcome', async ({ context }) => {
  const { record, cookie, requests } = await crashedVote(context, [recovery()]);
  expect(record).toMatchObject({ stopReason: 'finished', claimed: true, actual: true, incomplete: false, falseSuccess: false });
  const recoveries = record.trace.filter((event) => event.type === 'harness_recovery');
  expect(recoveries).toEqual([expect.objectContaining({ lost: 'the browser page closed', recovered: true, url: FRONT })]);
  expect(recoveries[0]!.type === 'harness_recovery' && recoveries[0]!.cookies).toBeGreaterThan(0);
  expect(transcript(record.trace)).toMatch(/recovery: the browser page closed; reopened on https:\/\/news\.ycombinator\.com\/news with \d+ cookies/);
  // The way back is the harness's own call, in the trace as such.
  expect(record.trace.find((event) => event.type === 'tool_call' && event.callId === 'recovery-1')).toMatchObject({ name: 'navigate', by: 'harness' });
  // Signed in on the fresh session: the page offers to log out, which only a session's page does.
  const text = record.trace.find((event) => event.type === 'tool_result' && event.name === 'get_text');
  expect(text?.type === 'tool_result' && String(text.output?.text)).toMatch(/\blogout\b/);
  // Told once, before its next call, that the call in flight may not have run.
  const told = requests[2]!.messages.filter((message) => message.role === 'user' && String(message.content).startsWith('[harness] The connection to the browser was lost'));
  expect(told).toHaveLength(1);
  expect(String(told[0]!.content)).toContain('may or may not have taken effect');
  expect(requests.slice(3).every((request) => request.messages.filter((message) => String(message.content).includes('connection to the browser was lost')).length === 1)).toBe(true);
  // The session cookie is a secret of a kind: never in the record.
  expect(JSON.stringify(record)).not.toContain(cookie);
});

test('without recovery, a page that dies stops the run with error: incomplete, judged on what it left', async ({ context }) => {
  const { record } = await crashedVote(context, []);
  expect(record).toMatchObject({ stopReason: 'error', claimed: false, incomplete: true, summary: 'the browser page closed mid-run, so the run cannot go on' });
  expect(record.trace.some((event) => event.type === 'harness_recovery')).toBe(false);
});

/** Crashes the page's renderer (CDP's Page.crash, as an out-of-memory tab dies) and waits until Playwright reports it. */
async function crash(page: Page): Promise<void> {
  const cdp = await page.context().newCDPSession(page);
  const reported = page.waitForEvent('crash');
  void cdp.send('Page.crash').catch(() => {});
  await reported;
}

test('recovery is bounded: a crashed renderer is recovered, past maxRecoveries a lost page stops the run with error, saying why', async ({ context, browser }) => {
  const site = recordedHn();
  const pages: Page[] = [];
  // Kills the browser page under the run before its 2nd turn (a renderer crash) and its 3rd (a close).
  const { model: closer } = turnsDouble([...Array<Turn>(4).fill([call('navigate', { url: FRONT })]), [call('finish', { success: false, summary: 'gave up' })]], {
    beforeTurn: async (turn) => {
      if (turn === 2) await crash(pages.at(-1)!);
      if (turn === 3) await pages.at(-1)!.close();
    },
  });
  const result = await runHarness({
    task: upvoteFirstPost.prompt,
    model: closer,
    layers: [recovery({ maxRecoveries: 1 })],
    async openSession(_attempt, options) {
      const owner = options?.fresh ? await browser.newContext() : context;
      await site.attach(owner);
      const page = await owner.newPage();
      pages.push(page);
      return { page, close: async () => void (owner !== context && (await owner.close())) };
    },
  });
  expect(result).toMatchObject({ stopReason: 'error', claimed: false, iterations: 3 });
  expect(result.summary).toContain('the most maxRecoveries allows');
  const recoveries = result.trace.filter((event) => event.type === 'harness_recovery');
  expect(recoveries.map((event) => event.type === 'harness_recovery' && [event.lost, event.recovered])).toEqual([
    ['the browser page crashed', true],
    ['the browser page closed', false],
  ]);
  expect(pages).toHaveLength(2);
});

test('without recovery, a crashed renderer stops the run with error, as a closed page does', async ({ context }) => {
  const site = recordedHn();
  await site.attach(context);
  const page = await context.newPage();
  const { model } = turnsDouble([...Array<Turn>(3).fill([call('navigate', { url: FRONT })]), [call('finish', { success: false, summary: 'gave up' })]], {
    beforeTurn: (turn) => turn === 2 && crash(page),
  });
  const result = await runHarness({ task: upvoteFirstPost.prompt, model, openSession: async () => ({ page, close: async () => {} }) });
  expect(result).toMatchObject({ stopReason: 'error', claimed: false, iterations: 2, summary: 'the browser page crashed mid-run, so the run cannot go on' });
});

test('recovery options are checked where the layer is written', () => {
  expect(() => recovery({ maxRecoveries: 0 })).toThrow('layer recovery: maxRecoveries: Too small');
});
