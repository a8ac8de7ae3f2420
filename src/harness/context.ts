import type { Page } from '@playwright/test';
import { z } from 'zod';
import type { ChatMessage, Model, ToolCall, Usage } from '../models/types.ts';
import { browserTools, type Claim, type ToolState } from '../tools/browser.ts';
import { ToolRegistry, type Tool, type ToolOutcome } from '../tools/registry.ts';
import type { Layer } from './layer.ts';
import { redact, stampedEventSchema, Trace, type StopReason, type TraceEvent, type TraceEventBody } from './trace.ts';

/** The run as data after a step (what `durable` saves and resumes): the schema checks a saved one read back. */
export const runSnapshotSchema = z.object({
  attempt: z.int().min(0),
  iterations: z.int().min(0),
  attemptIterations: z.int().min(0),
  tokens: z.object({ input: z.number(), output: z.number() }),
  messages: z.array(z.custom<ChatMessage>((value) => typeof value === 'object' && value !== null && 'role' in value, 'must be a chat message')),
  trace: z.array(stampedEventSchema),
});
export type RunSnapshot = z.infer<typeof runSnapshotSchema>;

/** The site account the harness may use. It never enters a prompt, the trace or a log. */
export interface Credentials {
  username: string;
  password: string;
}

/** The site's own HTTP, outside the browser: one request in, its response out, redirects not followed. */
export type SiteFetch = (request: Request) => Promise<Response>;

/**
 * What a layer sees of a run, and the few named things it may do: push a message, replace the
 * conversation (trimming), record an event, stop with a reason.
 */
export class RunContext {
  readonly trace: Trace;
  readonly startedAt = Date.now();
  readonly tokens: Usage = { input: 0, output: 0 };
  /** Model turns in the whole run, and in the current attempt. */
  iterations = 0;
  attemptIterations = 0;
  attempt = 0;
  private conversation: ChatMessage[] = [];
  private stopReason?: { reason: StopReason; detail: string };
  private session?: { page: Page; tools: ToolRegistry; state: ToolState; layers: readonly Layer[] };

  private readonly secretValues: readonly string[];

  constructor(
    readonly task: string,
    readonly model: Model,
    readonly systemPrompt: string,
    readonly credentials: Credentials | undefined,
    secrets: readonly string[],
    /** How the login handler signs in: the password goes to the site from here, never into the page. */
    readonly siteFetch: SiteFetch = (request) => fetch(request, { redirect: 'manual' }),
  ) {
    this.secretValues = [...secrets, ...(credentials ? [credentials.password] : [])];
    this.trace = new Trace(() => this.secretValues);
  }

  /** The value with every secret replaced: for anything the run hands out besides the trace. */
  redact<T>(value: T): T {
    return redact(value, this.secretValues);
  }

  /** The run as data after a step: what `durable` saves, and `resume` takes back in a new process. */
  snapshot(): RunSnapshot {
    return this.redact({
      attempt: this.attempt,
      iterations: this.iterations,
      attemptIterations: this.attemptIterations,
      tokens: { ...this.tokens },
      messages: [...this.conversation],
      trace: [...this.trace.events],
    });
  }

  resume(saved: RunSnapshot): void {
    Object.assign(this.tokens, saved.tokens);
    this.iterations = saved.iterations;
    this.attemptIterations = saved.attemptIterations;
    this.conversation = [...saved.messages];
    this.trace.restore(saved.trace);
  }

  /** Starts an attempt on a fresh page: a new conversation, new tools, no claim. */
  beginAttempt(page: Page, layers: readonly Layer[] = []): void {
    this.attempt += 1;
    this.attemptIterations = 0;
    this.stopReason = undefined;
    const state: ToolState = {};
    // The session first, so that layers shaping the tools can already reach the page.
    this.session = { page, state, tools: new ToolRegistry([]), layers };
    const tools = layers.reduce<readonly Tool[]>((offered, layer) => layer.tools?.(this, offered) ?? offered, browserTools(page, state));
    this.session.tools = new ToolRegistry(tools);
    this.conversation = [
      { role: 'system', content: this.systemPrompt },
      { role: 'user', content: this.task },
    ];
    this.record({ type: 'attempt_start' });
  }

  /**
   * Runs one tool call through the layers' `aroundTool` hooks (permissions, approval, output…)
   * and the registry, with its call and result in the trace. The loop and code mode both use it.
   */
  async callTool(call: ToolCall): Promise<ToolOutcome> {
    this.record({ type: 'tool_call', callId: call.id, name: call.name, arguments: call.arguments });
    const started = performance.now();
    const execute = this.current.layers.reduceRight<() => Promise<ToolOutcome>>(
      (next, layer) => (layer.aroundTool ? () => layer.aroundTool!(this, call, next) : next),
      () => this.current.tools.call(call),
    );
    const outcome = await execute();
    const ms = Math.round(performance.now() - started);
    if (outcome.ok) this.record({ type: 'tool_result', callId: call.id, name: call.name, ok: true, output: outcome.output, ms });
    else this.record({ type: 'tool_result', callId: call.id, name: call.name, ok: false, error: outcome.error, kind: outcome.kind, ms });
    return outcome;
  }

  get page(): Page {
    return this.current.page;
  }

  get tools(): ToolRegistry {
    return this.current.tools;
  }

  get claim(): Claim | undefined {
    return this.current.state.claim;
  }

  get messages(): readonly ChatMessage[] {
    return this.conversation;
  }

  get stopped(): { reason: StopReason; detail: string } | undefined {
    return this.stopReason;
  }

  push(message: ChatMessage): void {
    this.conversation.push(message);
  }

  replaceMessages(messages: ChatMessage[]): void {
    this.conversation = messages;
  }

  /** A message from the harness to the model, marked as such and recorded. */
  tell(layer: string, message: string): void {
    this.push({ role: 'user', content: `[harness] ${message}` });
    this.record({ type: 'harness_note', layer, message });
  }

  record(event: TraceEventBody): void {
    this.trace.append(event, { attempt: this.attempt, iteration: this.iterations });
  }

  stop(reason: StopReason, detail: string): void {
    if (this.stopReason) return;
    this.stopReason = { reason, detail };
    this.record({ type: 'harness_guardrail_stop', reason, detail });
  }

  private get current() {
    if (!this.session) throw new Error('no attempt has begun');
    return this.session;
  }
}
