import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { test } from '@playwright/test';
import { Ajv2020 } from 'ajv/dist/2020.js';
import protobuf from 'protobufjs';
import { main } from '../src/cli/main.ts';
import type { TraceEvent } from '../src/core/trace.ts';
import { toTrajectory } from '../src/export/atif.ts';
import { exportReport, OTLP_FILE } from '../src/export/export.ts';
import { otlpDestination, sendOtlp, SPAN_KIND, STATUS_CODE, toOtlp } from '../src/export/otel.ts';
import { exportedRunSchema, readRuns, RUNS_DIR, type NamedRun } from '../src/export/runs.ts';
import { TRAJECTORY_STEP } from '../src/playwright/allure.ts';
import { collect, sharedRun } from './playwright-child.ts';
import { handRecord, handTrace, HAND_STARTED_AT } from './fixtures/export/hand-run.ts';
import { expect } from './support.ts';

/**
 * Each run's trace as others read it (docs/export.md): ATIF trajectories checked against Harbor's
 * schema, OTLP JSON loaded with opentelemetry-proto's own definitions, both vendored in
 * tests/fixtures/export/ (no network at test time); a collector on 127.0.0.1; Allure's steps.
 */
test.describe.configure({ timeout: 120_000 });

const fixtures = join(import.meta.dirname, 'fixtures', 'export');
const cli = 'bin/harness-eval.js';
const execFileAsync = promisify(execFile);
const readJson = (path: string) => JSON.parse(readFileSync(path, 'utf8'));

// ── The checks: Harbor's schema and validators, opentelemetry-proto's messages ─────────────────────

const atifSchema = new Ajv2020({ allErrors: true }).compile(JSON.parse(readFileSync(join(fixtures, 'atif-v1.6.schema.json'), 'utf8')));
const AGENT_ONLY = ['model_name', 'reasoning_effort', 'reasoning_content', 'tool_calls', 'metrics'];

/** What is wrong with a trajectory, by Harbor's JSON schema and then by its model validators (which JSON Schema cannot say); none when valid. */
function atifErrors(trajectory: unknown): string[] {
  if (!atifSchema(trajectory)) return atifSchema.errors!.map((error) => `${error.instancePath} ${error.message}`);
  const steps = (trajectory as { steps: Array<Record<string, any>> }).steps;
  return steps.flatMap((step, index) => {
    const calls = new Set((step.tool_calls ?? []).map((call: { tool_call_id: string }) => call.tool_call_id));
    return [
      ...(step.step_id === index + 1 ? [] : [`steps[${index}].step_id: expected ${index + 1}, got ${step.step_id}`]),
      ...(Number.isNaN(Date.parse(step.timestamp)) ? [`steps[${index}].timestamp: not ISO 8601`] : []),
      ...(step.source === 'agent' ? [] : AGENT_ONLY.filter((field) => step[field] != null).map((field) => `steps[${index}].${field}: only on agent steps`)),
      ...(step.observation?.results ?? []).flatMap((result: { source_call_id?: string }) =>
        result.source_call_id != null && !calls.has(result.source_call_id) ? [`steps[${index}]: source_call_id ${result.source_call_id} is no tool call of its step`] : [],
      ),
    ];
  });
}

const protoRoot = new protobuf.Root();
protoRoot.resolvePath = (_origin, target) => join(fixtures, 'opentelemetry-proto', target);
protoRoot.loadSync('opentelemetry/proto/collector/trace/v1/trace_service.proto').resolveAll();
const ExportTraceServiceRequest = protoRoot.lookupType('opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest');

/** OTLP/JSON's hex ids, by their length in bytes; other bytes are base64, as in proto3's JSON. */
const ID_BYTES: Record<string, number> = { traceId: 16, spanId: 8, parentSpanId: 8 };
const LONGS = new Set(['int64', 'uint64', 'fixed64', 'sfixed64', 'sint64']);

/** A JSON value as the protobuf field it claims to be, or why it is not one (OTLP/JSON: camelCase names, enums as numbers, 64-bit integers as decimal strings). */
function protoValue(field: protobuf.Field, value: unknown, path: string): unknown {
  const type = field.resolvedType;
  if (type instanceof protobuf.Type) return protoObject(type, value, path);
  if (type instanceof protobuf.Enum) {
    if (typeof value !== 'number' || !Object.values(type.values).includes(value)) throw new Error(`${path}: not a number of ${type.name}: ${JSON.stringify(value)}`);
    return value;
  }
  if (field.type === 'bytes' && ID_BYTES[field.name] !== undefined) {
    if (typeof value !== 'string' || !new RegExp(`^[0-9a-fA-F]{${ID_BYTES[field.name]! * 2}}$`).test(value)) throw new Error(`${path}: not ${ID_BYTES[field.name]} bytes in hex: ${JSON.stringify(value)}`);
    return Buffer.from(value, 'hex');
  }
  if (field.type === 'bytes') return Buffer.from(String(value), 'base64');
  if (LONGS.has(field.type)) {
    if (!(typeof value === 'string' && /^-?\d+$/.test(value)) && !Number.isInteger(value)) throw new Error(`${path}: not a 64-bit integer: ${JSON.stringify(value)}`);
    // protobufjs verifies a 64-bit integer as a number or a Long, not as text.
    return (protobuf.util.Long as unknown as { fromString(text: string, unsigned: boolean): unknown }).fromString(String(value), field.type.startsWith('u') || field.type === 'fixed64');
  }
  return value;
}

function protoObject(type: protobuf.Type, value: unknown, path: string): Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new Error(`${path}: not a ${type.name} object`);
  return Object.fromEntries(
    Object.entries(value).map(([key, item]) => {
      const field = type.fields[key];
      if (!field) throw new Error(`${path}.${key}: no such field of ${type.name}`);
      if (!field.repeated) return [key, protoValue(field, item, `${path}.${key}`)];
      if (!Array.isArray(item)) throw new Error(`${path}.${key}: not a list`);
      return [key, item.map((one, index) => protoValue(field, one, `${path}.${key}[${index}]`))];
    }),
  );
}

/**
 * An ExportTraceServiceRequest in OTLP/JSON, loaded as a collector loads it: every key a field of
 * its message, every value of its field's type (protobufjs's verify), then encoded to protobuf and
 * decoded back. Answers the decoded request, ids in hex and 64-bit integers as strings.
 */
function loadOtlpJson(json: unknown) {
  const message = protoObject(ExportTraceServiceRequest, json, 'request');
  const problem = ExportTraceServiceRequest.verify(message);
  if (problem) throw new Error(problem);
  const decoded = ExportTraceServiceRequest.decode(ExportTraceServiceRequest.encode(ExportTraceServiceRequest.fromObject(message)).finish());
  const plain = ExportTraceServiceRequest.toObject(decoded, { longs: String, enums: Number, bytes: String });
  return JSON.parse(JSON.stringify(plain), (key, item) => (ID_BYTES[key] !== undefined && typeof item === 'string' ? Buffer.from(item, 'base64').toString('hex') : item)) as {
    resourceSpans: Array<{ resource: { attributes: Attribute[] }; scopeSpans: Array<{ scope: { name: string }; spans: LoadedSpan[] }> }>;
  };
}

interface Attribute {
  key: string;
  value: { stringValue?: string; intValue?: string; doubleValue?: number; boolValue?: boolean };
}
interface LoadedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: Attribute[];
  events?: Array<{ timeUnixNano: string; name: string; attributes: Attribute[] }>;
  status?: { code?: number; message?: string };
}

/** A span's attributes as plain values: strings, numbers (ints parsed), booleans. */
const attributesOf = (attributes: Attribute[]) =>
  Object.fromEntries(attributes.map(({ key, value }) => [key, value.intValue !== undefined ? Number(value.intValue) : (value.stringValue ?? value.doubleValue ?? value.boolValue)]));

const spansOf = (request: ReturnType<typeof loadOtlpJson>) => request.resourceSpans.flatMap((resource) => resource.scopeSpans.flatMap((scope) => scope.spans));

// ── A run made by hand, for what a scripted double never does ──────────────────────────────────────

const START_MS = Date.parse(HAND_STARTED_AT);
const PRICES = { 'openai:gpt-4o-mini': { input: 0.15, output: 0.6 } };

function handRun(fields: Record<string, unknown> = {}, trace: unknown[] = handTrace()): NamedRun {
  return { name: 'hand-run', run: exportedRunSchema.parse({ ...handRecord(fields), trace, startedAt: HAND_STARTED_AT }), startMs: START_MS };
}

test('a trace becomes ATIF steps Harbor\'s schema accepts: the task, model steps with their tool results, tokens and cost, the rest as system steps', () => {
  const trajectory = toTrajectory(handRun(), PRICES);
  expect(atifErrors(trajectory)).toEqual([]);
  expect(trajectory.steps.map(({ step_id, source, message }) => `${step_id} ${source}: ${message}`)).toEqual([
    '1 user: Upvote the first Hacker News post.',
    '2 system: attempt_start: {}',
    '3 agent: Looking at the front page.',
    '4 system: harness_denied: {"layer":"permissions","callId":"c2","tool":"click","reason":"votes need approval"}',
    '5 system: harness called sign_in({})',
    '6 system: model error (server_error): 502 from the model',
    '7 agent: ',
    '8 system: the harness or a program called get_stories()',
    '9 system: run_end: {"claimed":true,"stopReason":"timeout","iterations":2}',
  ]);
  const [user, , asked, , harnessCall, modelError, finish, orphan] = trajectory.steps;
  expect(user!.timestamp).toBe(HAND_STARTED_AT);
  expect(asked).toMatchObject({
    timestamp: '2026-01-02T03:04:05.110Z',
    // Arguments that are no JSON object are kept as their text.
    tool_calls: [
      { tool_call_id: 'c1', function_name: 'navigate', arguments: { url: 'https://news.ycombinator.com/news' } },
      { tool_call_id: 'c2', function_name: 'click', arguments: { input: '#up_1' } },
    ],
    observation: { results: [{ source_call_id: 'c1', content: '{"title":"Hacker News"}' }, { source_call_id: 'c2', content: 'error (denied): votes need approval' }] },
    metrics: { prompt_tokens: 1000, completion_tokens: 50, cost_usd: (1000 * 0.15 + 50 * 0.6) / 1e6 },
    extra: { attempt: 1, iteration: 1, failed_tool_calls: ['c2'] },
  });
  expect(harnessCall).toMatchObject({ observation: { results: [{ content: '{"user":"harness"}' }] }, extra: { tool_call_id: 'h1' } });
  expect(modelError!.extra).toMatchObject({ error: 'server_error' });
  // Unknown tokens are no tokens and no cost; a call the run ended before answering has no result.
  expect(finish).not.toHaveProperty('metrics');
  expect(finish).not.toHaveProperty('observation');
  expect(orphan).toMatchObject({ observation: { results: [{ content: 'error (timeout): no stories' }] }, extra: { tool_call_id: 'p1', failed_tool_calls: ['p1'] } });
  expect(trajectory).toMatchObject({
    schema_version: 'ATIF-v1.6',
    session_id: 'hand-run',
    agent: { name: 'harness-eval', model_name: 'openai:gpt-4o-mini', extra: { layers: 'permissions' } },
    // The run's own cost, as recorded; its tokens, as counted.
    final_metrics: { total_prompt_tokens: 1000, total_completion_tokens: 100, total_cost_usd: 0.01, total_steps: 9 },
    extra: { reward: 0, claimed: true, actual: false, false_success: true, incomplete: true, stop_reason: 'timeout', summary: 'Upvoted.' },
  });
  expect(trajectory.extra.outcome).toMatch(/^false success \(/);
});

test('ATIF: the reward is the oracle\'s verdict (null unjudged or left out), the total cost the steps\' without a recorded one, and a run with no trace still has its task', () => {
  expect(toTrajectory(handRun({ actual: true, claimed: true })).extra.reward).toBe(1);
  expect(toTrajectory(handRun({ judged: false })).extra.reward).toBeNull();
  expect(toTrajectory(handRun({ excluded: { reason: 'error', detail: 'the site did not start' } })).extra).toMatchObject({ reward: null, excluded: { reason: 'error' } });
  const unrecorded = toTrajectory(handRun({ cost: undefined, tokens: { input: null, output: null } }), PRICES);
  expect(unrecorded.final_metrics).toEqual({ total_cost_usd: (1000 * 0.15 + 50 * 0.6) / 1e6, total_steps: 9 });
  // A user's agent, no prices: no cost anywhere.
  const bare = toTrajectory(handRun({ agent: 'agent.py', cost: undefined, tokens: { input: 5, output: 6, cachedInput: 2 } }, []));
  expect(atifErrors(bare)).toEqual([]);
  expect(bare.agent.version).toBe('unknown');
  expect(bare.steps).toEqual([{ step_id: 1, timestamp: HAND_STARTED_AT, source: 'user', message: 'upvote-first-post' }]);
  expect(bare.final_metrics).toEqual({ total_prompt_tokens: 5, total_completion_tokens: 6, total_cached_tokens: 2, total_steps: 1 });
});

test('a trace becomes OTLP JSON that opentelemetry-proto loads: an invoke_agent span, a chat span per model call and an execute_tool span per tool call under it', () => {
  const request = toOtlp(handRun(), PRICES);
  const loaded = loadOtlpJson(request);
  expect(attributesOf(loaded.resourceSpans[0]!.resource.attributes)).toMatchObject({ 'service.name': 'harness-eval' });
  const [agent, ...children] = spansOf(loaded);
  const nanos = (ms: number) => String(BigInt(START_MS + ms) * 1_000_000n);
  expect(agent).toMatchObject({ name: 'invoke_agent harness-eval', kind: SPAN_KIND.internal, startTimeUnixNano: nanos(0), endTimeUnixNano: nanos(1020), status: { code: STATUS_CODE.error } });
  expect(agent!.parentSpanId ?? '').toBe('');
  expect(attributesOf(agent!.attributes)).toMatchObject({
    'gen_ai.operation.name': 'invoke_agent',
    'gen_ai.provider.name': 'openai',
    'gen_ai.request.model': 'gpt-4o-mini',
    'gen_ai.agent.name': 'harness-eval',
    'gen_ai.conversation.id': 'hand-run',
    'gen_ai.usage.input_tokens': 1000,
    'gen_ai.usage.output_tokens': 100,
    'error.type': 'timeout',
    'harness_eval.reward': 0,
    'harness_eval.false_success': true,
    'harness_eval.cost_usd': 0.01,
  });
  // The harness's other events are the agent span's events.
  expect(agent!.events!.map((event) => event.name)).toEqual(['attempt_start', 'harness_denied', 'run_end']);
  expect(attributesOf(agent!.events![1]!.attributes)['harness_eval.event']).toBe('{"layer":"permissions","callId":"c2","tool":"click","reason":"votes need approval"}');
  for (const span of children) expect(span).toMatchObject({ traceId: agent!.traceId, parentSpanId: agent!.spanId });
  expect(new Set(children.map((span) => span.spanId)).size).toBe(children.length);
  expect(children.map((span) => span.name)).toEqual([
    'chat gpt-4o-mini',
    'execute_tool navigate',
    'execute_tool click',
    'execute_tool sign_in',
    'chat gpt-4o-mini',
    'chat gpt-4o-mini',
    'execute_tool finish',
    'execute_tool get_stories',
  ]);
  const [chat, navigate, click, signIn, failedChat, unknownChat, finish, orphan] = children;
  expect(chat).toMatchObject({ kind: SPAN_KIND.client, startTimeUnixNano: nanos(10), endTimeUnixNano: nanos(110) });
  expect(attributesOf(chat!.attributes)).toMatchObject({
    'gen_ai.operation.name': 'chat',
    'gen_ai.provider.name': 'openai',
    'gen_ai.request.model': 'gpt-4o-mini',
    'gen_ai.usage.input_tokens': 1000,
    'gen_ai.usage.output_tokens': 50,
    'harness_eval.cost_usd': (1000 * 0.15 + 50 * 0.6) / 1e6,
  });
  expect(JSON.parse(attributesOf(chat!.attributes)['gen_ai.output.messages'] as string)).toEqual([
    {
      role: 'assistant',
      parts: [
        { type: 'text', content: 'Looking at the front page.' },
        { type: 'tool_call', id: 'c1', name: 'navigate', arguments: '{"url":"https://news.ycombinator.com/news"}' },
        { type: 'tool_call', id: 'c2', name: 'click', arguments: '#up_1' },
      ],
    },
  ]);
  expect(navigate).toMatchObject({ kind: SPAN_KIND.internal, startTimeUnixNano: nanos(120), endTimeUnixNano: nanos(300) });
  expect(attributesOf(navigate!.attributes)).toMatchObject({ 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'navigate', 'gen_ai.tool.call.id': 'c1', 'gen_ai.tool.type': 'function', 'gen_ai.tool.call.result': '{"title":"Hacker News"}' });
  expect(click!.status).toEqual({ code: STATUS_CODE.error, message: 'error (denied): votes need approval' });
  expect(attributesOf(click!.attributes)).toMatchObject({ 'error.type': 'denied' });
  expect(attributesOf(click!.attributes)).not.toHaveProperty('gen_ai.tool.call.result');
  expect(attributesOf(signIn!.attributes)).toMatchObject({ 'harness_eval.tool.by': 'harness' });
  // A model error's call began at its request.
  expect(failedChat).toMatchObject({ startTimeUnixNano: nanos(410), endTimeUnixNano: nanos(900), status: { code: STATUS_CODE.error, message: '502 from the model' } });
  expect(attributesOf(failedChat!.attributes)).toMatchObject({ 'error.type': 'server_error' });
  expect(attributesOf(unknownChat!.attributes)).not.toHaveProperty('gen_ai.usage.input_tokens');
  expect(attributesOf(unknownChat!.attributes)).not.toHaveProperty('harness_eval.cost_usd');
  expect(finish).toMatchObject({ startTimeUnixNano: nanos(1005), endTimeUnixNano: nanos(1005) });
  // A result whose call the trace lacks began its own time before it.
  expect(orphan).toMatchObject({ startTimeUnixNano: nanos(1005), endTimeUnixNano: nanos(1010), status: { code: STATUS_CODE.error } });
  expect(attributesOf(orphan!.attributes)).toMatchObject({ 'gen_ai.tool.name': 'get_stories', 'error.type': 'timeout' });
  // The same run exported again is the same trace: a backend keeps it once.
  expect(toOtlp(handRun(), PRICES)).toEqual(request);
  expect(spansOf(loadOtlpJson(toOtlp({ ...handRun(), name: 'another' }))).map((span) => span.traceId)).not.toContain(agent!.traceId);
});

test('the checks check: Harbor\'s schema and validators refuse a bad trajectory, and the OTLP loader takes the upstream example and refuses a bad request', () => {
  const good = toTrajectory(handRun());
  expect(atifErrors({ ...good, steps: good.steps.map((step) => ({ ...step, reward: 1 })) })[0]).toMatch(/must NOT have additional properties/);
  expect(atifErrors({ ...good, steps: [good.steps[1], good.steps[0]] })).toContain('steps[0].step_id: expected 1, got 2');
  expect(atifErrors({ ...good, steps: [{ ...good.steps[1], step_id: 1, tool_calls: [] }] })).toEqual(['steps[0].tool_calls: only on agent steps']);
  expect(atifErrors({ ...good, steps: [{ ...good.steps[0], source: 'system', metrics: {} }] })).toEqual(['steps[0].metrics: only on agent steps']);
  expect(atifErrors({ ...good, steps: [{ ...good.steps[2], step_id: 1, observation: { results: [{ source_call_id: 'c9', content: '' }] } }] })).toEqual(['steps[0]: source_call_id c9 is no tool call of its step']);

  const example = loadOtlpJson(JSON.parse(readFileSync(join(fixtures, 'opentelemetry-proto', 'examples', 'trace.json'), 'utf8')));
  expect(spansOf(example)[0]).toMatchObject({ name: "I'm a server span", kind: 2, spanId: 'eee19b7ec3c1b174', startTimeUnixNano: '1544712660000000000' });
  const request = toOtlp(handRun());
  const span = request.resourceSpans[0]!.scopeSpans[0]!.spans[0]!;
  const withSpan = (changed: object) => ({ resourceSpans: [{ ...request.resourceSpans[0], scopeSpans: [{ ...request.resourceSpans[0]!.scopeSpans[0], spans: [{ ...span, ...changed }] }] }] });
  expect(() => loadOtlpJson(withSpan({ spanID: span.spanId }))).toThrow(/spanID: no such field of Span/);
  expect(() => loadOtlpJson(withSpan({ traceId: span.spanId }))).toThrow(/traceId: not 16 bytes in hex/);
  expect(() => loadOtlpJson(withSpan({ kind: 'SPAN_KIND_INTERNAL' }))).toThrow(/kind: not a number of SpanKind/);
  expect(() => loadOtlpJson(withSpan({ startTimeUnixNano: '1.5e18' }))).toThrow(/startTimeUnixNano: not a 64-bit integer/);
  expect(() => loadOtlpJson(withSpan({ name: 7 }))).toThrow(/name: string expected/);
});

// ── The report folder and the command ─────────────────────────────────────────────────────────────

/** A report folder with these runs in runs/, by name. */
/** A report folder whose run journal holds `runs`, each in a file of its name, as the fixture keeps them. */
function reportWith(runs: Record<string, unknown>): string {
  const dir = mkdtempSync(test.info().outputPath('report-'));
  mkdirSync(join(dir, RUNS_DIR));
  for (const [name, run] of Object.entries(runs)) writeFileSync(join(dir, RUNS_DIR, `${name}.json`), JSON.stringify({ attached: run, returned: {} }));
  return dir;
}

/** `harness-eval …` in this process: its exit code and what it printed. */
async function harnessEval(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const log = console.log;
  const error = console.error;
  console.log = (line: string) => out.push(line);
  console.error = (line: string) => err.push(line);
  try {
    return { code: await main(args), out: out.join('\n'), err: err.join('\n') };
  } finally {
    console.log = log;
    console.error = error;
  }
}

test('readRuns: each run of the journal named by its task, cell and trial, events of a later version left out; a run\'s start is its startedAt, else its file\'s time less its wall time', () => {
  const { startedAt: _startedAt, ...withoutStart } = handRun().run;
  const second = { ...withoutStart, test: { ...withoutStart.test, run: 2 } };
  const dir = reportWith({ b: second, a: { ...handRecord(), trace: handTrace(), startedAt: HAND_STARTED_AT } });
  utimesSync(join(dir, RUNS_DIR, 'b.json'), new Date(START_MS + 60_000), new Date(START_MS + 60_000));
  const runs = readRuns(dir);
  expect(runs.map(({ name, startMs }) => ({ name, startMs }))).toEqual([
    { name: 'upvote-first-post__harness-eval__openai-gpt-4o-mini__permissions__hn-recorded__1', startMs: START_MS },
    { name: 'upvote-first-post__harness-eval__openai-gpt-4o-mini__permissions__hn-recorded__2', startMs: START_MS + 60_000 - withoutStart.wallMs },
  ]);
  expect(runs[0]!.run.trace.map((event: TraceEvent) => event.type)).not.toContain('from_a_later_version');
  expect(runs[0]!.run.trace).toHaveLength(handTrace().length - 1);
});

test('runs are named by task, cell and trial as the report names them: readable, safe as file names, unique however their names read', () => {
  const record = (fields: Record<string, unknown>, test: Record<string, unknown>, trace: unknown[] = handTrace()) => ({ ...handRecord({ ...fields, test: { ...handRecord().test, ...test } }), trace });
  const todo = (startLoggedIn: boolean) => ({ site: 'todo', condition: { agent: 'harness-eval', model: 'openai:gpt-4o-mini', layers: 'permissions', site: { site: 'todo', startLoggedIn } } });
  const nop = { agent: 'nop', layers: '-', condition: { agent: { name: 'nop' }, model: 'openai:gpt-4o-mini', layers: null, site: 'hn-recorded' } };
  // Two cells whose names differ only where a file name cannot tell them apart.
  const colon = { model: 'a:b', condition: { agent: 'harness-eval', model: 'a:b', layers: 'permissions', site: 'hn-recorded' } };
  const dash = { model: 'a-b', condition: { agent: 'harness-eval', model: 'a-b', layers: 'permissions', site: 'hn-recorded' } };
  const dir = reportWith({
    r1: record(todo(true), { id: 'x', title: 'b' }),
    r2: record(todo(true), { id: 'y', title: 'a' }),
    r3: record(todo(false), { id: 'z', title: 'a' }),
    r4: record(nop, { id: 'n' }, handTrace().filter((event) => !String(event.type).startsWith('model_'))),
    r5: record(colon, { id: 'c' }),
    r6: record(dash, { id: 'd' }),
  });
  const runs = readRuns(dir);
  const named = Object.fromEntries(runs.map(({ name, run }) => [run.test.id, name]));
  // A site by its setting, as the report names it; trials in their tests' order; no model, no layers: none.
  expect(named).toMatchObject({
    y: 'upvote-first-post__harness-eval__openai-gpt-4o-mini__permissions__todo-startLoggedIn__1',
    x: 'upvote-first-post__harness-eval__openai-gpt-4o-mini__permissions__todo-startLoggedIn__2',
    z: 'upvote-first-post__harness-eval__openai-gpt-4o-mini__permissions__todo__1',
    n: 'upvote-first-post__nop__none__none__hn-recorded__1',
    c: expect.stringMatching(/^upvote-first-post__harness-eval__a-b__permissions__hn-recorded__1-[0-9a-f]{6}$/),
    d: expect.stringMatching(/^upvote-first-post__harness-eval__a-b__permissions__hn-recorded__1-[0-9a-f]{6}$/),
  });
  expect(new Set(Object.values(named)).size).toBe(runs.length);
  for (const name of Object.values(named)) expect(name).toMatch(/^[A-Za-z0-9][A-Za-z0-9._-]*$/);
  // In their names' order, the same from one export to the next.
  expect(runs.map(({ name }) => name)).toEqual(Object.values(named).sort());
  expect(readRuns(dir).map(({ name }) => name)).toEqual(runs.map(({ name }) => name));
});

test("a command agent's ATIF steps carry what the gateway and MCP saw: each call of its model answered, its own MCP calls as steps", () => {
  let seq = 0;
  const at = (iteration: number, atMs: number, event: Record<string, unknown>) => ({ seq: ++seq, attempt: 1, iteration, atMs, ...event });
  const user = { role: 'user', text: 'Upvote the first post.', chars: 22 };
  const asked = { role: 'assistant', text: 'browser_navigate({"url":"https://news.ycombinator.com/news"}) read_page({})', chars: 74 };
  const trace = [
    at(0, 0, { type: 'run_start', task: 'Upvote the first post.', model: 'openai:gpt-4o-mini', layers: [] }),
    at(0, 1, { type: 'attempt_start' }),
    at(1, 10, { type: 'model_request', messages: 1, tools: 2, sent: [user] }),
    at(1, 60, { type: 'model_response', content: null, toolCalls: [{ id: 'call_a', name: 'browser_navigate', arguments: '{"url":"https://news.ycombinator.com/news"}' }, { id: 'call_b', name: 'read_page', arguments: '{}' }], usage: { input: 100, output: 10 }, ms: 50 }),
    // The agent relays its model's call over MCP (its arguments as JSON, spaced otherwise), then makes one of its own.
    at(1, 70, { type: 'tool_call', callId: 'mcp-1', name: 'browser_navigate', arguments: '{ "url": "https://news.ycombinator.com/news" }', by: 'agent' }),
    at(1, 200, { type: 'tool_result', callId: 'mcp-1', name: 'browser_navigate', ok: true, output: { text: '- Page Title: Hacker News' }, ms: 130 }),
    at(1, 210, { type: 'tool_call', callId: 'mcp-2', name: 'browser_snapshot', arguments: '{}', by: 'agent' }),
    at(1, 260, { type: 'tool_result', callId: 'mcp-2', name: 'browser_snapshot', ok: true, output: { text: '- link "upvote" [ref=e5]' }, ms: 50 }),
    // What it told its model of both, through the gateway.
    at(2, 270, { type: 'model_request', messages: 4, tools: 2, sent: [user, asked, { role: 'tool', text: 'call_a: navigated', chars: 17 }, { role: 'tool', text: 'call_b: - link "upvote" [ref=e5] …', chars: 900 }] }),
    at(2, 300, { type: 'model_response', content: 'Done.', toolCalls: [], usage: { input: 200, output: 5 }, ms: 30 }),
    at(2, 310, { type: 'run_end', claimed: true, stopReason: 'finished', iterations: 2 }),
  ];
  const trajectory = toTrajectory(handRun({ agent: 'py', layers: '-' }, trace));
  expect(atifErrors(trajectory)).toEqual([]);
  expect(trajectory.steps.map(({ step_id, source, message }) => `${step_id} ${source}: ${message}`)).toEqual([
    '1 user: Upvote the first post.',
    '2 system: attempt_start: {}',
    '3 agent: ',
    '4 system: agent called browser_snapshot({})',
    '5 agent: Done.',
    '6 system: run_end: {"claimed":true,"stopReason":"finished","iterations":2}',
  ]);
  expect(trajectory.steps[2]!.observation).toEqual({
    results: [
      { source_call_id: 'call_a', content: '{"text":"- Page Title: Hacker News"}' },
      { source_call_id: 'call_b', content: '- link "upvote" [ref=e5] …' },
    ],
  });
  expect(trajectory.steps[3]!.observation).toEqual({ results: [{ content: '{"text":"- link \\"upvote\\" [ref=e5]"}' }] });
});

test('export\'s bad arguments and folders are one line naming them, exit status 2', async () => {
  const good = reportWith({ run: handRun().run });
  const prices = join(good, 'prices.json');
  writeFileSync(prices, JSON.stringify({ 'openai:gpt-4o-mini': { input: -1, output: 1 } }));
  const cases: Array<[string[], RegExp]> = [
    [['export', good], /^harness-eval: export: usage: harness-eval export --format atif\|otel REPORT_DIR/],
    [['export', '--format', 'atif'], /^harness-eval: export: usage:/],
    [['export', '--format', 'atif', good, good], /^harness-eval: export: usage:/],
    [['export', '--format', 'harbor', good], /^harness-eval: export: --format: expected atif or otel, got "harbor"$/],
    [['export', '--format', 'atif', '--output', 'x', good], /^harness-eval: Unknown option '--output'/],
    [['export', '--format', 'atif', join(good, 'nowhere')], /^harness-eval: export: .*nowhere: no such report folder$/],
    [['export', '--format', 'atif', join(good, RUNS_DIR)], /^harness-eval: export: .*runs: no runs\/ folder of run records in it \(the reporter keeps each run's record and trace there\)$/],
    [['export', '--format', 'atif', reportWith({})], /^harness-eval: export: .*runs: no run records \(\*\.json\) in it$/],
    [['export', '--format', 'atif', reportWith({ broken: { ...handRun().run, claimed: 'yes' } })], /^harness-eval: export: .*broken\.json: attached\.claimed: Invalid input: expected boolean, received string$/],
    [['export', '--format', 'atif', '--prices', prices, good], /^harness-eval: export: --prices .*prices\.json: openai:gpt-4o-mini\.input: Too small: expected number to be >=0$/],
  ];
  for (const [args, line] of cases) {
    const result = await harnessEval(...args);
    expect(result.err, args.join(' ')).toMatch(line);
    expect(result.err.split('\n'), args.join(' ')).toHaveLength(1);
    expect(result.code, args.join(' ')).toBe(2);
  }
});

test('export --prices: each model step its cost, from a price table as the reporter takes it', async () => {
  const folder = reportWith({ run: handRun({ cost: undefined }).run });
  const prices = join(folder, 'prices.json');
  writeFileSync(prices, JSON.stringify(PRICES));
  const out = join(folder, 'trajectories');
  expect(await harnessEval('export', '--format', 'atif', '--prices', prices, '--out', out, folder)).toEqual({ code: 0, out: `harness-eval: 1 trajectory (ATIF) in ${out}`, err: '' });
  const [run] = readRuns(folder);
  const trajectory = readJson(join(out, run!.name, 'trajectory.json'));
  expect(trajectory.steps.map((step: { metrics?: { cost_usd?: number } }) => step.metrics?.cost_usd).filter((usd: unknown) => usd !== undefined)).toEqual([(1000 * 0.15 + 50 * 0.6) / 1e6]);
  expect(trajectory.final_metrics.total_cost_usd).toBe((1000 * 0.15 + 50 * 0.6) / 1e6);
});

/** A collector on 127.0.0.1: what it was sent, and its answer (200, unless told otherwise). */
async function collector(status = 200) {
  const received: Array<{ method: string; url: string; headers: IncomingHttpHeaders; body: string }> = [];
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => {
      received.push({ method: request.method!, url: request.url!, headers: request.headers, body });
      response.writeHead(status, { 'content-type': 'application/json' }).end(status === 200 ? '{}' : '{"code":3,"message":"bad request"}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, received, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

test('sending: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as it is, with its headers; a refusal, an unreachable collector and a bad URL are one line each', async () => {
  const good = collector();
  const refusing = collector(400);
  const [ok, no] = await Promise.all([good, refusing]);
  try {
    const destination = otlpDestination({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${ok.url}/custom`, OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9/unused', OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Bearer%20abc, x-team = evals', OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'x-team=traces' })!;
    expect(destination).toEqual({ url: `${ok.url}/custom`, headers: { authorization: 'Bearer abc', 'x-team': 'traces' } });
    await sendOtlp([toOtlp(handRun())], destination);
    expect(ok.received).toHaveLength(1);
    expect(ok.received[0]).toMatchObject({ method: 'POST', url: '/custom', headers: { authorization: 'Bearer abc', 'x-team': 'traces', 'content-type': 'application/json' } });
    expect(JSON.parse(ok.received[0]!.body)).toEqual(toOtlp(handRun()));
    // A trailing slash on the base endpoint is not doubled.
    expect(otlpDestination({ OTEL_EXPORTER_OTLP_ENDPOINT: `${ok.url}/` })).toEqual({ url: `${ok.url}/v1/traces`, headers: {} });
    expect(otlpDestination({})).toBeUndefined();
    await expect(sendOtlp([toOtlp(handRun())], { url: `${no.url}/v1/traces`, headers: {} })).rejects.toThrow(`export: ${no.url}/v1/traces answered 400: {"code":3,"message":"bad request"}`);
  } finally {
    await Promise.all([ok.close(), no.close()]);
  }
  const gone = await collector();
  await gone.close();
  await expect(sendOtlp([toOtlp(handRun())], { url: `${gone.url}/v1/traces`, headers: {} })).rejects.toThrow(`export: ${gone.url}/v1/traces: could not send the traces (ECONNREFUSED)`);
  expect(() => otlpDestination({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' })).toThrow('export: OTEL_EXPORTER_OTLP_ENDPOINT: not an http(s) URL: "collector:4318"');
  expect(() => otlpDestination({ OTEL_EXPORTER_OTLP_ENDPOINT: ok.url, OTEL_EXPORTER_OTLP_HEADERS: 'token' })).toThrow('export: OTEL_EXPORTER_OTLP_HEADERS: expected key=value pairs separated by commas, got "token"');
  // A bad endpoint fails before any file is written.
  const folder = reportWith({ run: handRun().run });
  await expect(exportReport({ format: 'otel', folder, env: { OTEL_EXPORTER_OTLP_ENDPOINT: 'nowhere' } })).rejects.toThrow('export: OTEL_EXPORTER_OTLP_ENDPOINT: not an http(s) URL: "nowhere"');
  expect(readdirSync(folder)).toEqual([RUNS_DIR]);
});

// ── Real runs, exported by the command ────────────────────────────────────────────────────────────

/** The overclaimer bare (a false success) and with verify and login (a success), and the run made by hand, run once by a child Playwright for the tests below. */
const childRun = sharedRun('harness-eval-export-', ['test', '-c', 'tests/fixtures/export/playwright.config.ts']);

interface RealRecord {
  model: string;
  falseSuccess: boolean;
  actual: boolean;
  test: { title: string };
  trace: Array<Record<string, any>>;
}

/**
 * The child run's report folder, its runs in the run journal (runs/) as the fixture kept them:
 * those `harness.run()` made, not the one the spec attached by hand. Answers the folder and the
 * journal's records by run name, as attached, the overclaimer's two runs apart.
 */
async function realReport() {
  const { dir, env, child } = await childRun();
  expect(child.code, child.stdout).toBe(0);
  const attached = new Map<string, RealRecord>();
  for (const { result } of collect(readJson(env.JSON_OUT))) {
    for (const attachment of result.attachments.filter((one: { name: string }) => one.name === 'harness-run.json')) {
      const record = JSON.parse(Buffer.from(attachment.body, 'base64').toString('utf8'));
      attached.set(`${record.test.id}-${record.test.run}`, record);
    }
  }
  const records = new Map(readRuns(env.REPORT_DIR).map(({ name, run }) => [name, attached.get(`${run.test.id}-${run.test.run}`)!] as const));
  expect(attached.size).toBe(3);
  expect(records.size).toBe(2);
  const scripted = [...records].filter(([, record]) => record.model === 'scripted:overclaimer');
  expect(scripted.map(([, record]) => record.falseSuccess).sort()).toEqual([false, true]);
  // Named by what they are: the false success is found by its name, without opening a file.
  expect(Object.fromEntries(scripted.map(([name, record]) => [name, record.falseSuccess]))).toEqual({
    'upvote-first-post__harness-eval__scripted-overclaimer__bare__hn-recorded__1': true,
    'upvote-first-post__harness-eval__scripted-overclaimer__verify-login__hn-recorded__1': false,
  });
  return { dir, reports: env.REPORT_DIR, attached, records, scripted };
}

test('harness-eval export --format atif: a trajectory.json per real run that Harbor\'s schema accepts, the oracle\'s verdict as its reward', async () => {
  const { reports, records, scripted } = await realReport();
  const { stdout } = await execFileAsync(process.execPath, [cli, 'export', '--format', 'atif', reports]);
  expect(stdout).toBe(`harness-eval: 2 trajectories (ATIF) in ${join(reports, 'atif')}\n`);
  for (const name of records.keys()) expect(atifErrors(readJson(join(reports, 'atif', name, 'trajectory.json'))), name).toEqual([]);
  for (const [name, record] of scripted) {
    const trajectory = readJson(join(reports, 'atif', name, 'trajectory.json'));
    expect(trajectory.extra).toMatchObject({ reward: record.actual ? 1 : 0, outcome: record.falseSuccess ? 'false success' : 'success' });
    expect(trajectory.steps[0]).toMatchObject({ source: 'user', message: 'Upvote the first Hacker News post.' });
    // A model step per model call, with its tokens; each tool call of it answered in its observation.
    const responses = record.trace.filter((event) => event.type === 'model_response');
    const agentSteps = trajectory.steps.filter((step: { source: string }) => step.source === 'agent');
    expect(agentSteps.map((step: any) => step.metrics)).toEqual(responses.map((event) => ({ prompt_tokens: event.usage.input, completion_tokens: event.usage.output })));
    for (const step of agentSteps) expect(step.observation.results.map((result: any) => result.source_call_id)).toEqual(step.tool_calls.map((call: any) => call.tool_call_id));
  }
  const verified = scripted.find(([, record]) => !record.falseSuccess)![0];
  const messages = readJson(join(reports, 'atif', verified, 'trajectory.json')).steps.map((step: { message: string }) => step.message);
  expect(messages).toContain('harness called sign_in({})');
  expect(messages.some((message: string) => message.startsWith('harness_verification: {"ok":true'))).toBe(true);
});

test('harness-eval export --format otel: OTLP JSON of the real runs that opentelemetry-proto loads, sent to OTEL_EXPORTER_OTLP_ENDPOINT', async () => {
  const { dir, reports, records } = await realReport();
  const otlp = await collector();
  try {
    const out = join(dir, 'elsewhere');
    const { stdout } = await execFileAsync(process.execPath, [cli, 'export', '--format', 'otel', reports, '--out', out], { env: { ...process.env, OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url } });
    expect(stdout).toBe(`harness-eval: 2 traces (OTLP JSON) in ${join(out, OTLP_FILE)}, sent to ${otlp.url}/v1/traces\n`);
    const lines = readFileSync(join(out, OTLP_FILE), 'utf8').trimEnd().split('\n');
    expect(otlp.received.map(({ method, url, headers, body }) => ({ method, url, type: headers['content-type'], body }))).toEqual(lines.map((body) => ({ method: 'POST', url: '/v1/traces', type: 'application/json', body })));
    // One line a run, in the order of their names.
    const names = [...records.keys()].sort();
    lines.forEach((line, index) => {
      const record = records.get(names[index]!)!;
      const [agent, ...children] = spansOf(loadOtlpJson(JSON.parse(line)));
      const [provider, model] = record.model.split(':');
      expect(agent!.name).toBe('invoke_agent harness-eval');
      expect(attributesOf(agent!.attributes)).toMatchObject({ 'gen_ai.conversation.id': names[index], 'gen_ai.provider.name': provider, 'gen_ai.request.model': model, 'harness_eval.reward': record.actual ? 1 : 0 });
      const count = (type: string) => record.trace.filter((event) => event.type === type).length;
      expect(children.filter((span) => span.name.startsWith('chat ')).length).toBe(count('model_response') + count('model_error'));
      const calls = new Set(record.trace.filter((event) => event.type === 'tool_call' || event.type === 'tool_result').map((event) => event.callId));
      expect(children.filter((span) => span.name.startsWith('execute_tool ')).length).toBe(calls.size);
      for (const span of children) expect(span.parentSpanId).toBe(agent!.spanId);
    });
  } finally {
    await otlp.close();
  }
});

test('Allure gets each run\'s trajectory steps: a step each, tokens as parameters, a step per tool call, failed where a tool or the model failed', async () => {
  const { dir, attached } = await realReport();
  const allure = join(dir, 'allure-results');
  const results = readdirSync(allure).filter((file) => file.endsWith('-result.json')).map((file) => readJson(join(allure, file)));
  expect(results).toHaveLength(3);
  for (const result of results) {
    // A run's title is its test's title path; Allure's name, the test's own title.
    const record = [...attached.values()].find((one) => one.test.title.endsWith(result.name))!;
    const steps = result.steps.find((step: { name: string }) => step.name === TRAJECTORY_STEP).steps;
    const trajectory = toTrajectory({ name: 'allure', run: exportedRunSchema.parse(record), startMs: 0 });
    expect(steps.map((step: { name: string }) => step.name.split(':')[0])).toEqual(trajectory.steps.map((step) => `${step.step_id}. ${step.source}`));
    const agentSteps = trajectory.steps.filter((step) => step.source === 'agent');
    const recorded = steps.filter((step: { name: string }) => / agent: /.test(step.name));
    const tokens = (metrics: { prompt_tokens?: number; completion_tokens?: number } = {}) => [
      ...(metrics.prompt_tokens === undefined ? [] : [{ name: 'prompt tokens', value: String(metrics.prompt_tokens) }]),
      ...(metrics.completion_tokens === undefined ? [] : [{ name: 'completion tokens', value: String(metrics.completion_tokens) }]),
    ];
    expect(recorded.map((step: any) => step.parameters)).toEqual(agentSteps.map((step) => tokens(step.metrics)));
    expect(recorded.map((step: any) => step.steps.map((call: any) => call.name))).toEqual(agentSteps.map((step) => step.tool_calls!.map((call) => `${call.function_name}(${JSON.stringify(call.arguments)})`)));
  }
  // The run made by hand: its denied click, its model error and its failed call outside a model step failed; the rest passed.
  const hand = results.find((result) => result.name === 'a run made by hand');
  const handSteps = hand.steps.find((step: { name: string }) => step.name === TRAJECTORY_STEP).steps;
  const statuses = (steps: any[]): string[] => steps.flatMap((step) => [`${step.name} ${step.status}`, ...statuses(step.steps ?? []).map((line) => `  ${line}`)]);
  expect(statuses(handSteps).filter((line) => line.endsWith(' failed'))).toEqual([
    '  click({"input":"#up_1"}) failed',
    '6. system: model error (server_error): 502 from the model failed',
    '8. system: the harness or a program called get_stories() failed',
  ]);
});
