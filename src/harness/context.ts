import { counted } from '../report/format.ts';
import type { BrowserContext, Page, Route } from '@playwright/test';
import { z } from 'zod';
import { parseInput } from '../input.ts';
import { addUsage, withoutImages } from '../models/types.ts';
import type { ChatMessage, ChatResponse, Model, ModelWaits, ToolCall, Usage } from '../core/model.ts';
import { WaitClock } from '../models/waits.ts';
import { browserTools, type Claim, type ToolState } from '../tools/browser.ts';
import { ToolRegistry, type Tool, type ToolOutcome } from '../tools/registry.ts';
import type { Postcondition } from '../core/task.ts';
import type { Carried } from '../core/agent.ts';
import { abortReason, capStrings, DEFAULT_TOOL_TIMEOUT_MS, HARD_MAX_ITERATIONS, MAX_OUTPUT_CHARS, race, RunAborted, TIMED_OUT } from './limits.ts';
import { redact, Trace } from './trace.ts';
import { customEventSchema, stampedEventSchema, type StopReason, type TraceEventBody } from '../core/trace.ts';
import type { Site, SiteAction, SiteRequest } from '../core/site.ts';
import { serveRoute, type Hop } from '../http.ts';

export type { Carried } from '../core/agent.ts';

export interface AttemptOutcome {
  stopReason: StopReason;
  claim?: Claim;
  error?: string;
}

/**
 * What a layer sees of a run, and all it may use: the page and the run's site (origin, the kit's
 * classifier and sign-in), the task's bound postconditions (its checks), the conversation and the
 * tools, the trace writer (`record`, `trace`), the stop signal (`stop`, `stopped`, `signal`) and the
 * counters. The loop's own machinery (attempts begun and ended, token counting, the conversation's
 * storage) is not in it; a layer that reached for it would not compile.
 */
export type RunView = Pick<
  RunContext,
  | 'page'
  | 'site'
  | 'postconditions'
  | 'task'
  | 'taskId'
  | 'credentials'
  | 'model'
  | 'messages'
  | 'push'
  | 'replaceMessages'
  | 'tell'
  | 'tools'
  | 'callTool'
  | 'record'
  | 'trace'
  | 'redact'
  | 'stop'
  | 'stopped'
  | 'signal'
  | 'claim'
  | 'attempt'
  | 'iterations'
  | 'attemptIterations'
  | 'startedAt'
  | 'agentMs'
  | 'limits'
  | 'knownTokens'
  | 'snapshot'
  | 'resume'
  | 'reopen'
>;

/**
 * One run's instance of a layer: a named unit of harness behaviour, plugged into the loop through
 * hooks. Layers run in the order of the stack; `aroundAttempt` wraps the whole attempt (the
 * outermost layer first). Each run gets its own (see `defineLayer`), so state kept in it is the run's.
 */
export interface Layer {
  readonly name: string;
  /** At the start of each attempt: the tools offered to the model, to add to (a `more` tool) or narrow (a read-only profile). */
  tools?(run: RunView, tools: readonly Tool[]): readonly Tool[];
  /** Before each model call: trim context, enforce budgets (may stop the run). */
  beforeModel?(run: RunView): void | Promise<void>;
  /** After each model answer, before its tool calls run: notice repetition (may stop the run). */
  afterModel?(run: RunView, response: ChatResponse): void | Promise<void>;
  /** Around each tool call, outermost layer first: deny it, wait for approval, settle the page, reshape the output. `by` says whose call it is. */
  aroundTool?(run: RunView, call: ToolCall, next: () => Promise<ToolOutcome>, by: CallOrigin): Promise<ToolOutcome>;
  /**
   * Before each request the browser sends during an attempt, and before each redirect hop the site
   * answers it with (a `goto` chain, a login's redirect): page loads, form posts, a script's
   * fetch, an image ping. A refusal keeps it from being sent; the first refusal in stack order
   * decides, and a refused page load or action fails the tool call in progress with it.
   */
  checkRequest?(run: RunView, request: BrowserRequest): RequestRefusal | undefined | Promise<RequestRefusal | undefined>;
  /** After the tool calls of a turn: react to where the browser is (a login wall). */
  afterTools?(run: RunView): void | Promise<void>;
  /** When the model claims an outcome: answers the claim the harness will report. */
  onFinish?(run: RunView, claim: Claim): Claim | Promise<Claim>;
  aroundAttempt?(run: RunView, attempt: () => Promise<AttemptOutcome>): Promise<AttemptOutcome>;
  /**
   * The page crashed, or the page, its context or the browser closed, mid-attempt (`lost` says
   * which). A layer with this hook takes the loss on (`recovery` reopens the session at its next
   * hook); with none, the run stops with `error`.
   */
  onBrowserLost?(run: RunView, lost: string): void;
  /** When the run pauses (`awaiting_approval`), its page still open: save it to resume later. */
  onPause?(run: RunView): void | Promise<void>;
}

/** A request the browser sends (or a redirect hop of one), as `checkRequest` sees it. */
export interface BrowserRequest extends SiteRequest {
  /** What the site kit's classifier makes of it; undefined when it changes nothing (or is not the site's). */
  action?: SiteAction;
  /** A page load, or a hop of one: not a page's image, script or fetch. */
  navigation: boolean;
  /** Playwright's resource type: `document`, `image`, `fetch`, `xhr`, … */
  resourceType: string;
  /** A hop the site's redirect leads to, not the browser's own request. */
  redirected: boolean;
  /** On the site's own origin. */
  onSite: boolean;
  /** The tool call in progress when the browser sent it (the innermost: a program's call inside run_program), if any. */
  call?: ToolCall;
}

/** Why a request is not sent, as the tool call in progress answers if it was a page load or an action. */
export type RequestRefusal = Extract<ToolOutcome, { ok: false }>;

/** What a layer sees of the run's site: where it is, what its requests do, how to sign in. */
export type SiteView = Pick<Site, 'name' | 'origin' | 'fetch' | 'serve' | 'classify' | 'loginWall' | 'signIn' | 'tools' | 'program'>;

/** The run as data after a step (what `durable` saves and resumes): the schema checks a saved one read back. */
export const runSnapshotSchema = z
  .object({
    attempt: z.int().min(0),
    iterations: z.int().min(0),
    attemptIterations: z.int().min(0).max(HARD_MAX_ITERATIONS),
    tokens: z.object({ input: z.int().min(0).nullable(), output: z.int().min(0).nullable(), cachedInput: z.int().min(0).optional() }),
    messages: z.array(z.custom<ChatMessage>((value) => typeof value === 'object' && value !== null && 'role' in value, 'must be a chat message')),
    trace: z.array(stampedEventSchema),
    /** The caller's own state for this run (the site's start snapshot), given back when it resumes. */
    carried: z.unknown().optional(),
  })
  .superRefine((run, check) => {
    // A file that parses can still describe a run that never happened: these could not be true.
    const impossible = (path: string[], message: string) => check.addIssue({ code: 'custom', path, message });
    if (run.attemptIterations > run.iterations) impossible(['attemptIterations'], `${run.attemptIterations} is more than the run's ${counted(run.iterations, 'iteration')}`);
    if (run.iterations > 0 && run.attempt === 0) impossible(['attempt'], `0, yet the run has ${counted(run.iterations, 'iteration')}`);
    if (run.iterations > run.attempt * HARD_MAX_ITERATIONS) impossible(['iterations'], `${run.iterations} is past the hard cap of ${HARD_MAX_ITERATIONS} per attempt × ${run.attempt} attempts`);
    for (const side of ['input', 'output'] as const) {
      const count = run.tokens[side];
      const most = run.iterations * MAX_TOKENS_PER_MODEL_CALL;
      if (count !== null && count > most) impossible(['tokens', side], `${count} is more than ${run.iterations} model calls could use (${most})`);
    }
  });
export type RunSnapshot = z.infer<typeof runSnapshotSchema>;

/** More than any model's context window and reply together: a saved count above this × iterations is not a real one. */
const MAX_TOKENS_PER_MODEL_CALL = 2_000_000;

/** Who made a tool call: the model, a program the model wrote (code mode), or the harness itself (a layer). */
export type CallOrigin = 'model' | 'program' | 'harness';

export interface CallOptions {
  by?: CallOrigin;
  /** A tighter time limit from the caller (a program's remaining time). */
  withinMs?: number;
}

/** The run's limits on each tool call; `guardrails` narrows them. */
export interface ToolLimits {
  /** The most one call may take. */
  callMs: number;
  /** The run's wall-clock end (epoch ms) on the agent's clock: every model wait (agentMs) moves it later; no call outlasts it. */
  deadline?: number;
}

export interface RunContextOptions {
  /** Aborted when the run's time is up: every wait in the run gives way to it. */
  signal?: AbortSignal;
  toolTimeoutMs?: number;
  carried?: Carried;
  /** The task's postconditions bound to the run's start, read each time (what `verify` checks); none for a bare prompt. */
  postconditions?: () => readonly Postcondition[];
  /** Which task this is, beyond its prompt, when the caller knows (what `subroutines` keys its files by). */
  taskId?: TaskId;
  /** The site the run acts on; layers read its origin, its classifier and its sign-in. */
  site?: SiteView;
  /** The run's clock of model waits (a slot, a rate limit), shared with the caller; by default the run's own. */
  modelWaits?: ModelWaits;
}

/** A task's name and revision: runs of two revisions are two tasks. */
export interface TaskId {
  name: string;
  revision: number;
}

/** The site account the harness may use. It never enters a prompt, the trace or a log. */
export interface Credentials {
  username: string;
  password: string;
}

/**
 * What a layer sees of a run, and the few named things it may do: push a message, replace the
 * conversation (trimming), record an event, stop with a reason.
 */
export class RunContext {
  readonly trace: Trace;
  readonly startedAt = Date.now();
  /** Token counts so far; null once any model answer's count was unusable (unknown, not zero). */
  readonly tokens: Usage = { input: 0, output: 0 };
  /** The usable counts alone, summed: a floor under the real total, which budgets can still hold. */
  readonly knownTokens = { input: 0, output: 0 };
  readonly limits: ToolLimits;
  readonly signal?: AbortSignal;
  /** Time the run's model calls spent waiting on their endpoint: not the agent's time (agentMs). */
  readonly modelWaits: ModelWaits;
  /** The task's name and revision, when the caller gave them; a bare prompt has none. */
  readonly taskId?: TaskId;
  /** The site the run acts on, when the caller gave it. */
  readonly site?: SiteView;
  /** The tool calls in progress, innermost last (a program's call inside run_program): what a browser request is charged to. */
  private readonly calling: ToolCall[] = [];
  /** Refusals of page loads and actions, by the call in progress they happened under: its outcome becomes the first. */
  private readonly refusals = new Map<ToolCall, RequestRefusal>();
  private readonly carried?: Carried;
  /** What died of the browser (`the browser page crashed`), until a layer reopens the session. */
  private browserGone?: string;
  private unwatchBrowser = () => {};
  /** Removes the attempt's request check from its browser contexts. */
  private unrouteRequests: Array<() => Promise<void>> = [];
  /** Model turns in the whole run, and in the current attempt. */
  iterations = 0;
  attemptIterations = 0;
  attempt = 0;
  private conversation: ChatMessage[] = [];
  private stopReason?: { reason: StopReason; detail: string };
  private session?: { page: Page; tools: ToolRegistry; state: ToolState; layers: readonly Layer[]; openFresh?: () => Promise<Page> };

  /** The values that never leave the run: the site's password, API keys, the site's sessions (read each time: issued during the run). */
  get secrets(): readonly string[] {
    const given = typeof this.givenSecrets === 'function' ? this.givenSecrets() : this.givenSecrets;
    return [...given, ...(this.credentials ? [this.credentials.password] : [])];
  }
  private readonly givenSecrets: readonly string[] | (() => readonly string[]);

  /** The task's postconditions, bound to the run's start (what `verify` and `stop-on-success` check); none for a bare prompt. */
  get postconditions(): readonly Postcondition[] {
    return this.givenPostconditions();
  }
  private readonly givenPostconditions: () => readonly Postcondition[];

  constructor(
    readonly task: string,
    readonly model: Model,
    readonly systemPrompt: string,
    readonly credentials: Credentials | undefined,
    secrets: readonly string[] | (() => readonly string[]),
    options: RunContextOptions = {},
  ) {
    this.site = options.site;
    this.signal = options.signal;
    this.modelWaits = options.modelWaits ?? new WaitClock();
    this.givenPostconditions = options.postconditions ?? (() => []);
    this.taskId = options.taskId;
    this.carried = options.carried;
    this.limits = { callMs: options.toolTimeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS };
    this.givenSecrets = secrets;
    this.trace = new Trace(() => this.secrets);
  }

  /** The value with every secret replaced: for anything the run hands out besides the trace. */
  redact<T>(value: T): T {
    return redact(value, this.secrets);
  }

  /** The run as data after a step: what `durable` saves, and `resume` takes back in a new process. */
  snapshot(): RunSnapshot {
    return this.redact({
      attempt: this.attempt,
      iterations: this.iterations,
      attemptIterations: this.attemptIterations,
      tokens: { ...this.tokens },
      // Images stay out of saved runs: their text names them (a resumed run can take them again).
      messages: withoutImages(this.conversation),
      trace: [...this.trace.events],
      ...(this.carried && { carried: this.carried.save() }),
    });
  }

  resume(saved: RunSnapshot): void {
    if (saved.carried !== undefined) this.carried?.restore(saved.carried);
    Object.assign(this.tokens, saved.tokens);
    Object.assign(this.knownTokens, { input: saved.tokens.input ?? 0, output: saved.tokens.output ?? 0 });
    this.iterations = saved.iterations;
    this.attemptIterations = saved.attemptIterations;
    this.conversation = [...saved.messages];
    this.trace.restore(saved.trace);
  }

  /**
   * Starts an attempt on a fresh page: a new conversation, new tools, no claim. `openFresh` opens
   * a page in a fresh browser session, for `reopen`.
   */
  async beginAttempt(page: Page, layers: readonly Layer[] = [], openFresh?: () => Promise<Page>): Promise<void> {
    this.attempt += 1;
    this.attemptIterations = 0;
    this.stopReason = undefined;
    // The session first, so that layers shaping the tools can already reach the page.
    this.session = { page, state: {}, tools: new ToolRegistry([]), layers, openFresh };
    this.watchBrowser(page);
    await this.checkRequestsIn(page.context());
    this.session.tools = this.toolsOn(page);
    this.conversation = [
      { role: 'system', content: this.systemPrompt },
      { role: 'user', content: this.task },
    ];
    this.record({ type: 'attempt_start' });
  }

  /**
   * Goes on in a fresh browser session after the browser died mid-attempt (the `recovery` layer):
   * the tools are built again on the new page; the conversation, the claim and the counts stay.
   * The dead session is closed with the attempt. Throws when no session can be opened.
   */
  async reopen(): Promise<Page> {
    const session = this.current;
    if (!session.openFresh) throw new Error('this run cannot open a fresh browser session');
    const page = await session.openFresh();
    session.page = page;
    session.tools = this.toolsOn(page);
    this.browserGone = undefined;
    this.watchBrowser(page);
    await this.checkRequestsIn(page.context());
    return page;
  }

  /**
   * Puts every request of `context` to the layers' `checkRequest`, when any layer has one: a route
   * registered after the site's own, so it is asked first. The site's requests are answered hop by
   * hop (the site's `serve`, else from its `fetch`), so that a redirect's every hop is checked too:
   * Playwright does not route the request a fulfilled redirect leads to. Others it hands on (`fallback`).
   */
  private async checkRequestsIn(context: BrowserContext): Promise<void> {
    if (!this.current.layers.some((layer) => layer.checkRequest)) return;
    const handler = (route: Route) => this.routeRequest(route);
    await context.route('**/*', handler);
    this.unrouteRequests.push(() => context.unroute('**/*', handler).catch(() => {}));
  }

  private routeRequest(route: Route): Promise<void> {
    return routeChecked(route, this.site, this.calling.at(-1), (request) => this.checkRequest(request));
  }

  /** The layers' verdict on one request: the first refusal, charged to the call in progress when it was a page load or an action. */
  private async checkRequest(request: BrowserRequest): Promise<RequestRefusal | undefined> {
    const refusal = await firstRefusal(this.current.layers, this, request);
    if (refusal && request.call && (request.navigation || request.action) && !this.refusals.has(request.call)) this.refusals.set(request.call, refusal);
    return refusal;
  }

  /** The browser tools and the site's own, bound to `page`, as the layers shape them (the session's page is `page` already). */
  private toolsOn(page: Page): ToolRegistry {
    const { layers, state } = this.current;
    const tools = browserTools(page, state, { siteTools: this.site?.tools?.(page) });
    return new ToolRegistry(layers.reduce<readonly Tool[]>((offered, layer) => layer.tools?.(this, offered) ?? offered, tools));
  }

  /**
   * Runs one tool call through the layers' `aroundTool` hooks (permissions, approval, output…)
   * and the registry, with its call and result in the trace. The loop, code mode and layers acting
   * for the harness all use it, so every call meets the same checks; `by` says whose call it is.
   * A call the model makes runs only if the model was offered the tool. Each call has a time limit,
   * and gives way at once when the run is aborted (RunAborted).
   */
  async callTool(call: ToolCall, { by = 'model', withinMs }: CallOptions = {}): Promise<ToolOutcome> {
    this.checkAborted();
    this.record({ type: 'tool_call', callId: call.id, name: call.name, arguments: call.arguments, by });
    const started = performance.now();
    const execute = this.current.layers.reduceRight<() => Promise<ToolOutcome>>(
      (next, layer) => (layer.aroundTool ? () => layer.aroundTool!(this, call, next, by) : next),
      () => this.chargingRequests(call, () => this.runTool(call, by, withinMs)),
    );
    const outcome = await this.unlessAborted(execute());
    const ms = Math.round(performance.now() - started);
    if (outcome.ok) this.record({ type: 'tool_result', callId: call.id, name: call.name, ok: true, output: outcome.output, ms });
    else this.record({ type: 'tool_result', callId: call.id, name: call.name, ok: false, error: outcome.error, kind: outcome.kind, ms });
    return outcome;
  }

  /** Runs `work` with the browser's requests charged to `call`: a page load or an action refused meanwhile is its outcome. */
  private async chargingRequests(call: ToolCall, work: () => Promise<ToolOutcome>): Promise<ToolOutcome> {
    this.calling.push(call);
    try {
      const outcome = await work();
      return this.refusals.get(call) ?? outcome;
    } finally {
      this.calling.splice(this.calling.lastIndexOf(call), 1);
      this.refusals.delete(call);
    }
  }

  /** The call itself, once the layers let it through: offered to its caller, within its time, its output cut to size. */
  private async runTool(call: ToolCall, by: CallOrigin, withinMs = Infinity): Promise<ToolOutcome> {
    const tool = this.current.tools.get(call.name);
    if (by === 'model' && tool?.hidden) {
      const offered = this.current.tools.schemas().map((schema) => schema.name);
      return { ok: false, kind: 'unknown_tool', error: `unknown tool "${call.name}": it is not offered to the model (tools: ${offered.join(', ')})` };
    }
    const limit = Math.floor(Math.min(this.limits.callMs, tool?.timeoutMs ?? Infinity, withinMs, (this.limits.deadline ?? Infinity) - this.startedAt - this.agentMs()));
    if (limit <= 0) return { ok: false, kind: 'timeout', error: `${call.name} was not run: the run's time is up` };
    const outcome = await race(this.current.tools.call(call), { ms: limit });
    if (outcome === TIMED_OUT) return { ok: false, kind: 'timeout', error: `${call.name} did not finish within its time limit of ${limit} ms, and was abandoned` };
    if (!outcome.ok) return outcome;
    const { value, cut } = capStrings(outcome.output);
    for (const { path, chars } of cut) this.record({ type: 'harness_note', layer: 'harness', message: `${call.name} ${call.id}: ${path} was ${chars} characters, cut to its first ${MAX_OUTPUT_CHARS}` });
    return { ok: true, output: value };
  }

  /** Adds a model call's tokens; an unusable count makes the run's total unknown (null) from then on, with a note why. */
  countTokens(usage: Usage): void {
    const known = this.tokens.input !== null && this.tokens.output !== null;
    this.knownTokens.input += usage.input ?? 0;
    this.knownTokens.output += usage.output ?? 0;
    Object.assign(this.tokens, addUsage(this.tokens, usage));
    if (known && (this.tokens.input === null || this.tokens.output === null)) {
      this.record({ type: 'harness_note', layer: 'harness', message: `the run's token counts are unknown: the model's answer had no usable count (${usage.problem ?? 'not a number'})` });
    }
  }

  /** `work`'s outcome, unless the run is aborted first: then RunAborted, and `work` is abandoned. */
  async unlessAborted<T>(work: T | Promise<T>): Promise<T> {
    return (await race(Promise.resolve(work), { signal: this.signal })) as T;
  }

  /** Throws RunAborted once the run's signal has aborted: nothing more may start. */
  checkAborted(): void {
    if (this.signal?.aborted) throw new RunAborted(`the run was cut short: ${abortReason(this.signal)}`);
  }

  /** Ends the attempt's watch on its browser (closing it from here on is the harness's own doing) and its request check (the test's context outlives the run). */
  async endAttempt(): Promise<void> {
    this.unwatchBrowser();
    this.unwatchBrowser = () => {};
    for (const unroute of this.unrouteRequests.splice(0)) await unroute();
  }

  /** Why the browser is gone, if it died under the run and no layer reopened it. */
  get browserClosed(): string | undefined {
    return this.browserGone && `${this.browserGone} mid-run, so the run cannot go on`;
  }

  /**
   * A page that crashes, or a page, context or browser that closes, mid-attempt: the layers that
   * take the loss on (`onBrowserLost`) are told; with none, the run stops with `error`, saying so.
   */
  private watchBrowser(page: Page): void {
    this.unwatchBrowser();
    const context = page.context();
    const browser = context.browser();
    const lost = (what: string) => () => {
      if (this.browserGone) return;
      this.browserGone = what;
      const takers = this.current.layers.filter((layer) => layer.onBrowserLost);
      for (const layer of takers) layer.onBrowserLost!(this, what);
      if (takers.length === 0) this.stop('error', this.browserClosed!);
    };
    const onCrash = lost('the browser page crashed');
    const onPage = lost('the browser page closed');
    const onContext = lost('the browser context closed');
    const onBrowser = lost('the browser closed');
    page.on('crash', onCrash);
    page.on('close', onPage);
    context.on('close', onContext);
    browser?.on('disconnected', onBrowser);
    this.unwatchBrowser = () => {
      page.off('crash', onCrash);
      page.off('close', onPage);
      context.off('close', onContext);
      browser?.off('disconnected', onBrowser);
    };
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

  /** Appends an event to the trace; a layer's own (`type: 'custom'`) is checked first: bad data is an InputError naming the field. */
  record(event: TraceEventBody): void {
    const checked = event.type === 'custom' ? parseInput(customEventSchema, event, `custom event of layer ${event.layer}`) : event;
    this.trace.append(checked, { attempt: this.attempt, iteration: this.iterations });
  }

  /** The run's time so far on the agent's clock: its wall time less its model waits (a slot, a rate limit), which are the endpoint's. */
  agentMs(): number {
    return Date.now() - this.startedAt - this.modelWaits.waitedMs();
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

/**
 * A routed request put to `check` (the layers' `checkRequest`), as the site's classifier sees it. The site's requests are
 * answered hop by hop (the site's `serve`, else from its `fetch`), so that a redirect's every hop is checked too:
 * Playwright does not route the request a fulfilled redirect leads to. Others it hands on (`fallback`), or refuses.
 * `call` is the tool call in progress it is charged to, if any.
 */
export async function routeChecked(route: Route, site: SiteView | undefined, call: ToolCall | undefined, check: (request: BrowserRequest) => Promise<RequestRefusal | undefined>): Promise<void> {
  const request = route.request();
  const seen = { navigation: request.isNavigationRequest(), resourceType: request.resourceType(), call };
  let hops = 0;
  const checkHop = (hop: Hop) => {
    const onSite = site !== undefined && new URL(hop.url).origin === site.origin;
    return check({ ...hop, ...seen, redirected: hops++ > 0, onSite, ...(onSite && { action: site.classify(hop) }) });
  };
  if (site && new URL(request.url()).origin === site.origin) {
    const hopCheck = async (hop: Hop) => (await checkHop(hop))?.error;
    return site.serve ? site.serve(route, hopCheck) : serveRoute(route, (sent) => site.fetch(sent), site.origin, { check: hopCheck });
  }
  const body = request.postData();
  if (!(await checkHop({ method: request.method(), url: request.url(), ...(body !== null && { body }) }))) return route.fallback();
  // A page load answered 204 No Content leaves the page where it was (an aborted one would show an error page).
  return seen.navigation ? route.fulfill({ status: 204 }) : route.abort('blockedbyclient');
}

/** The first refusal of `layers`' `checkRequest`, in stack order. */
export async function firstRefusal(layers: readonly Layer[], run: RunView, request: BrowserRequest): Promise<RequestRefusal | undefined> {
  for (const layer of layers) {
    const refusal = await layer.checkRequest?.(run, request);
    if (refusal) return refusal;
  }
  return undefined;
}
