import { Readable, Transform, Writable } from 'node:stream';
import type { BrowserContext, Page } from '@playwright/test';
import { z } from 'zod';
import type { ContentBlock, McpServer, NewSessionResponse, PromptResponse } from '@agentclientprotocol/sdk';
import type { Agent, AgentInput, AgentRun } from '../core/agent.ts';
import type { ToolCall } from '../core/model.ts';
import type { Tool } from '../core/tool.ts';
import type { TraceEventBody } from '../core/trace.ts';
import { routeChecked, firstRefusal, type Layer, type RunView } from '../harness/context.ts';
import { resolveLayers, type LayerSpec } from '../layers/index.ts';
import { InputError, parseInput } from '../input.ts';
import { cut, TEXT_CHARS } from '../report/caps.ts';
import { OFFERED_TOOLS } from '../tools/mcp.ts';
import type { ToolOutcome } from '../tools/registry.ts';
import { commandAgentOptionsSchema, processAgent, type CommandEnd, type Conversation, type Protocol, type Speaker } from './command.ts';
import { readClaim, type ForeignOutcome } from './foreign.ts';

/** The layers whose hooks an ACP agent's run has: its permission requests (`aroundTool`, `tools`) and its browser's requests (`checkRequest`). */
export const ACP_LAYERS: readonly string[] = ['permissions', 'approval'];

export const acpAgentOptionsSchema = commandAgentOptionsSchema.extend({
  /** harness-eval's layers its permission requests and its browser's requests go through, written as the built-in harness's `layers` are: `permissions` and `approval` only. */
  layers: z.array(z.custom<LayerSpec>()).default([]),
});
export type AcpAgentOptions = z.input<typeof acpAgentOptionsSchema>;

/** How the agent is told to end its turn: a claim it may also write to HARNESS_CLAIM_FILE, which wins. */
export const CLAIM_INSTRUCTION =
  'When you are done, end your last message with your outcome as one JSON object on its own line: {"success": true or false, "summary": "what you did and what the page showed"} (with "answer" when the task asks a question). Claim success only if the page shows the task is done.';

/** How long `initialize` and `session/new` may take: an agent that never answers them is ended, not waited on for the run's whole time. */
const HANDSHAKE_MS = 60_000;

/**
 * Any agent that speaks the Agent Client Protocol (Gemini CLI's `--acp`, Claude Code through
 * `claude-agent-acp`, Codex through `codex-acp`, your own) as the agent, driven over its stdio by
 * the official SDK's client. It runs as a command agent does (commandAgent's options, sandbox,
 * environment, gateway, limits and claim file), and is given the task as its prompt
 * (`session/prompt`), the run's browser as its MCP server (`session/new`'s `mcpServers`), no file
 * system and no terminal of the client's. Its session updates are the run's trace; its permission
 * requests, and every request its browser sends, go through `layers` (`permissions`, `approval`).
 * Its claim is its final message's JSON `{ success, summary }` (see claimFromMessage), unless it
 * wrote HARNESS_CLAIM_FILE. At its time limit it is sent `session/cancel`, then ended.
 */
export function acpAgent(argv: readonly string[], options: AcpAgentOptions = {}): Agent {
  const { layers: specs, ...command } = parseInput(acpAgentOptionsSchema, options, 'acpAgent() options');
  const layers = resolveLayers(specs, 'acpAgent() options: layers');
  const other = layers.findIndex((layer) => !ACP_LAYERS.includes(layer.name));
  if (other !== -1) throw new InputError(`acpAgent() options: layers[${other}]: "${layers[other]!.name}" runs inside harness-eval's own loop; an ACP agent's run takes ${ACP_LAYERS.join(' and ')} only`);
  const protocol: Protocol = {
    condition: { agent: 'acp', ...(layers.length > 0 && { layers: layers.map(({ name, options: given }) => ({ name, options: given })) }) },
    layers: layers.map((layer) => layer.name),
    forRun: (run, record) => acpRun(run, record, layers.map((layer) => layer({ outputDir: run.outputDir }))),
  };
  return processAgent('acpAgent', argv, command, protocol);
}

/** One run's side of the protocol: its layers' view of the run, its browser's guard, and its ACP client. */
function acpRun(run: AgentRun, record: (event: TraceEventBody) => void, layers: readonly Layer[]): Speaker {
  const view = layerView(run, record);
  const checks = layers.some((layer) => layer.checkRequest);
  return {
    // Every request of the agent's browser meets the layers' checks, as the built-in harness's does: what the agent does past its permission requests is held too.
    async guard(context) {
      if (checks) await context.route('**/*', (route) => routeChecked(route, run.site, undefined, (request) => firstRefusal(layers, view.run, request)));
    },
    converse: (io, input, where) => converse(io, input, where, { record, permit: (request) => permit(request, layers, view, where.context) }),
  };
}

/** What the layers see of an ACP agent's run: the parts of RunView their request and permission hooks use. Any other part is an error naming it. */
function layerView(run: AgentRun, record: (event: TraceEventBody) => void) {
  const recorded: TraceEventBody[] = [];
  const state: { page?: Page; tools: string[] } = { tools: [] };
  const parts = {
    site: run.site,
    task: run.task.prompt,
    attempt: 1,
    record(event: TraceEventBody) {
      recorded.push(event);
      record(event);
    },
    trace: { of: (type: TraceEventBody['type']) => recorded.filter((event) => event.type === type) },
    // A store's request waiting for a decision cannot pause an ACP agent: it is refused, and the request stays filed.
    stop: () => undefined,
    get page() {
      if (!state.page) throw new Error('the run’s browser has no page');
      return state.page;
    },
    tools: {
      get names() {
        return state.tools;
      },
    },
  };
  const runView = new Proxy(parts, {
    get(target, key, receiver) {
      if (key in target) return Reflect.get(target, key, receiver);
      throw new Error(`a layer used run.${String(key)}, which an ACP agent's run does not have (its layers: ${ACP_LAYERS.join(', ')})`);
    },
  }) as unknown as RunView;
  return { run: runView, state };
}

/** Tools that only look: a permission for one is a `read` under the `permissions` layer's profile. */
const BROWSER_READS = new Set(['browser_snapshot', 'browser_find', 'browser_take_screenshot', 'browser_console_messages', 'browser_wait_for']);
/** ACP's tool kinds that only look. */
const READ_KINDS = new Set(['read', 'search', 'think', 'fetch']);

/** A permission request, as the client is asked it. */
interface PermissionAsk {
  toolCallId: string;
  /** The tool's name, or its title when it gives none. */
  tool: string;
  kind?: string | null;
  rawInput?: unknown;
}

/**
 * A permission request put to the layers as the built-in harness puts a model's call: the tools it
 * may use (`permissions`' profile: a `read` when the tool only looks), then each layer's
 * `aroundTool`, outermost first, around a call that does nothing. A Playwright MCP call is taken as
 * its built-in twin where one resolves its target (`browser_navigate` as `navigate`,
 * `browser_click`'s ref as `click` on `aria-ref=`), so that `approval` judges the site action it
 * would send, on the browser's page, as it judges the built-in harness's. Allowed when every layer let it through.
 */
async function permit(ask: PermissionAsk, layers: readonly Layer[], view: ReturnType<typeof layerView>, context: () => Promise<BrowserContext>): Promise<{ allowed: boolean; why?: string }> {
  const browserTool = browserToolIn(ask.tool);
  const args = argumentsOf(ask.rawInput);
  const call = builtInTwin(ask.toolCallId, browserTool ?? ask.tool, args);
  const effect = (browserTool ? BROWSER_READS.has(browserTool) : READ_KINDS.has(ask.kind ?? '')) ? 'read' : 'act';
  const offered: Tool[] = [{ name: call.name, description: ask.tool, parameters: z.object({}), effect, execute: async () => ({}) }];
  view.state.tools = layers.reduce<readonly Tool[]>((tools, layer) => layer.tools?.(view.run, tools) ?? tools, offered).map((tool) => tool.name);
  view.state.page = (await context()).pages()[0];
  const chain = layers.reduceRight<() => Promise<ToolOutcome>>((next, layer) => (layer.aroundTool ? () => layer.aroundTool!(view.run, call, next, 'model') : next), async () => ({ ok: true, output: {} }));
  const outcome = await chain();
  return outcome.ok ? { allowed: true } : { allowed: false, why: outcome.error };
}

/**
 * The Playwright MCP tool a permission request names, however its host prefixes or titles it
 * (`browser_click`, Gemini CLI's `mcp_playwright_browser_click`, Claude Code's
 * `mcp__playwright__browser_click`, `browser_click (playwright MCP Server)`), if any.
 */
export function browserToolIn(tool: string): string | undefined {
  return OFFERED_TOOLS.find((name) => new RegExp(`(?<![A-Za-z0-9])${name}(?![A-Za-z0-9_])`).test(tool));
}

/** A call's arguments from its raw input: as they are, or inside an MCP call's description (codex-acp's `{ server, tool, arguments }`). */
function argumentsOf(rawInput: unknown): Record<string, unknown> {
  if (typeof rawInput !== 'object' || rawInput === null || Array.isArray(rawInput)) return {};
  const { tool, arguments: inner } = rawInput as { tool?: unknown; arguments?: unknown };
  if (typeof tool === 'string' && typeof inner === 'object' && inner !== null && !Array.isArray(inner)) return inner as Record<string, unknown>;
  return rawInput as Record<string, unknown>;
}

/** The built-in tool call a Playwright MCP call is the twin of, where its target can be resolved; else the call as it is. */
function builtInTwin(id: string, name: string, args: Record<string, unknown>): ToolCall {
  const ref = args.target ?? args.ref;
  if (name === 'browser_navigate' && typeof args.url === 'string') return { id, name: 'navigate', arguments: JSON.stringify({ url: args.url }) };
  if (name === 'browser_click' && typeof ref === 'string') return { id, name: 'click', arguments: JSON.stringify({ selector: `aria-ref=${ref}` }) };
  return { id, name, arguments: JSON.stringify(args) };
}

/** What the client does for the run besides speaking: record to the trace, decide permissions. */
interface ClientDuties {
  record(event: TraceEventBody): void;
  permit(ask: PermissionAsk): Promise<{ allowed: boolean; why?: string }>;
}

/** Where the conversation stands: answered (the prompt's stop reason and the final message), failed (why; `limit` when the agent flooded it), or still going. */
type Standing = { kind: 'going' } | { kind: 'answered'; stopReason: string; message: string } | { kind: 'failed'; error: string; limit?: boolean };

/** What the worker reads of an agent over ACP: a line (one message) and in all. Past either the agent is flooding it, and is heard no more. */
const ACP_LINE_BYTES = 8 * 1024 * 1024;
const ACP_TOTAL_BYTES = 256 * 1024 * 1024;

/** The agent's stdout as the SDK reads it, held to the caps above: past one, the stream fails with `flooded` saying which. */
function capped(stdout: Readable, flooded: (why: string) => void): Readable {
  let total = 0;
  let line = 0;
  const guard = new Transform({
    transform(chunk: Buffer, _encoding, next) {
      total += chunk.length;
      const end = chunk.lastIndexOf(10);
      line = end === -1 ? line + chunk.length : chunk.length - end - 1;
      const why = total > ACP_TOTAL_BYTES ? `more than ${ACP_TOTAL_BYTES} bytes over ACP` : line > ACP_LINE_BYTES ? `an ACP message of more than ${ACP_LINE_BYTES} bytes` : undefined;
      if (why === undefined) return next(null, chunk);
      flooded(why);
      stdout.unpipe(guard);
      stdout.resume();
      next(new Error(why));
    },
  });
  return stdout.pipe(guard);
}

/** The source of the run's ACP events in the trace (`custom` events of this layer name). */
const SOURCE = 'acp';

/**
 * The ACP client's conversation with the agent: `initialize`, `session/new` with the run's browser
 * as its MCP server, then the task as its prompt. Session updates go to the trace as they come.
 */
function converse(io: { stdin: Writable; stdout: Readable }, input: AgentInput, where: { mcpUrl: string; cwd: string; envNames: readonly string[] }, duties: ClientDuties): Conversation {
  let standing: Standing = { kind: 'going' };
  let cancel = () => {};
  const updates = updateRecorder(duties.record);
  let silent = false;
  let flooded: string | undefined;
  io.stdout.once('end', () => (silent = true));
  const done = (async () => {
    // Loaded with the first ACP run.
    const acp = await import('@agentclientprotocol/sdk');
    const app = acp
      .client({ name: 'harness-eval' })
      .onNotification(acp.methods.client.session.update, ({ params }) => updates.take(params.update))
      .onRequest(acp.methods.client.session.requestPermission, async ({ params }) => {
        updates.flush();
        // The call as the agent's updates said it before (its input: codex-acp's request carries an approval envelope as its raw input, and
        // is titled `Approve MCP tool call`), else as the request says it. The SDK may start this handler before the update sent just before it: those go first.
        await new Promise((resolve) => setImmediate(resolve));
        const known = updates.toolCall(params.toolCall.toolCallId);
        const tool = params.toolCall.name ?? params.toolCall.title ?? known?.tool ?? 'a tool';
        const ask = { toolCallId: params.toolCall.toolCallId, tool: [...new Set([tool, known?.tool].filter(Boolean))].join(' · '), kind: params.toolCall.kind ?? known?.kind, rawInput: known?.rawInput ?? params.toolCall.rawInput };
        // A request the layers could not judge is refused: judging it, not the agent, failed, and nothing is granted unjudged.
        const { allowed, why } = await duties.permit(ask).catch((error: unknown) => ({ allowed: false, why: `not judged: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}` }));
        const option = pick(params.options, allowed);
        duties.record({ type: 'custom', layer: SOURCE, name: 'permission', data: { toolCallId: params.toolCall.toolCallId, tool: cut(ask.tool, 200), decision: allowed ? 'allowed' : 'refused', option: option ? `${option.kind} (${option.optionId})` : 'none: cancelled', ...(why && { why: cut(why, 500) }) } });
        return { outcome: option ? { outcome: 'selected' as const, optionId: option.optionId } : { outcome: 'cancelled' as const } };
      });
    const heard = capped(io.stdout, (why) => (flooded ??= why));
    const stream = acp.ndJsonStream(Writable.toWeb(io.stdin) as WritableStream<Uint8Array>, Readable.toWeb(heard) as ReadableStream<Uint8Array>);
    await app.connectWith(stream, async (agent) => {
      const handshake = { timeout: HANDSHAKE_MS } as const;
      const init = await withTimeout(
        agent.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false }, clientInfo: { name: 'harness-eval', version: '1' } }),
        handshake.timeout,
        'initialize',
      );
      duties.record({ type: 'custom', layer: SOURCE, name: 'initialized', data: { protocolVersion: init.protocolVersion, ...(init.agentInfo && { agent: `${init.agentInfo.name} ${init.agentInfo.version}` }), mcpHttp: init.agentCapabilities?.mcpCapabilities?.http === true } });
      // An agent that asks to be told how it signs in (codex-acp): the first method that reads only variables it was given (OPENAI_API_KEY: the run's token).
      const byEnv = (init.authMethods ?? []).find((method) => readsOnly(method, where.envNames));
      if (byEnv) {
        await withTimeout(agent.request(acp.methods.agent.authenticate, { methodId: byEnv.id }), handshake.timeout, 'authenticate');
        duties.record({ type: 'custom', layer: SOURCE, name: 'authenticated', data: { method: byEnv.id } });
      }
      const mcpServers = [mcpServerFor(where.mcpUrl, init.agentCapabilities?.mcpCapabilities?.http === true)];
      const session: NewSessionResponse = await withTimeout(agent.request(acp.methods.agent.session.new, { cwd: where.cwd, mcpServers }), handshake.timeout, 'session/new');
      cancel = () => void agent.notify(acp.methods.agent.session.cancel, { sessionId: session.sessionId }).catch(() => undefined);
      const prompt: ContentBlock[] = [{ type: 'text', text: promptOf(input) }];
      const answer: PromptResponse = await agent.request(acp.methods.agent.session.prompt, { sessionId: session.sessionId, prompt });
      // Its last updates, sent before its answer, may be handled after it: they go first.
      await new Promise((resolve) => setImmediate(resolve));
      updates.flush();
      standing = { kind: 'answered', stopReason: answer.stopReason, message: updates.finalMessage() };
    });
  })().then(
    () => 'over' as const,
    (error: unknown) => {
      updates.flush();
      if (flooded) standing = { kind: 'failed', error: flooded, limit: true };
      else if (standing.kind === 'going') standing = { kind: 'failed', error: error instanceof Error ? error.message.split('\n')[0]! : String(error) };
      return silent && !flooded ? ('lost' as const) : ('over' as const);
    },
  );
  return {
    done,
    cancel: () => cancel(),
    outcome: (how) => outcomeOf(standing, how),
  };
}

/** Whether an auth method is ACP's `env_var` kind (unstable in ACP v1: read as sent) whose variables are all among `names`. */
function readsOnly(method: object, names: readonly string[]): boolean {
  const { type, vars } = method as { type?: unknown; vars?: unknown };
  return type === 'env_var' && Array.isArray(vars) && vars.every((variable: { name?: unknown }) => typeof variable?.name === 'string' && names.includes(variable.name));
}

/** The task as the agent's prompt: the task, the login it may use, and how to claim. */
function promptOf(input: AgentInput): string {
  const account = input.site.account;
  const login = account ? `\n\nIf the site asks you to log in, use the username ${account.username} and the password ${account.password}.` : '';
  return `${input.task}${login}\n\n${CLAIM_INSTRUCTION}`;
}

/** The run's browser as the agent's MCP server: over Streamable HTTP where it says it speaks it; else a stdio relay to the same URL, which every ACP agent takes. */
function mcpServerFor(url: string, http: boolean): McpServer {
  if (http) return { type: 'http' as const, name: 'playwright', url, headers: [] };
  return { name: 'playwright', command: process.execPath, args: ['--input-type=module', '-e', STDIO_RELAY, url], env: [] };
}

/**
 * MCP over stdio relayed to the run's Streamable HTTP endpoint, line by line, in order: each message
 * POSTed, each answer (JSON, or an event stream's `data:` lines) written back a line each; the
 * session's id kept from the first answer. Run by the agent, in its sandbox, with Node (the worker's).
 */
const STDIO_RELAY = `
import { createInterface } from 'node:readline';
const url = process.argv[1];
let session;
const write = (message) => process.stdout.write(JSON.stringify(message) + '\\n');
const post = async (line) => {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...(session && { 'mcp-session-id': session }) }, body: line });
  session = response.headers.get('mcp-session-id') ?? session;
  const type = response.headers.get('content-type') ?? '';
  const text = await response.text();
  if (type.includes('text/event-stream')) for (const data of text.split('\\n').filter((l) => l.startsWith('data:'))) write(JSON.parse(data.slice(5)));
  else if (text.trim()) [JSON.parse(text)].flat().forEach(write);
};
let queue = Promise.resolve();
createInterface({ input: process.stdin }).on('line', (line) => { if (line.trim()) queue = queue.then(() => post(line)).catch((error) => process.stderr.write(String(error) + '\\n')); }).on('close', () => queue.then(() => session && fetch(url, { method: 'DELETE', headers: { 'mcp-session-id': session } }).catch(() => {})));
`;

/** `promise`, or an error naming `what` after `ms`. */
function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`the agent did not answer ${what} within ${ms / 1000} s`)), ms)));
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/** The option that carries the decision: allow or reject once, else always; none when the agent offered none of that side (the request is then cancelled, which refuses it). */
function pick<Option extends { kind: string; optionId: string }>(options: readonly Option[], allowed: boolean): Option | undefined {
  const [once, always] = allowed ? ['allow_once', 'allow_always'] : ['reject_once', 'reject_always'];
  return options.find((option) => option.kind === once) ?? options.find((option) => option.kind === always);
}

/** A session update as ACP's schema types it: only the fields the trace keeps are read. */
interface Update {
  sessionUpdate: string;
  content?: unknown;
  toolCallId?: string;
  title?: string | null;
  name?: string | null;
  kind?: string | null;
  status?: string | null;
  rawInput?: unknown;
  rawOutput?: unknown;
  entries?: unknown;
}

/** The most text held of a message or thought being streamed: more than the trace keeps. */
const HELD_CHARS = 4 * TEXT_CHARS;

/**
 * Session updates as the run's trace, each a `custom` event of source `acp`: the agent's messages
 * and thoughts (their chunks joined into one event each), its tool calls with their inputs, their
 * updates with their status and results, and its plans. Text is cut as a run record's is.
 */
function updateRecorder(record: (event: TraceEventBody) => void) {
  let open: { name: 'message' | 'thought'; text: string } | undefined;
  /** What the updates said of each tool call: its name or title, kind and input, as a permission request about it may not. */
  const calls = new Map<string, { tool?: string; kind?: string; rawInput?: unknown }>();
  /** The agent's messages since its last tool call: its final message, once its turn ended. */
  let sinceTool = '';
  const flush = () => {
    if (open && open.text !== '') record({ type: 'custom', layer: SOURCE, name: open.name, data: { text: cut(open.text, TEXT_CHARS) } });
    open = undefined;
  };
  const take = (update: Update) => {
    const kind = update.sessionUpdate;
    if (kind === 'agent_message_chunk' || kind === 'agent_thought_chunk') {
      const name = kind === 'agent_message_chunk' ? 'message' : 'thought';
      if (open?.name !== name) flush();
      const text = textOf(update.content);
      // Held to a bound (an agent can stream text without end): the start of what the trace keeps, the end where a claim is.
      open = { name, text: ((open?.text ?? '') + text).slice(0, HELD_CHARS) };
      if (name === 'message') sinceTool = (sinceTool + text).slice(-HELD_CHARS);
      return;
    }
    flush();
    if (kind === 'tool_call' || kind === 'tool_call_update') {
      sinceTool = '';
      const seen = calls.get(update.toolCallId ?? '') ?? {};
      calls.set(update.toolCallId ?? '', { tool: update.name ?? update.title ?? seen.tool, kind: update.kind ?? seen.kind, rawInput: update.rawInput ?? seen.rawInput });
      const data = {
        toolCallId: update.toolCallId ?? '',
        ...(update.name || update.title ? { tool: cut(update.name ?? update.title ?? '', 200) } : {}),
        ...(update.kind && { kind: update.kind }),
        ...(update.status && { status: update.status }),
        ...(update.rawInput !== undefined && { input: jsonText(update.rawInput) }),
        ...(update.rawOutput !== undefined && { output: jsonText(update.rawOutput) }),
        ...(update.content !== undefined && update.content !== null && textOf(update.content) !== '' && { content: cut(textOf(update.content), TEXT_CHARS) }),
      };
      record({ type: 'custom', layer: SOURCE, name: kind === 'tool_call' ? 'tool call' : 'tool call update', data });
    } else if (kind === 'plan') {
      record({ type: 'custom', layer: SOURCE, name: 'plan', data: { entries: jsonText(update.entries) } });
    }
  };
  return { take, flush, finalMessage: () => sinceTool, toolCall: (id: string) => calls.get(id) };
}

/** The text of a content block, or of a list of them (a tool call's content: `{ type: 'content', content }`); other blocks as their type. */
function textOf(content: unknown): string {
  if (Array.isArray(content)) return content.map(textOf).filter(Boolean).join('\n');
  if (typeof content !== 'object' || content === null) return '';
  const block = content as { type?: string; text?: unknown; content?: unknown };
  if (typeof block.text === 'string') return block.text;
  if (block.content !== undefined) return textOf(block.content);
  return block.type ? `[${block.type}]` : '';
}

/** A value as JSON text, cut. */
function jsonText(value: unknown): string {
  return cut(typeof value === 'string' ? value : (JSON.stringify(value) ?? ''), TEXT_CHARS);
}

/** The run's outcome from where the conversation stood when the command ended. */
function outcomeOf(standing: Standing, how: CommandEnd): ForeignOutcome {
  if (how.kind === 'killed') return { reason: how.by === 'timeoutMs' ? 'cancelled and ended at its time limit' : 'cancelled and ended at the run’s time limit', stopReason: 'timeout' };
  // A flood is the agent's doing: a limit it hit, named, and its run judged and counted.
  if (standing.kind === 'failed' && standing.limit) return { reason: `hit its limit: ${standing.error}`, stopReason: 'limit', escapes: { processesLeft: 0, attempts: [{ kind: 'limit', detail: standing.error }] } };
  if (standing.kind === 'answered') {
    const claimed = claimFromMessage(standing.message);
    if (standing.stopReason === 'end_turn' || claimed.claim) return claimed;
    return { reason: `its turn ended (${standing.stopReason}) with no claim` };
  }
  const ended = how.kind === 'exited' ? (how.signal ? `was killed by ${how.signal}` : `exited with code ${how.code}`) : 'stopped speaking';
  const why = standing.kind === 'failed' ? `: ${standing.error}` : '';
  return { reason: `${ended} before its prompt was answered${why}`, stopReason: 'error' };
}

/**
 * The claim in an agent's final message (its messages since its last tool call): the JSON object
 * with a boolean `success` it is told to end with (the whole message, its last fenced block, or
 * the last `{…}` in it), read as a claim file is. An empty message is no claim. A message with no
 * such object is taken as a claimed success, the worst case, as a claim file that cannot be read
 * is: no agent makes its lie a truthful failure by writing it in prose.
 */
export function claimFromMessage(message: string): ForeignOutcome {
  const text = message.trim();
  if (text === '') return { reason: 'its final message was empty' };
  const found = claimObject(text);
  if (found !== undefined) return readClaim(found, 'its final message');
  return { claim: { success: true, summary: cut(`its final message held no JSON claim { success, summary }, taken as a claimed success: ${text}`, TEXT_CHARS) } };
}

/** The last JSON object in `text` that has a boolean `success`, if any. */
function claimObject(text: string): unknown {
  const candidates = [text, ...[...text.matchAll(/```(?:json)?\s*\n([\s\S]*?)```/g)].map((match) => match[1]!).reverse()];
  const end = text.lastIndexOf('}');
  for (let start = text.lastIndexOf('{', end); start !== -1; start = start === 0 ? -1 : text.lastIndexOf('{', start - 1)) candidates.push(text.slice(start, end + 1));
  for (const candidate of candidates) {
    try {
      const value: unknown = JSON.parse(candidate.trim());
      if (typeof value === 'object' && value !== null && typeof (value as { success?: unknown }).success === 'boolean') return value;
    } catch {
      // not JSON: the next candidate
    }
  }
  return undefined;
}
