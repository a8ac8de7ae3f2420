import { createHash } from 'node:crypto';
import { z } from 'zod';
import { InputError } from '../input.ts';
import { runOutcome } from '../report/format.ts';
import type { PriceTable } from '../report/types.ts';
import { callCost, HARNESS_EVAL_VERSION, modelOf, rewardOf } from './run-facts.ts';
import type { NamedRun } from './runs.ts';
import { eventData, resultText, timeline, type ModelCall, type ToolRun } from './timeline.ts';

/**
 * A run as OpenTelemetry spans, by the GenAI semantic conventions: one trace a run, an
 * `invoke_agent` span, and under it a `chat` span per model call and an `execute_tool` span per
 * tool call; the harness's other events are events of the agent's span. Encoded as OTLP/JSON, an
 * ExportTraceServiceRequest (opentelemetry-proto's collector/trace/v1): ids in hex, enums as
 * numbers, 64-bit integers as decimal strings.
 */

const anyValueSchema = z.union([z.object({ stringValue: z.string() }), z.object({ intValue: z.string() }), z.object({ doubleValue: z.number() }), z.object({ boolValue: z.boolean() })]);
const keyValueSchema = z.object({ key: z.string(), value: anyValueSchema });
type KeyValue = z.infer<typeof keyValueSchema>;

/** Span kinds and status codes of trace.proto, by number. */
export const SPAN_KIND = { internal: 1, client: 3 } as const;
export const STATUS_CODE = { unset: 0, error: 2 } as const;

const spanSchema = z.object({
  traceId: z.string(),
  spanId: z.string(),
  parentSpanId: z.string().optional(),
  name: z.string(),
  kind: z.union([z.literal(SPAN_KIND.internal), z.literal(SPAN_KIND.client)]),
  startTimeUnixNano: z.string(),
  endTimeUnixNano: z.string(),
  attributes: z.array(keyValueSchema),
  events: z.array(z.object({ timeUnixNano: z.string(), name: z.string(), attributes: z.array(keyValueSchema) })).optional(),
  status: z.object({ code: z.union([z.literal(STATUS_CODE.unset), z.literal(STATUS_CODE.error)]), message: z.string().optional() }),
});
type Span = z.infer<typeof spanSchema>;

const exportTraceServiceRequestSchema = z.object({
  resourceSpans: z.array(
    z.object({
      resource: z.object({ attributes: z.array(keyValueSchema) }),
      scopeSpans: z.array(z.object({ scope: z.object({ name: z.string(), version: z.string() }), spans: z.array(spanSchema) })),
    }),
  ),
});
export type ExportTraceServiceRequest = z.infer<typeof exportTraceServiceRequestSchema>;

type AttributeValue = string | number | boolean | null | undefined;

/** Attributes from values; an integer is an `intValue` unless listed as a double; absent values are left out. */
function attributes(values: Record<string, AttributeValue>, doubles: readonly string[] = []): KeyValue[] {
  return Object.entries(values).flatMap(([key, value]): KeyValue[] => {
    if (value === undefined || value === null) return [];
    if (typeof value === 'string') return [{ key, value: { stringValue: value } }];
    if (typeof value === 'boolean') return [{ key, value: { boolValue: value } }];
    return [{ key, value: Number.isInteger(value) && !doubles.includes(key) ? { intValue: String(value) } : { doubleValue: value } }];
  });
}

/** Nanoseconds since the epoch, as OTLP/JSON writes a fixed64. */
const nanos = (ms: number) => (BigInt(Math.round(ms * 1000)) * 1000n).toString();

/** Ids from the run's name: exporting a run again gives the same trace, which a backend keeps once. */
const hexId = (text: string, bytes: number) => createHash('sha256').update(text).digest('hex').slice(0, bytes * 2);

/** The run as one trace, in one request. `prices` gives each chat span its cost. */
export function toOtlp({ name, run, startMs }: NamedRun, prices?: PriceTable): ExportTraceServiceRequest {
  const traceId = hexId(name, 16);
  const agentSpanId = hexId(`${name}/agent`, 8);
  const model = modelOf(run);
  const genAi = { 'gen_ai.provider.name': model.provider, 'gen_ai.request.model': model.name };
  const child = (seq: number, span: Omit<Span, 'traceId' | 'spanId' | 'parentSpanId'>): Span => ({ traceId, spanId: hexId(`${name}/${seq}`, 8), parentSpanId: agentSpanId, ...span });
  const chat = (call: ModelCall): Span => {
    const usd = callCost(run, prices, call.usage);
    const parts = [...(call.content ? [{ type: 'text', content: call.content }] : []), ...call.toolCalls.map((tool) => ({ type: 'tool_call', id: tool.id, name: tool.name, arguments: tool.arguments }))];
    return child(call.seq, {
      name: `chat ${model.name}`,
      kind: SPAN_KIND.client,
      startTimeUnixNano: nanos(startMs + call.startMs),
      endTimeUnixNano: nanos(startMs + call.endMs),
      attributes: attributes(
        {
          'gen_ai.operation.name': 'chat',
          ...genAi,
          'gen_ai.usage.input_tokens': call.usage.input,
          'gen_ai.usage.output_tokens': call.usage.output,
          'gen_ai.output.messages': parts.length > 0 ? JSON.stringify([{ role: 'assistant', parts }]) : undefined,
          'error.type': call.error?.kind,
          'harness_eval.cost_usd': usd,
          'harness_eval.attempt': call.attempt,
          'harness_eval.iteration': call.iteration,
        },
        ['harness_eval.cost_usd'],
      ),
      status: call.error ? { code: STATUS_CODE.error, message: call.error.message } : { code: STATUS_CODE.unset },
    });
  };
  const tool = ({ call, result, startMs: from, endMs: to }: ToolRun): Span =>
    child(call.seq, {
      name: `execute_tool ${call.name}`,
      kind: SPAN_KIND.internal,
      startTimeUnixNano: nanos(startMs + from),
      endTimeUnixNano: nanos(startMs + to),
      attributes: attributes({
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': call.name,
        'gen_ai.tool.call.id': call.callId,
        'gen_ai.tool.type': 'function',
        'gen_ai.tool.call.arguments': call.arguments,
        'gen_ai.tool.call.result': result?.ok ? resultText(result) : undefined,
        'error.type': result && !result.ok ? (result.kind ?? 'tool_error') : undefined,
        'harness_eval.tool.by': call.by,
        'harness_eval.attempt': call.attempt,
        'harness_eval.iteration': call.iteration,
      }),
      status: result && !result.ok ? { code: STATUS_CODE.error, message: resultText(result) } : { code: STATUS_CODE.unset },
    });

  const spans: Span[] = [];
  const events: NonNullable<Span['events']> = [];
  for (const moment of timeline(run.trace)) {
    if (moment.kind === 'model') spans.push(chat(moment));
    else if (moment.kind === 'tool') spans.push(tool(moment));
    else events.push({ timeUnixNano: nanos(startMs + moment.event.atMs), name: moment.event.type, attributes: attributes({ 'harness_eval.event': eventData(moment.event) }) });
  }
  const lastMs = run.trace.reduce((last, event) => Math.max(last, event.atMs), 0);
  // A run cut short or left out ended in error; a false success is an outcome, not an error of the span.
  const failed = run.incomplete || run.excluded !== undefined;
  const agent: Span = {
    traceId,
    spanId: agentSpanId,
    name: `invoke_agent ${run.agent}`,
    kind: SPAN_KIND.internal,
    startTimeUnixNano: nanos(startMs),
    endTimeUnixNano: nanos(startMs + Math.max(run.wallMs, lastMs)),
    attributes: attributes(
      {
        'gen_ai.operation.name': 'invoke_agent',
        ...genAi,
        'gen_ai.agent.name': run.agent,
        'gen_ai.conversation.id': name,
        'gen_ai.usage.input_tokens': run.tokens.input,
        'gen_ai.usage.output_tokens': run.tokens.output,
        'gen_ai.usage.cache_read.input_tokens': run.tokens.cachedInput,
        'error.type': failed ? (run.excluded?.reason ?? run.stopReason) : undefined,
        'harness_eval.task': run.task,
        'harness_eval.layers': run.layers,
        'harness_eval.site': run.site,
        'harness_eval.outcome': runOutcome(run),
        'harness_eval.reward': rewardOf(run),
        'harness_eval.claimed': run.claimed,
        'harness_eval.actual': run.actual,
        'harness_eval.false_success': run.falseSuccess,
        'harness_eval.false_failure': run.falseFailure,
        'harness_eval.side_effects': run.sideEffects.length,
        'harness_eval.stop_reason': run.stopReason,
        'harness_eval.iterations': run.iterations,
        'harness_eval.cost_usd': run.cost,
      },
      ['harness_eval.reward', 'harness_eval.cost_usd'],
    ),
    events,
    status: failed ? { code: STATUS_CODE.error, message: runOutcome(run) } : { code: STATUS_CODE.unset },
  };
  return {
    resourceSpans: [
      {
        resource: { attributes: attributes({ 'service.name': 'harness-eval', 'service.version': HARNESS_EVAL_VERSION }) },
        scopeSpans: [{ scope: { name: 'harness-eval', version: HARNESS_EVAL_VERSION }, spans: [agent, ...spans] }],
      },
    ],
  };
}

/** How long a collector gets to answer one request, as OTEL_EXPORTER_OTLP_TIMEOUT's default. */
const SEND_TIMEOUT_MS = 10_000;

/**
 * Where OTLP traces go, by the exporter's environment variables: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT
 * as it is, else OTEL_EXPORTER_OTLP_ENDPOINT with `/v1/traces`; none when neither is set. Headers
 * (`key=value,…`, values URL-encoded) from OTEL_EXPORTER_OTLP_HEADERS and its TRACES_ variant.
 */
export function otlpDestination(env: NodeJS.ProcessEnv): { url: string; headers: Record<string, string> } | undefined {
  const variable = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ? 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT' : env.OTEL_EXPORTER_OTLP_ENDPOINT ? 'OTEL_EXPORTER_OTLP_ENDPOINT' : undefined;
  if (!variable) return undefined;
  const value = env[variable]!;
  const url = variable === 'OTEL_EXPORTER_OTLP_ENDPOINT' ? `${value.replace(/\/+$/, '')}/v1/traces` : value;
  // `collector:4318` parses as a URL of a scheme `collector:`: what is meant is http://collector:4318.
  if (!['http:', 'https:'].includes(URL.canParse(url) ? new URL(url).protocol : '')) throw new InputError(`export: ${variable}: not an http(s) URL: "${value}"`);
  const headers = Object.fromEntries(
    ['OTEL_EXPORTER_OTLP_HEADERS', 'OTEL_EXPORTER_OTLP_TRACES_HEADERS'].flatMap((name) =>
      (env[name] ?? '')
        .split(',')
        .filter((pair) => pair.trim() !== '')
        .map((pair) => {
          const equals = pair.indexOf('=');
          if (equals <= 0) throw new InputError(`export: ${name}: expected key=value pairs separated by commas, got "${pair}"`);
          return [pair.slice(0, equals).trim(), decodeURIComponent(pair.slice(equals + 1).trim())];
        }),
    ),
  );
  return { url, headers };
}

/** POSTs each request, as OTLP/HTTP JSON; a refusal or an unreachable collector is one line naming the URL. */
export async function sendOtlp(requests: readonly ExportTraceServiceRequest[], { url, headers }: { url: string; headers: Record<string, string> }): Promise<void> {
  for (const request of requests) {
    let response: Response;
    try {
      response = await fetch(url, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(request), signal: AbortSignal.timeout(SEND_TIMEOUT_MS) });
    } catch (error) {
      const cause = (error as { cause?: { code?: string } }).cause?.code ?? (error as Error).message;
      throw new InputError(`export: ${url}: could not send the traces (${cause})`);
    }
    if (!response.ok) throw new InputError(`export: ${url} answered ${response.status}: ${(await response.text()).slice(0, 200)}`);
  }
}
