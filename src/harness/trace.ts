import { z } from 'zod';

const toolCall = z.object({ id: z.string(), name: z.string(), arguments: z.string() });
const usage = z.object({ input: z.number().nullable(), output: z.number().nullable() });

/** Why a run ended. `timeout`: the test's time ran out (or the run's own limit) while the agent worked. */
export const stopReasons = ['finished', 'max_iterations', 'budget', 'stalled', 'model_error', 'timeout', 'error'] as const;
export type StopReason = (typeof stopReasons)[number];

/**
 * A layer's own event (a user's layer, counting what it cares about): its layer's name, the event's
 * name, and JSON data. Checked when recorded, redacted like every other, shown in the transcript.
 */
export const customEventSchema = z.object({
  type: z.literal('custom'),
  layer: z.string().min(1),
  name: z.string().min(1),
  data: z.record(z.string(), z.json()).optional(),
});

/** Every event the harness writes, as data: the schema is the type and validates traces read back. */
export const traceEventSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('run_start'), task: z.string(), model: z.string(), layers: z.array(z.string()) }),
  z.object({ type: z.literal('attempt_start') }),
  z.object({ type: z.literal('model_request'), messages: z.number(), tools: z.number() }),
  z.object({ type: z.literal('model_response'), content: z.string().nullable(), toolCalls: z.array(toolCall), usage, ms: z.number() }),
  z.object({ type: z.literal('model_error'), kind: z.string(), message: z.string() }),
  z.object({
    type: z.literal('tool_call'),
    callId: z.string(),
    name: z.string(),
    arguments: z.string(),
    /** Whose call: the model's, a program's (code mode) or the harness's own (a layer acting); absent in older traces. */
    by: z.enum(['model', 'program', 'harness']).optional(),
  }),
  z.object({
    type: z.literal('tool_result'),
    callId: z.string(),
    name: z.string(),
    ok: z.boolean(),
    output: z.record(z.string(), z.unknown()).optional(),
    error: z.string().optional(),
    kind: z.string().optional(),
    ms: z.number(),
  }),
  z.object({ type: z.literal('harness_auto_login'), ok: z.boolean(), from: z.string(), to: z.string() }),
  z.object({ type: z.literal('harness_compaction'), layer: z.string(), before: z.number(), after: z.number() }),
  z.object({ type: z.literal('harness_guardrail_stop'), reason: z.enum(stopReasons), detail: z.string() }),
  z.object({ type: z.literal('harness_verification'), ok: z.boolean(), detail: z.string() }),
  z.object({ type: z.literal('harness_note'), layer: z.string(), message: z.string() }),
  z.object({ type: z.literal('harness_prompt_tokens'), layer: z.string(), tokens: z.number(), window: z.number(), dropped: z.number() }),
  z.object({ type: z.literal('harness_checkpoint'), file: z.string(), messages: z.number() }),
  z.object({ type: z.literal('harness_stall'), repeats: z.number(), action: z.enum(['warned', 'stopped']) }),
  z.object({ type: z.literal('harness_settle'), callId: z.string(), ms: z.number(), settled: z.boolean() }),
  z.object({ type: z.literal('harness_output'), callId: z.string(), tier: z.enum(['inline', 'paged', 'artifact']), bytes: z.number(), artifact: z.string().optional() }),
  z.object({ type: z.literal('harness_denied'), layer: z.string(), callId: z.string(), tool: z.string(), reason: z.string() }),
  z.object({ type: z.literal('harness_approval'), callId: z.string(), tool: z.string(), action: z.string(), decision: z.enum(['approved', 'denied']) }),
  z.object({ type: z.literal('harness_observation'), callId: z.string(), valid: z.boolean(), flags: z.array(z.string()) }),
  z.object({ type: z.literal('harness_evidence'), ok: z.boolean(), cited: z.array(z.string()), detail: z.string() }),
  /** A screenshot sent to the model (the `vision` layer): its ref, size and estimated prompt tokens, never its pixels. */
  z.object({ type: z.literal('harness_image'), ref: z.string(), width: z.number(), height: z.number(), bytes: z.number(), tokens: z.number() }),
  z.object({ type: z.literal('harness_resume'), file: z.string(), fromStep: z.number() }),
  z.object({ type: z.literal('run_end'), claimed: z.boolean(), stopReason: z.enum(stopReasons), iterations: z.number() }),
  customEventSchema,
]);

const stamp = z.object({ seq: z.number(), attempt: z.number(), iteration: z.number(), atMs: z.number() });
export const stampedEventSchema = z.intersection(stamp, traceEventSchema);

export type TraceEventBody = z.infer<typeof traceEventSchema>;
export type TraceEvent = z.infer<typeof stampedEventSchema>;
export type TraceEventOf<T extends TraceEventBody['type']> = Extract<TraceEventBody, { type: T }> & z.infer<typeof stamp>;

/**
 * The run's append-only log. Secret values (passwords, API keys) are replaced wherever they
 * appear before an event is stored, so no trace, report or attachment can carry one.
 */
export class Trace {
  private readonly list: TraceEvent[] = [];
  private started = Date.now();

  constructor(private readonly secrets: () => readonly string[] = () => []) {}

  append(event: TraceEventBody, position: { attempt: number; iteration: number }): TraceEvent {
    const stamped = redact({ seq: this.list.length + 1, ...position, atMs: Date.now() - this.started, ...event }, this.secrets());
    this.list.push(stamped);
    return stamped;
  }

  /** Takes over a saved trace (a resumed run): its events, and its clock where it stopped. */
  restore(events: readonly TraceEvent[]): void {
    this.list.splice(0, this.list.length, ...events);
    this.started = Date.now() - (events.at(-1)?.atMs ?? 0);
  }

  get events(): readonly TraceEvent[] {
    return this.list;
  }

  of<T extends TraceEventBody['type']>(type: T): TraceEventOf<T>[] {
    return this.list.filter((event) => event.type === type) as TraceEventOf<T>[];
  }
}

export function redact<T>(value: T, secrets: readonly string[]): T {
  const active = secrets.filter((secret) => secret.length >= 4);
  if (active.length === 0) return value;
  let json = JSON.stringify(value);
  for (const secret of active) json = json.split(JSON.stringify(secret).slice(1, -1)).join('[secret]');
  return JSON.parse(json) as T;
}
