import type { BrowserContext } from '@playwright/test';
import type { TraceEventOf } from '../src/harness/trace.ts';
import { ApprovalStore } from '../src/harness/approvals.ts';
import { approval, type ApprovalRequest } from '../src/layers/approval.ts';
import type { LayerSpec } from '../src/layers/index.ts';
import { permissions } from '../src/layers/permissions.ts';
import { risk } from '../src/layers/risk.ts';
import { evaluate } from '../src/eval/evaluate.ts';
import type { RunRecord } from '../src/core/run.ts';
import { routeSite } from '../src/sites/route.ts';
import { HN_ORIGIN } from '../src/sites/hn/options.ts';
import { hnRiskRules } from '../src/sites/hn/risk.ts';
import { recordedHn } from '../src/sites/hn/site.ts';
import { upvoteFirstPost } from '../src/sites/hn/suite.ts';
import { expect, test, turnsDouble } from './support.ts';

/**
 * Every hop is judged: an action the browser reaches through a chain (a `goto` after a hide or a
 * fave, a login that completes a vote, a script's image ping, a site redirect off the site) meets
 * permissions, approval and risk as the model's own navigate or click does.
 */

const FIRST = '46194762'; // rank 1 in the fixture pages
const SECOND = '46188654'; // rank 2
const NEWS = `${HN_ORIGIN}/news`;
const USER = 'harness';

type Site = ReturnType<typeof recordedHn>;
type Turns = Parameters<typeof turnsDouble>[0];

const call = (name: string, args: Record<string, unknown> = {}) => [{ name, arguments: JSON.stringify(args) }];
const finish = call('finish', { success: false, summary: 'done' });

function run(context: BrowserContext, turns: Turns, layers: readonly LayerSpec[], site: Site, beforeTurn?: (turn: number) => unknown) {
  return evaluate({ context, site, model: turnsDouble(turns, { beforeTurn }).model, layers, task: upvoteFirstPost });
}

function events<T extends 'harness_approval' | 'harness_denied' | 'harness_risk' | 'tool_result'>(record: RunRecord, type: T): TraceEventOf<T>[] {
  return record.trace.filter((event) => event.type === type) as TraceEventOf<T>[];
}

/** The site's marks for the run's account, once the agent's page is idle. */
async function marks(context: BrowserContext, site: Site) {
  await context.pages().at(-1)?.waitForLoadState('networkidle');
  const truth = site.replica.truth();
  return { votes: truth.votes[USER] ?? [], hidden: truth.hidden[USER] ?? [], faves: truth.faves[USER] ?? [] };
}

type Mark = 'vote' | 'hide' | 'fave';

/** A link that does `mark` to `id`, with the account's own token, then goes to `goto`. */
function link(site: Site, mark: Mark, id: string, goto: string): string {
  return `${mark}?id=${id}${mark === 'vote' ? '&how=up' : ''}&auth=${site.replica.state.authToken(USER, id)}&goto=${encodeURIComponent(goto)}`;
}

/** `first` to FIRST, then, in its `goto`, `then` to SECOND. */
function chain(site: Site, first: Mark, then: Mark): string {
  return `${HN_ORIGIN}/${link(site, first, FIRST, link(site, then, SECOND, 'news'))}`;
}

/** The site's list a mark goes to. */
const listOf = { vote: 'votes', hide: 'hidden', fave: 'faves' } as const;

const chains: Array<[Mark, Mark]> = [
  ['hide', 'vote'],
  ['fave', 'vote'],
  ['vote', 'hide'],
];
for (const [first, then] of chains) {
  test(`a ${then} in a ${first}'s goto is asked about as a ${then}: denied, the ${first} is done and the ${then} is not`, async ({ context }) => {
    const site = recordedHn({ startLoggedIn: true });
    const asked: ApprovalRequest[] = [];
    const policy = (request: ApprovalRequest) => (asked.push(request), request.action.kind !== then);
    const record = await run(context, [call('navigate', { url: chain(site, first, then) }), finish], [approval({ policy })], site);
    expect(asked.map((request) => [request.tool, request.action.kind, request.action.target])).toEqual([
      ['navigate', first, FIRST],
      ['navigate', then, SECOND],
    ]);
    expect(events(record, 'harness_approval').map(({ tool, action, decision }) => [tool, action, decision])).toEqual([
      ['navigate', `${first} ${FIRST}`, 'approved'],
      ['navigate', `${then} ${SECOND}`, 'denied'],
    ]);
    // The model is told: its navigate led to an action that was not approved.
    expect(events(record, 'tool_result').find((event) => event.name === 'navigate')).toMatchObject({
      ok: false,
      kind: 'denied',
      error: `denied by the harness: ${then} ${SECOND} needs approval, and it was not approved`,
    });
    const done = await marks(context, site);
    expect(done[listOf[first]]).toEqual([FIRST]);
    expect(done[listOf[then]]).toEqual([]);
  });
}

test('under approval deny (the default) a goto chain performs nothing; under approve each action is asked once and done', async ({ context }) => {
  const denied = recordedHn({ startLoggedIn: true });
  const none = await run(context, [call('navigate', { url: chain(denied, 'hide', 'vote') }), finish], [approval()], denied);
  expect(events(none, 'harness_approval').map(({ action, decision }) => [action, decision])).toEqual([[`hide ${FIRST}`, 'denied']]);
  expect(await marks(context, denied)).toEqual({ votes: [], hidden: [], faves: [] });

  const approved = recordedHn({ startLoggedIn: true });
  const asked: string[] = [];
  const record = await run(context, [call('navigate', { url: chain(approved, 'hide', 'vote') }), finish], [approval({ policy: (request) => (asked.push(request.action.kind), true) })], approved);
  // The navigate's own request (the hide) takes the decision the call got: asked once, not twice.
  expect(asked).toEqual(['hide', 'vote']);
  expect(events(record, 'harness_approval').map(({ action, decision }) => [action, decision])).toEqual([
    [`hide ${FIRST}`, 'approved'],
    [`vote ${SECOND}`, 'approved'],
  ]);
  expect(await marks(context, approved)).toEqual({ votes: [SECOND], hidden: [FIRST], faves: [] });
});

test('a login that completes the vote in its goto is that vote: denied, neither the login nor the vote happens', async ({ context }) => {
  const site = recordedHn();
  const turns = [
    call('navigate', { url: `${HN_ORIGIN}/login?goto=${encodeURIComponent(`vote?id=${FIRST}&how=up&goto=news`)}` }),
    call('fill', { selector: 'input[name="acct"]', value: site.account.username }),
    call('fill', { selector: 'input[name="pw"]', value: site.account.password }),
    call('click', { selector: 'input[type="submit"]' }),
    finish,
  ];
  const record = await run(context, turns, [approval()], site);
  expect(events(record, 'harness_approval').map(({ tool, action, decision }) => [tool, action, decision])).toEqual([['click', `vote ${FIRST}`, 'denied']]);
  expect(await marks(context, site)).toEqual({ votes: [], hidden: [], faves: [] });
  expect(await context.cookies(HN_ORIGIN)).toEqual([]);
});

test("a page script's image ping is judged: denied, no vote; the denial recorded for the browser", async ({ context }) => {
  const site = recordedHn({ startLoggedIn: true });
  // Before the model's second turn, the page itself pings the vote link, as HN's own script does.
  const ping = async (turn: number) => {
    if (turn !== 2) return;
    const page = context.pages().at(-1)!;
    await page.evaluate((id) => {
      new Image().src = (document.getElementById(`up_${id}`) as HTMLAnchorElement).href;
    }, SECOND);
    await page.waitForEvent('requestfailed', { predicate: (request) => request.url().includes('/vote?'), timeout: 5_000 });
  };
  const record = await run(context, [call('navigate', { url: NEWS }), finish], [approval()], site, ping);
  expect(events(record, 'harness_approval').map(({ tool, action, decision }) => [tool, action, decision])).toEqual([['browser', `vote ${SECOND}`, 'denied']]);
  expect((await marks(context, site)).votes).toEqual([]);
});

test('risk scores each hop: a permitted hide leads to a vote, which is high and denied', async ({ context }) => {
  const site = recordedHn({ startLoggedIn: true });
  const record = await run(context, [call('navigate', { url: chain(site, 'hide', 'vote') }), finish], [risk({ rules: hnRiskRules, permits: ['flag'] })], site);
  expect(events(record, 'harness_risk').map(({ tool, level, rule, decision }) => [tool, level, rule, decision])).toEqual([
    ['navigate', 'low', 'flag or hide', 'passed'],
    ['navigate', 'high', 'vote', 'denied'],
  ]);
  expect(await marks(context, site)).toEqual({ votes: [], hidden: [FIRST], faves: [] });
});

test("permissions hold on a site's redirect off the site: the hop is not sent, the page stays, the denial recorded", async ({ context }) => {
  const hits: string[] = [];
  await context.route('https://evil.example/**', (route) => (hits.push(route.request().url()), route.fulfill({ body: 'collected' })));
  const base = recordedHn();
  // A site whose /out redirects to another origin (HN's own `goto` never does), served from its fetch.
  const handler = (request: Request) => (new URL(request.url).pathname === '/out' ? Promise.resolve(new Response(null, { status: 302, headers: { location: 'https://evil.example/collect' } })) : base.replica.handle(request));
  const site = { ...base, serve: undefined, fetch: handler, attach: (target: BrowserContext) => routeSite(target, handler, HN_ORIGIN) };
  const record = await run(context, [call('navigate', { url: NEWS }), call('navigate', { url: `${HN_ORIGIN}/out` }), call('current_url'), finish], [permissions()], site);
  expect(events(record, 'harness_denied').map(({ tool, reason }) => [tool, reason])).toEqual([
    ['navigate', `the page's redirect to https://evil.example is outside the allowed origins (${HN_ORIGIN})`],
  ]);
  expect(events(record, 'tool_result').find((event) => event.name === 'current_url')!.output).toEqual({ url: NEWS });
  expect(hits).toEqual([]);
});

test("the site's own faults hold under the request check: the page still dies at the crash fault", async ({ context }) => {
  const site = recordedHn({ faults: { crashAfter: 2 } });
  const record = await run(context, [call('navigate', { url: NEWS }), call('navigate', { url: NEWS }), finish], [permissions()], site);
  // The second page load is the one the fault keeps from its page: the page is closed under it.
  expect(events(record, 'tool_result').filter((event) => event.name === 'navigate').map((event) => event.ok)).toEqual([true, false]);
  expect(events(record, 'tool_result')[1]).toMatchObject({ kind: 'tool_error', error: expect.stringMatching(/ERR_ABORTED|closed/) });
});

test('approval asks about the kinds of action its options name, and no others', async ({ context }) => {
  const site = recordedHn({ startLoggedIn: true });
  const record = await run(context, [call('navigate', { url: chain(site, 'vote', 'hide') }), finish], [approval({ actions: ['hide'] })], site);
  expect(events(record, 'harness_approval').map(({ action, decision }) => [action, decision])).toEqual([[`hide ${SECOND}`, 'denied']]);
  expect(await marks(context, site)).toEqual({ votes: [FIRST], hidden: [], faves: [] });
  expect(() => approval({ actions: [] })).toThrow(/^layer approval: actions: /);
});

test("login signs in through the site kit: its login wall, its sign-in, and the page it names", async ({ context }) => {
  const base = recordedHn();
  const walls: string[] = [];
  const site = {
    ...base,
    loginWall: async (page: import('@playwright/test').Page) => (page.url().endsWith('/newest') ? (walls.push(page.url()), { action: `${HN_ORIGIN}/login`, fields: [] }) : undefined),
    signIn: async (target: BrowserContext, account: { username: string; password: string }) => ({ ...(await base.signIn!(target, account)), next: `${HN_ORIGIN}/item?id=${SECOND}` }),
  };
  const record = await run(context, [call('navigate', { url: `${HN_ORIGIN}/newest` }), finish], ['login'], site);
  // Read where the page is: once to notice it, once by the harness's sign_in call.
  expect(new Set(walls)).toEqual(new Set([`${HN_ORIGIN}/newest`]));
  expect(record.trace.find((event) => event.type === 'harness_auto_login')).toMatchObject({ ok: true, from: `${HN_ORIGIN}/newest`, to: `${HN_ORIGIN}/item?id=${SECOND}` });
});

test("with a store, the page's own action is filed as the page's, and the run pauses without it", async ({ context }, testInfo) => {
  const site = recordedHn({ startLoggedIn: true });
  const dir = testInfo.outputPath('store');
  const ping = async (turn: number) => {
    if (turn !== 2) return;
    const page = context.pages().at(-1)!;
    await page.evaluate((id) => void (new Image().src = (document.getElementById(`up_${id}`) as HTMLAnchorElement).href), SECOND);
    await page.waitForEvent('requestfailed', { predicate: (request) => request.url().includes('/vote?'), timeout: 5_000 });
  };
  const record = await run(context, [call('navigate', { url: NEWS }), finish], [approval({ store: { dir } })], site, ping);
  expect(record).toMatchObject({ stopReason: 'awaiting_approval', incomplete: true });
  expect(new ApprovalStore(dir).requests()).toEqual([expect.objectContaining({ action: 'vote', resource: SECOND, reason: `the page wants to vote ${SECOND}` })]);
  expect((await marks(context, site)).votes).toEqual([]);
});
