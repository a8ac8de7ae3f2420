import { z } from 'zod';

/** The trace: every event a run writes, as data (the schema is the type and validates traces read back), and why a run ended. */

/** Why a run ended. `timeout`: the test's time ran out (or the run's own limit) while the agent worked. */
/** `awaiting_approval`: paused, not ended: a request waits in the approval store, and `durable` resumes the run once it is decided. */
/** `rate_limited`: the model's endpoint still refused (429) after every retry: the run is incomplete, never the agent's failure. */
/** `limit`: a command agent hit a limit of its sandbox or its gateway (processes, memory, calls, tokens, cost): incomplete, the limit named in its escapes. */
export const stopReasons = ['finished', 'max_iterations', 'budget', 'stalled', 'model_error', 'rate_limited', 'timeout', 'error', 'awaiting_approval', 'limit'] as const;
export type StopReason = (typeof stopReasons)[number];

const toolCall = z.object({ id: z.string(), name: z.string(), arguments: z.string() });
const usage = z.object({ input: z.number().nullable(), output: z.number().nullable() });

/** One message as a `model_request` records it: its role, its text (cut), and how long it was whole. */
const sentMessageSchema = z.object({ role: z.string(), text: z.string(), chars: z.number() });
export type SentMessage = z.infer<typeof sentMessageSchema>;

/** How far a decision reaches: the one call it was asked for, every matching call of that run, or of any run of the task. */
export const approvalScopes = ['call', 'run', 'task'] as const;

/** Why the store is asked: an action a layer holds back, or a stuck run that may go on (`continue`). */
export const approvalKinds = ['action', 'continue'] as const;

/** A request, as the harness files it: `<id>.request.json` in the store's folder. */
/** A request as its file holds it; the trace's `harness_approval_request` is the same fields. */
export const approvalRequestSchema = z
  .object({
    version: z.literal(1),
    id: z.string().min(1),
    kind: z.enum(approvalKinds),
    task: z.string(),
    /** The run that asked: a `run`-scoped decision covers that run alone, across processes. */
    runId: z.string().min(1),
    /** What would happen (`upvote`, `continue`). */
    action: z.string().min(1),
    /** What it would happen to (a URL, a run). */
    resource: z.string(),
    /** sha256 of the call's arguments (canonical JSON): a decision covers these arguments, no others. */
    argsHash: z.string().min(1),
    scope: z.enum(approvalScopes),
    requestedAt: z.iso.datetime(),
    /** After this, neither the request nor a decision on it counts. */
    expiresAt: z.iso.datetime(),
    /** Why it was asked, in a sentence, for the person deciding. */
    reason: z.string(),
  })
  .strict();
export type ApprovalRequest = z.infer<typeof approvalRequestSchema>;

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

/** An element as a step found it: what must be the same for a replayed step to be the same step. */
/**
 * An element by what it is, not how it is styled: a site's markup eras restyle the same link and
 * row (other classes), so classes are not kept and a routine replays across eras.
 */
export const elementSchema = z.object({
  tag: z.string(),
  id: z.string(),
  text: z.string(),
  /** The link's target, session tokens (`auth=`) left out. */
  href: z.string(),
  /** The row it sits in (the nearest `tr`, `li` or `form`): its id and text, so an item that moved is another step. A file saved before ids were kept reads as no id, and drifts. */
  within: z.object({ id: z.string().default(''), text: z.string() }).optional(),
});

/** One action of a run as `subroutines` keeps it: the call, where it ran, what it acted on, what it answered. */
export const subroutineStepSchema = z.object({
  tool: z.string(),
  arguments: z.string(),
  /** The page it ran on: path and query, session tokens left out. */
  on: z.string(),
  /** The element its selector resolved to, for a call that acts on one (click, fill). */
  element: elementSchema.optional(),
  ok: z.boolean(),
  /** The page it left the browser on. */
  landed: z.string(),
});

/** Every event the harness writes, as data: the schema is the type and validates traces read back. */
export const traceEventSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('run_start'), task: z.string(), model: z.string(), layers: z.array(z.string()) }),
  z.object({ type: z.literal('attempt_start') }),
  z.object({
    type: z.literal('model_request'),
    messages: z.number(),
    tools: z.number(),
    /** What the model was given, message by message (redacted, then each cut to SENT_CHARS); absent in older traces. */
    sent: z.array(sentMessageSchema).optional(),
    /** The names of the tools offered; absent in older traces. */
    offered: z.array(z.string()).optional(),
  }),
  z.object({ type: z.literal('model_response'), content: z.string().nullable(), toolCalls: z.array(toolCall), usage, ms: z.number() }),
  z.object({ type: z.literal('model_error'), kind: z.string(), message: z.string() }),
  /** A request the model gateway could not translate for the run's model (a shape or a route it does not serve): answered with `status`, never forwarded. */
  z.object({ type: z.literal('model_request_refused'), status: z.number(), message: z.string() }),
  z.object({
    type: z.literal('tool_call'),
    callId: z.string(),
    name: z.string(),
    arguments: z.string(),
    /** Whose call: the model's, a program's (code mode), the harness's own (a layer acting), or an agent of its own's (a command agent's, through `HARNESS_MCP_URL`); absent in older traces. */
    by: z.enum(['model', 'program', 'harness', 'agent']).optional(),
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
  /** A claimed success passed on with postconditions no one checked: they have no session-side check (an answer), so the claim is reported unverified. */
  z.object({ type: z.literal('harness_unverified'), layer: z.string(), postconditions: z.array(z.string()), detail: z.string() }),
  z.object({ type: z.literal('harness_note'), layer: z.string(), message: z.string() }),
  z.object({ type: z.literal('harness_prompt_tokens'), layer: z.string(), tokens: z.number(), window: z.number(), dropped: z.number() }),
  z.object({ type: z.literal('harness_checkpoint'), file: z.string(), messages: z.number() }),
  z.object({ type: z.literal('harness_stall'), repeats: z.number(), action: z.enum(['warned', 'stopped', 'escalated', 'continued']) }),
  z.object({ type: z.literal('harness_settle'), callId: z.string(), ms: z.number(), settled: z.boolean() }),
  z.object({ type: z.literal('harness_output'), callId: z.string(), tier: z.enum(['inline', 'paged', 'artifact']), bytes: z.number(), artifact: z.string().optional() }),
  z.object({ type: z.literal('harness_denied'), layer: z.string(), callId: z.string(), tool: z.string(), reason: z.string() }),
  z.object({
    type: z.literal('harness_approval'),
    /** The call decided on; absent for a stuck run's `continue`. */
    callId: z.string().optional(),
    tool: z.string().optional(),
    action: z.string(),
    decision: z.enum(['approved', 'denied']),
    /** The approval store's request whose decision this was; absent for a policy's. */
    requestId: z.string().optional(),
  }),
  approvalRequestSchema.omit({ version: true, id: true }).extend({
    type: z.literal('harness_approval_request'),
    requestId: z.string(),
    /** The store's folder. */
    store: z.string(),
    callId: z.string().optional(),
    tool: z.string().optional(),
  }),
  z.object({
    type: z.literal('harness_risk'),
    callId: z.string(),
    tool: z.string(),
    score: z.number(),
    level: z.enum(['low', 'medium', 'high']),
    /** The policy rule that scored it; absent when none matched. */
    rule: z.string().optional(),
    decision: z.enum(['passed', 'warned', 'overridden', 'approved', 'denied', 'paused']),
  }),
  z.object({ type: z.literal('harness_observation'), callId: z.string(), valid: z.boolean(), flags: z.array(z.string()) }),
  z.object({ type: z.literal('harness_evidence'), ok: z.boolean(), cited: z.array(z.string()), detail: z.string() }),
  /** A screenshot sent to the model (the `vision` layer): its ref, size and estimated prompt tokens, never its pixels. */
  z.object({ type: z.literal('harness_image'), ref: z.string(), width: z.number(), height: z.number(), bytes: z.number(), tokens: z.number() }),
  z.object({ type: z.literal('harness_resume'), file: z.string(), fromStep: z.number() }),
  z.object({ type: z.literal('harness_subroutine_step'), callId: z.string(), step: subroutineStepSchema }),
  z.object({
    type: z.literal('harness_subroutine'),
    file: z.string(),
    /** Steps replayed (carried out and found as recorded) of the subroutine's `of`. */
    replayed: z.number(),
    of: z.number(),
    /** The step (from 1) where the page no longer matched, and why: the model continued from there. */
    diverged: z.object({ step: z.number(), why: z.string() }).optional(),
  }),
  /** A browser lost mid-run (`lost`: what died) and the session reopened or not: where it is now, how many cookies came back (never their values), why. */
  z.object({ type: z.literal('harness_recovery'), lost: z.string(), recovered: z.boolean(), url: z.string(), cookies: z.number(), detail: z.string() }),
  z.object({ type: z.literal('run_end'), claimed: z.boolean(), stopReason: z.enum(stopReasons), iterations: z.number() }),
  customEventSchema,
]);

const stamp = z.object({ seq: z.number(), attempt: z.number(), iteration: z.number(), atMs: z.number() });
export const stampedEventSchema = z.intersection(stamp, traceEventSchema);

export type TraceEventBody = z.infer<typeof traceEventSchema>;
export type TraceEvent = z.infer<typeof stampedEventSchema>;
export type TraceEventOf<T extends TraceEventBody['type']> = Extract<TraceEventBody, { type: T }> & z.infer<typeof stamp>;
