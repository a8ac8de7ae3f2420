import { spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { BrowserContext } from '@playwright/test';
import { ApprovalStore, approvalStoreOptions, argsHash, DEFAULT_APPROVALS_DIR } from '../src/harness/approvals.ts';
import type { LayerValue } from '../src/harness/layer.ts';
import type { TraceEvent, TraceEventOf } from '../src/harness/trace.ts';
import { approval } from '../src/layers/approval.ts';
import { durable } from '../src/layers/durable.ts';
import { stall } from '../src/layers/stall.ts';
import { evaluate } from '../src/eval/evaluate.ts';
import type { RunRecord } from '../src/core/run.ts';
import type { Model } from '../src/models/types.ts';
import { runOutcome } from '../src/report/format.ts';
import { summarize } from '../src/report/summarize.ts';
import { recordedHn } from '../src/sites/hn/site.ts';
import { upvoteFirstPost } from '../src/sites/hn/suite.ts';
import { stepsDouble } from './fixtures/approval-store/steps.ts';
import { expect, attachedRunRecord, test } from './support.ts';

test.describe.configure({ timeout: 120_000 });

const FIRST = '46194762'; // rank 1 in the fixture pages
const voteSteps = [
  ['navigate', { url: 'https://news.ycombinator.com/news' }],
  ['click', { selector: '.votearrow' }],
  ['finish', { success: true, summary: 'voted' }],
] as const;

/** The test's own folder: the store, the durable file and the site's state live there. */
function folder() {
  const dir = test.info().outputPath('approvals');
  mkdirSync(dir, { recursive: true });
  return { store: join(dir, 'store'), file: join(dir, 'durable.json'), stateFile: join(dir, 'site.json') };
}

function events<T extends TraceEvent['type']>(run: RunRecord, type: T): TraceEventOf<T>[] {
  return run.trace.filter((event) => event.type === type) as TraceEventOf<T>[];
}

/** The votes the site kept (its state file is written when something changes). */
function votes(stateFile: string): string[] {
  return existsSync(stateFile) ? Object.values(JSON.parse(readFileSync(stateFile, 'utf8')).votes as Record<string, string[]>).flat() : [];
}

/** One process of the paused run (tests/fixtures/approval-store/run.ts): its run record. */
async function processRun(dirs: ReturnType<typeof folder>): Promise<RunRecord> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'tests/fixtures/approval-store/run.ts', dirs.file, dirs.stateFile, dirs.store], { stdio: ['ignore', 'pipe', 'inherit'] });
  let stdout = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  expect(await new Promise((resolve) => child.on('exit', resolve))).toBe(0);
  return JSON.parse(stdout) as RunRecord;
}

/**
 * A run paused by a first process, shared by the tests that go on from there in other processes:
 * paused once in a folder of its own, copied into each test's folder (the paths are the process's
 * arguments, so the copy is the same paused run).
 */
let pause: Promise<{ dir: string; run: RunRecord }> | undefined;
async function pausedByProcess(): Promise<{ dirs: ReturnType<typeof folder>; paused: RunRecord }> {
  pause ??= (async () => {
    const dir = test.info().outputPath('paused');
    mkdirSync(dir, { recursive: true });
    return { dir, run: await processRun({ store: join(dir, 'store'), file: join(dir, 'durable.json'), stateFile: join(dir, 'site.json') }) };
  })();
  const { dir, run } = await pause;
  const dirs = folder();
  cpSync(dir, dirname(dirs.file), { recursive: true });
  return { dirs, paused: run };
}

/** The same run in this process: with the durable file there, it resumes. */
const inProcess = (context: BrowserContext, dirs: ReturnType<typeof folder>, model: Model = stepsDouble(voteSteps), layers: LayerValue[] = [approval({ store: { dir: dirs.store } }), durable({ file: dirs.file })]) =>
  evaluate({ context, site: recordedHn({ stateFile: dirs.stateFile, startLoggedIn: true }), model, layers, task: upvoteFirstPost });

test('a vote the store holds no decision on files a request with its fields and pauses the run, incomplete, awaiting_approval', async ({ context }) => {
  const dirs = folder();
  const before = Date.now();
  const run = await inProcess(context, dirs);
  expect(run).toMatchObject({ stopReason: 'awaiting_approval', incomplete: true, claimed: false, actual: false, falseFailure: false });
  const [request] = new ApprovalStore(dirs.store).requests();
  expect(request).toEqual({
    version: 1,
    id: expect.stringMatching(/^[0-9a-f-]{36}$/),
    kind: 'action',
    task: upvoteFirstPost.prompt,
    runId: expect.any(String),
    action: 'vote',
    resource: FIRST,
    argsHash: argsHash({ selector: '.votearrow' }),
    scope: 'call',
    requestedAt: expect.any(String),
    expiresAt: expect.any(String),
    reason: `the model wants to vote ${FIRST}`,
  });
  expect(Date.parse(request!.requestedAt)).toBeGreaterThanOrEqual(before - 1000);
  expect(Date.parse(request!.expiresAt) - Date.parse(request!.requestedAt)).toBe(24 * 60 * 60 * 1000);
  expect(events(run, 'harness_approval_request')).toEqual([expect.objectContaining({ requestId: request!.id, action: 'vote', resource: FIRST })]);
  expect(votes(dirs.stateFile)).toEqual([]);
  // Kept for the resume; the report says paused, counted incomplete with its reason.
  expect(existsSync(dirs.file)).toBe(true);
  expect(runOutcome(run)).toBe('truthful failure (incomplete: paused, awaiting approval)');
  const summary = summarize([attachedRunRecord({ stopReason: 'awaiting_approval', incomplete: true })], { complete: true });
  expect(summary.cells[0]).toMatchObject({ incomplete: 1, stopReasons: { awaiting_approval: 1 } });
});

test('resumed in a new process once approved, the vote runs exactly once, through the approval path', async () => {
  const { dirs, paused } = await pausedByProcess();
  expect(paused.stopReason).toBe('awaiting_approval');
  // Still undecided: a new process pauses again on the same request, and files no second one.
  const again = await processRun(dirs);
  expect(again.stopReason).toBe('awaiting_approval');
  const store = new ApprovalStore(dirs.store);
  expect(store.requests()).toHaveLength(1);
  store.decide(store.requests()[0]!.id, 'approved', { by: 'a test' });
  const resumed = await processRun(dirs);
  expect(resumed).toMatchObject({ stopReason: 'finished', claimed: true, actual: true, falseSuccess: false, incomplete: false, sideEffects: [] });
  expect(events(resumed, 'harness_approval')).toEqual([expect.objectContaining({ tool: 'click', action: `vote ${FIRST}`, decision: 'approved', requestId: store.requests()[0]!.id })]);
  // The click ran once, by the harness on resume; the navigate before the pause was not replayed.
  expect(events(resumed, 'tool_result').map((event) => [event.name, event.ok, event.kind ?? ''])).toEqual([
    ['navigate', true, ''],
    ['click', false, 'awaiting_approval'],
    ['click', false, 'awaiting_approval'],
    ['click', true, ''],
    ['finish', true, ''],
  ]);
  expect(events(resumed, 'tool_call').filter((event) => event.name === 'click').map((event) => event.by)).toEqual(['model', 'harness', 'harness']);
  expect(votes(dirs.stateFile)).toEqual([FIRST]);
  expect(existsSync(dirs.file)).toBe(false);
});

test('answered through `harness-eval approvals` in another process, the paused run resumes and records the decision', async () => {
  const { dirs, paused } = await pausedByProcess();
  expect(paused.stopReason).toBe('awaiting_approval');
  const cli = (...args: string[]) => spawnSync(process.execPath, ['bin/harness-eval.js', 'approvals', ...args, '--dir', dirs.store], { encoding: 'utf8' });
  const [request] = new ApprovalStore(dirs.store).requests();
  expect(cli('list').stdout).toContain(`${request!.id}  pending until ${request!.expiresAt}  vote ${FIRST} (call)`);
  const approved = cli('approve', request!.id.slice(0, 8), '--by', 'on-call');
  expect(approved.status, approved.stderr).toBe(0);
  const resumed = await processRun(dirs);
  expect(resumed).toMatchObject({ stopReason: 'finished', claimed: true, actual: true, incomplete: false });
  expect(events(resumed, 'harness_approval')).toEqual([expect.objectContaining({ action: `vote ${FIRST}`, decision: 'approved', requestId: request!.id })]);
  expect(votes(dirs.stateFile)).toEqual([FIRST]);
  expect(cli('list').stdout).toContain(`${request!.id}  approved `);
});

test('denied: on resume the vote never runs, and the model is told', async ({ context }) => {
  const dirs = folder();
  expect((await inProcess(context, dirs)).stopReason).toBe('awaiting_approval');
  const store = new ApprovalStore(dirs.store);
  store.decide(store.requests()[0]!.id, 'denied');
  const resumed = await inProcess(context, dirs, stepsDouble([...voteSteps.slice(0, 2), ['finish', { success: false, summary: 'denied' }]]));
  expect(resumed).toMatchObject({ stopReason: 'finished', claimed: false, actual: false });
  expect(events(resumed, 'tool_result').filter((event) => event.name === 'click').at(-1)).toMatchObject({ ok: false, kind: 'denied' });
  expect(votes(dirs.stateFile)).toEqual([]);
});

test.describe('a decision that does not cover the call does not count', () => {
  const cases: Array<[string, (store: ApprovalStore) => void]> = [
    ['an expired one', (store) => store.grant({ kind: 'action', task: upvoteFirstPost.prompt, runId: 'any', action: 'vote', resource: FIRST, argsHash: argsHash({ selector: '.votearrow' }), scope: 'task', reason: 'ahead', expiresInMs: 1 })],
    ['one for other arguments', (store) => store.grant({ kind: 'action', task: upvoteFirstPost.prompt, runId: 'any', action: 'vote', resource: FIRST, argsHash: argsHash({ selector: `#up_${FIRST}` }), scope: 'task', reason: 'ahead' })],
    ["another run's, scoped to its run", (store) => store.grant({ kind: 'action', task: upvoteFirstPost.prompt, runId: 'another', action: 'vote', resource: FIRST, argsHash: argsHash({ selector: '.votearrow' }), scope: 'run', reason: 'ahead' })],
  ];
  for (const [name, prefill] of cases) {
    test(name, async ({ context }) => {
      const dirs = folder();
      prefill(new ApprovalStore(dirs.store));
      await new Promise((resolve) => setTimeout(resolve, 5)); // past a 1 ms expiry
      const run = await inProcess(context, dirs);
      expect(run.stopReason).toBe('awaiting_approval');
      expect(votes(dirs.stateFile)).toEqual([]);
    });
  }

  test('while a task-scoped approval of the same arguments lets the vote through with no pause', async ({ context }) => {
    const dirs = folder();
    new ApprovalStore(dirs.store).grant({ kind: 'action', task: upvoteFirstPost.prompt, runId: 'any', action: 'vote', resource: FIRST, argsHash: argsHash({ selector: '.votearrow' }), scope: 'task', reason: 'ahead' });
    const run = await inProcess(context, dirs);
    expect(run).toMatchObject({ stopReason: 'finished', claimed: true, actual: true });
    expect(events(run, 'harness_approval_request')).toEqual([]);
  });
});

test.describe('stall escalation', () => {
  const looperLayers = (dirs: ReturnType<typeof folder>) => [stall({ store: { dir: dirs.store } }), durable({ file: dirs.file })];
  const looper = (resumed: string) => {
    const steps: Array<readonly [string, object]> = [['navigate', { url: 'https://news.ycombinator.com/news' }]];
    for (let i = 0; i < 3; i++) steps.push(['get_stories', {}]);
    return stepsDouble([...steps, ['finish', { success: false, summary: resumed }]]);
  };

  test('the second stall pauses the run with a continue request; approved, the run goes on with a note', async ({ context }) => {
    const dirs = folder();
    const paused = await inProcess(context, dirs, looper('went on'), looperLayers(dirs));
    expect(paused.stopReason).toBe('awaiting_approval');
    expect(events(paused, 'harness_stall').map((event) => event.action)).toEqual(['warned', 'escalated']);
    const store = new ApprovalStore(dirs.store);
    expect(store.requests()).toEqual([expect.objectContaining({ kind: 'continue', action: 'continue' })]);
    store.decide(store.requests()[0]!.id, 'approved');
    const resumed = await inProcess(context, dirs, looper('went on'), looperLayers(dirs));
    expect(resumed).toMatchObject({ stopReason: 'finished', summary: 'went on' });
    expect(events(resumed, 'harness_stall').map((event) => event.action)).toEqual(['warned', 'escalated', 'continued']);
    expect(events(resumed, 'harness_note').some((note) => note.layer === 'stall' && /a person let the run go on/.test(note.message))).toBe(true);
  });

  test('denied, the run stops as stalled', async ({ context }) => {
    const dirs = folder();
    expect((await inProcess(context, dirs, looper('went on'), looperLayers(dirs))).stopReason).toBe('awaiting_approval');
    const store = new ApprovalStore(dirs.store);
    store.decide(store.requests()[0]!.id, 'denied');
    const resumed = await inProcess(context, dirs, looper('went on'), looperLayers(dirs));
    expect(resumed).toMatchObject({ stopReason: 'stalled', incomplete: false });
    expect(events(resumed, 'harness_stall').map((event) => event.action)).toEqual(['warned', 'escalated', 'stopped']);
  });
});

test('a store named without a folder is `approvals`, where `harness-eval approvals` looks by default', () => {
  expect(approval({ store: {} })).toBeTruthy();
  expect(approvalStoreOptions.parse({}).dir).toBe(DEFAULT_APPROVALS_DIR);
  expect(DEFAULT_APPROVALS_DIR).toBe('approvals');
});
