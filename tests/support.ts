import { readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { test as base, type BrowserContext, type TestInfo } from '@playwright/test';
import type { Agent } from '../src/eval/agent.ts';
import { taskAt, type SessionView, type Task } from '../src/eval/tasks.ts';
import type { Evidence } from '../src/core/task.ts';
import type { HnChange, HnSnapshot } from '../src/sites/hn/snapshot.ts';
import { resolveAll, type Verdict } from '../src/eval/postconditions.ts';
import { checkSession } from '../src/layers/verify.ts';
import { evaluate } from '../src/eval/evaluate.ts';
import { upvoteFirstPost } from '../src/sites/hn/suite.ts';
import { recordedHn } from '../src/sites/hn/site.ts';
import { setupServer } from 'msw/node';
import * as cheerio from 'cheerio';
import { strFromU8, unzipSync } from 'fflate';
import type { AttachedRunRecord } from '../src/report/types.ts';
import type { RunRecord } from '../src/core/run.ts';
import { SCRIPTED_BASE_URL, scriptedFetch } from '../src/models/scripted/endpoint.ts';
// `scripted:<name>` models, as the shell registers them for specs.
import '../src/playwright/doubles.ts';
import { createReplica, HN_ORIGIN, routeReplica, type HnReplica, type ReplicaOptionsInput } from '../src/sites/hn/index.ts';

export const referenceDir = new URL('../../shared/hn-reference/', import.meta.url).pathname;
export const TOKEN = /^[0-9a-f]{40}$/;
export const account = { username: 'harness', password: 'battery-staple-42' };

/** Plain HTTP against the replica's handler, the way a non-browser agent sees it. */
export function client(replica: HnReplica, origin = HN_ORIGIN) {
  const send = (path: string, init: RequestInit = {}, cookie?: string) =>
    replica.handle(new Request(new URL(path, origin), { ...init, headers: { ...(cookie && { cookie }), ...(init.headers as object) } }));
  const api = {
    get: (path: string, cookie?: string) => send(path, {}, cookie),
    page: async (path: string, cookie?: string) => cheerio.load(await (await send(path, {}, cookie)).text()),
    post: (path: string, form: Record<string, string>, cookie?: string) =>
      send(path, { method: 'POST', body: new URLSearchParams(form), headers: { 'content-type': 'application/x-www-form-urlencoded' } }, cookie),
    /** Logs in and answers the `user` cookie to send back. */
    async login(goto = 'news', credentials = account): Promise<string> {
      const response = await api.post('/login', { acct: credentials.username, pw: credentials.password, goto });
      const setCookie = response.headers.get('set-cookie');
      if (response.status !== 302 || !setCookie) throw new Error(`login failed: ${response.status}`);
      return setCookie.split(';')[0]!;
    },
  };
  return api;
}

/**
 * A captured front page without its `More` (the space row and the link's row): the replica serves
 * the last captured page so, as past it the list is empty. Written apart from the replica's own cut.
 */
export function withoutMore(html: string): string {
  return html.replace(/<tr class="morespace"[^>]*><\/tr><tr>[\s\S]*?class='?"?morelink[\s\S]*?<\/tr>/, '');
}

/** What a reader sees first on a page: HN's notices ("Bad login.") open the body. */
export function bodyText(html: string): string {
  return cheerio.load(html)('body').text().trim();
}

export function firstStory(replica: HnReplica) {
  const story = [...replica.capture.items.values()].find((item) => item.rank === 1);
  if (!story) throw new Error('capture has no rank-1 story');
  return story;
}

/**
 * `task` done by its own reference solution on a fresh replica in `context`'s page, straight (no
 * agent, no fixture): the task as it reads on the start (taskAt, as evaluate() takes it), what the
 * reference found, and the evidence its run gives the oracle.
 */
export async function referenceRun(context: BrowserContext, task: Task) {
  const site = recordedHn();
  await site.attach(context);
  const start = await site.snapshot();
  const instance = taskAt(task, start);
  const outcome = (await instance.reference!(await context.newPage(), site)) ?? {};
  await site.idle();
  const end = await site.snapshot();
  const evidence: Evidence<HnSnapshot, HnChange> = { start, end, diff: site.diff(start, end), user: site.account.username, answer: outcome.impossible === undefined ? outcome.answer : undefined };
  return { site, instance, outcome, evidence };
}

/** A browser test with the replica routed at the real origin in Playwright's own context. */
export const test = base.extend<{ replicaOptions: ReplicaOptionsInput; replica: HnReplica }>({
  replicaOptions: [{}, { option: true }],
  replica: async ({ replicaOptions, context }, use) => {
    const replica = createReplica(replicaOptions);
    await routeReplica(context, replica);
    await use(replica);
  },
});
export { expect } from '@playwright/test';

/**
 * The hide-then-vote path (issue 22): the model hides the story ranked 1 at the start, then votes
 * for the story that is first now; `first` is the target a task on rank 1 is bound to.
 */
export async function hideFirstThenVoteNext(site: { snapshot(): Promise<unknown> }) {
  const [first, second] = ((await site.snapshot()) as { ranking: Array<{ id: string }> }).ranking;
  const turns = [
    [{ name: 'navigate', arguments: '{"url":"https://news.ycombinator.com/news"}' }],
    [{ name: 'click', arguments: JSON.stringify({ selector: `a[href^="hide?id=${first!.id}&"]` }) }],
    [{ name: 'click', arguments: JSON.stringify({ selector: `#up_${second!.id}` }) }],
  ];
  return { first: first!, second: second!, turns };
}

/**
 * A test double: answers the given assistant turns in order, then claims failure. Records requests.
 * `beforeTurn` runs before each answer (its number from 1): a test harming the browser under the run.
 */
export function turnsDouble(turns: Array<Array<{ name: string; arguments: string }> | string>, { beforeTurn }: { beforeTurn?: (turn: number) => unknown } = {}) {
  const requests: import('../src/models/types.ts').ChatRequest[] = [];
  let index = 0;
  const model: import('../src/models/types.ts').Model = {
    id: 'test:turns-double',
    async chat(request) {
      requests.push({ ...request, messages: [...request.messages] });
      await beforeTurn?.(requests.length);
      const turn = turns[index++] ?? [{ name: 'finish', arguments: '{"success":false,"summary":"out of turns"}' }];
      const toolCalls = typeof turn === 'string' ? [] : turn.map((call, i) => ({ id: `t${index}_${i}`, ...call }));
      return { message: { content: typeof turn === 'string' ? turn : null, toolCalls }, usage: { input: 10, output: 5 } };
    },
  };
  return { model, requests };
}

/**
 * The worker each test of the blob reports in `dir` began in (Playwright's workerIndex, new for
 * every worker it starts), one entry a test: how many workers, and browsers, a run started.
 */
export function blobWorkers(dir: string): string[] {
  const events = readdirSync(dir).filter((name) => name.endsWith('.zip')).flatMap((name) => [...unzipText(readFileSync(join(dir, name))).values()]).join('\n');
  return [...events.matchAll(/"method":"onTestBegin".*"workerIndex":(\d+)/g)].map((match) => match[1]!);
}

/** Every file in a zip (a `trace.zip`, a blob report) as text, by name; zips inside are opened too. */
export function unzipText(zip: Uint8Array, prefix = ''): Map<string, string> {
  return new Map(
    Object.entries(unzipSync(zip)).flatMap(([name, bytes]) =>
      name.endsWith('.zip') ? [...unzipText(bytes, `${prefix}${name}/`)] : [[`${prefix}${name}`, strFromU8(bytes, true)] as const],
    ),
  );
}

/**
 * An OpenAI-compatible server on localhost that answers with the scripted doubles (the request's
 * model names the double): a real endpoint over real HTTP, for child runs that msw cannot reach.
 * It keeps every Authorization header it was sent.
 */
export async function serveScriptedOpenAI() {
  const authorizations: string[] = [];
  const server = createServer(async (incoming, outgoing) => {
    authorizations.push(incoming.headers.authorization ?? '');
    const chunks: Buffer[] = [];
    for await (const chunk of incoming) chunks.push(chunk as Buffer);
    const path = (incoming.url ?? '/').replace(/^\/v1/, '');
    const response = await scriptedFetch(`${SCRIPTED_BASE_URL}${path}`, { method: incoming.method, headers: { 'content-type': 'application/json' }, body: Buffer.concat(chunks) });
    outgoing.writeHead(response.status, { 'content-type': response.headers.get('content-type') ?? 'application/json' });
    outgoing.end(Buffer.from(await response.arrayBuffer()));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { baseURL: `http://127.0.0.1:${port}/v1`, authorizations, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

/**
 * An msw server for the calling file's tests: it answers what each test's handlers answer, and
 * anything else fails (a request that would have reached the network). msw patches the process's
 * fetch, and some tests set process.env, so the file's tests run one at a time.
 */
export function mswServer() {
  base.describe.configure({ mode: 'serial' });
  const server = setupServer();
  base.beforeAll(() => {
    server.listen({ onUnhandledRequest: 'error' });
    // msw gives its listeners a tee'd clone of each mocked response, and until that clone is consumed, cancelling
    // the original body never settles (mswjs/interceptors#799). The OpenAI SDK cancels error bodies before retrying.
    server.events.on('response:mocked', ({ response }) => void response.body?.cancel());
  });
  base.afterEach(() => server.resetHandlers());
  base.afterAll(() => server.close());
  return server;
}

/**
 * An attached run record for report tests: the classic task's bare overclaimer by default, with
 * `falseSuccess` and `falseFailure` derived from `claimed` and `actual` as the fixture derives them.
 */
export function attachedRunRecord(fields: Partial<Omit<AttachedRunRecord, 'test'>> & { test?: Partial<AttachedRunRecord['test']> } = {}): AttachedRunRecord {
  const { test: origin, ...rest } = fields;
  const base = {
    schemaVersion: 1 as const,
    task: 'upvote-first-post',
    agent: 'harness-eval',
    model: 'scripted:overclaimer',
    layers: 'bare',
    site: 'hn-recorded',
    claimed: true,
    actual: false,
    sideEffects: [],
    incomplete: false,
    judged: true,
    iterations: 3,
    attempts: 1,
    stopReason: 'finished' as const,
    tokens: { input: 1_000, output: 100 },
    wallMs: 1_000,
    ...rest,
  };
  const condition = rest.condition ?? { agent: base.agent, model: base.model, layers: base.layers, site: base.site };
  const test = { id: 'run', title: 'run', project: `${base.model} · ${base.layers}`, repeatEachIndex: 0, retry: 0, run: 1, ...origin };
  return { ...base, condition, falseSuccess: base.claimed && !base.actual, falseFailure: base.actual && !base.claimed, test };
}

/** One run of an agent through the evaluation, as the fixture runs it: the replica, the scripted model, the oracle; its attachments kept. */
export async function runAgent(
  context: BrowserContext,
  testInfo: TestInfo,
  agent: Agent,
  { signal, site = recordedHn(), task = upvoteFirstPost, model = 'scripted:diligent', onStart }: { signal?: AbortSignal; site?: ReturnType<typeof recordedHn>; task?: Task; model?: string; onStart?: () => Promise<void> } = {},
) {
  const attachments = new Map<string, string>();
  const result = await evaluate({
    context,
    site,
    agent,
    model,
    task,
    signal,
    onStart,
    outputDir: testInfo.outputPath('run'),
    async attach(name, body, contentType) {
      attachments.set(name, body.toString());
      await testInfo.attach(name, { body, contentType });
    },
  });
  return { result, site, attachments };
}

/** The gateway counted every model call of a foreign agent's run, with its tokens, and refused none. */
export function expectCounted(run: RunRecord) {
  base.expect(run.trace.filter((event) => event.type === 'model_request')).toHaveLength(run.iterations);
  base.expect(run.trace.filter((event) => event.type === 'model_response')).toHaveLength(run.iterations);
  base.expect(run.trace.filter((event) => event.type === 'model_request_refused' || event.type === 'model_error')).toEqual([]);
  base.expect(run.tokens.input).toBeGreaterThan(0);
  base.expect(run.tokens.output).toBeGreaterThan(0);
}

/** The task's postconditions as `verify` checks them: bound to `start`, each that checks itself run on `session`, all to hold. */
export async function sessionVerdict(task: Task, start: unknown, session: SessionView): Promise<Verdict> {
  const verdict = await checkSession(resolveAll(task.postconditions, start), session);
  if (!verdict) throw new Error(`${task.name}: no postcondition checks itself`);
  return verdict;
}
