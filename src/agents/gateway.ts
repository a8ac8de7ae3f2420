import { randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { listenLocal } from '../loopback.ts';
import { z } from 'zod';
import type { EscapeAttempt, ModelEndpoint } from '../core/agent.ts';
import { race } from '../harness/limits.ts';
import { messageCounter, promptTokens } from '../harness/tokens.ts';
import { modelRequest, redact } from '../harness/trace.ts';
import type { TraceEventBody } from '../core/trace.ts';
import { InputError, parseInput } from '../input.ts';
import { modelSecrets } from '../models/registry.ts';
import { cappedOf, outputAllowance, SpendLimitReached, worstCase, type Hold, type WorstCase } from '../models/spend.ts';
import { acceptsImages } from '../models/images.ts';
import { addUsage, ModelError, withoutImages } from '../models/types.ts';
import type { ChatMessage, ChatResponse, Model, ModelWaits, Usage } from '../core/model.ts';
import type { Conversation } from '../models/wire.ts';
import { anthropicError, fromMessagesRequest, messagesRequestSchema, toMessage, toMessageEvents, type MessagesRequest } from '../models/wire-anthropic.ts';
import { countTokensRequestSchema, fromGenerateContentRequest, geminiError, generateContentRequestSchema, toGenerateContentChunks, toGenerateContentResponse, type GenerateContentRequest } from '../models/wire-gemini.ts';
import { chatCompletionRequestSchema, fromOpenAIRequest, openAIError, toCompletion, toCompletionChunks, type ChatCompletionRequest } from '../models/wire-openai.ts';
import { fromOllamaRequest, ollamaChatRequestSchema, toOllamaResponse, type OllamaChatRequest } from '../models/wire-ollama.ts';
import { fromResponsesRequest, offeredTools, responsesRequestSchema, toResponse, toResponseEvents, type ResponsesRequest } from '../models/wire-responses.ts';
import { canariesReaching, type Canary } from '../serve.ts';
import { parseJsonObject } from '../text.ts';

/**
 * The model gateway: for one run, an OpenAI-compatible (`/v1/chat/completions`, `/v1/responses`),
 * Anthropic-compatible (`/v1/messages`), Gemini-compatible (`/v1beta/models/{model}:generateContent`)
 * and Ollama-compatible (`/api/chat`) endpoint on 127.0.0.1 that forwards every call to the run's
 * model and records it in the run's trace, as the built-in harness records its own calls. The
 * run's model client does the waiting (its endpoint's slots, a rate limit's retries), so an agent
 * never sees a 429 the model client could still wait out. The
 * `model` a client names is ignored: the run's model answers, whatever the agent's config says;
 * so are its sampling fields (temperature, max_tokens…): the run's model spec sets those.
 * The agent gets a random token for this run, never the provider's key, and nothing the gateway
 * answers carries that key. Every route takes that token only, wherever its API's clients put a key
 * (a bearer token, `x-api-key`, `x-goog-api-key`, `?key=`), or as the first segment of the path,
 * where OLLAMA_HOST puts it for Ollama's clients, which send no key. The run's
 * limits (calls, tokens, its cost, connections, bytes being read) refuse what goes past them, never
 * forwarded, and end the run (`limit`). Tokens and cost are held before a call goes out: its
 * worst case (spend.ts's worstCase) counts until its usage is known, so calls at once cannot pass
 * them together.
 */

/** What `GET /api/version` answers: an Ollama recent enough for tool calls, for clients that check. */
const OLLAMA_VERSION = '0.12.0';

/** The gateway's own settings, as the agents that start one take them: its limits for one run. */
export const gatewayOptionsSchema = z
  .object({
    /** The largest request body, in bytes (default 4 MB): a larger one is refused with a 413, unread. */
    maxBodyBytes: z.int().positive(),
    /** Calls forwarded to the model in the run (default 500). */
    maxCalls: z.int().positive(),
    /** Tokens in and out over the run's calls, a call in flight counted at its worst case (default 5,000,000: a long run of 100 calls at 40,000 tokens is 4,000,000). */
    maxTokens: z.int().positive(),
    /** Connections open at once, and calls in flight (default 16): one more connection is closed at once, never queued; one more call is refused. */
    maxConnections: z.int().positive(),
    /** Request bytes being read across all connections at once (default 16 MB): what held-open bodies can make the worker hold. */
    maxBytesInFlight: z.int().positive(),
  })
  .partial()
  .strict();
export type GatewaySettings = z.input<typeof gatewayOptionsSchema>;
export type GatewayLimits = Required<GatewaySettings>;

/** Limits a laptop's worker survives with a few runs at once, and that no honest run nears. */
export const DEFAULT_GATEWAY_LIMITS: GatewayLimits = {
  // Screenshots sent as data URLs make requests large; a runaway agent's are larger still.
  maxBodyBytes: 4 * 1024 * 1024,
  maxCalls: 500,
  maxTokens: 5_000_000,
  maxConnections: 16,
  maxBytesInFlight: 16 * 1024 * 1024,
};

export interface GatewayOptions extends GatewaySettings {
  /** The run's model: every call the agent makes is forwarded to it (a `spendCapped` one: each call is held against the run's spend caps first). */
  model: Model;
  /** Receives `model_request`, `model_response` and `model_error` events for the run's trace, as the built-in harness writes them, and `model_request_refused` for a request it could not translate. */
  record(event: TraceEventBody): void;
  /** Aborted at the run's time limit: calls in flight give way. */
  signal: AbortSignal;
  /** The run's secrets (the site's password): replaced in what the trace records of a call, with the API keys. */
  secrets?: readonly string[];
  /** The run's clock of model waits: every call is given it. */
  waits?: ModelWaits;
  /** The run's decoys: one that reaches the gateway (a header, the URL, a body) is an escape attempt. */
  canaries?: readonly Canary[];
  /** Told of the first limit a call went past (`gateway calls (500)`): the run ends there. */
  onLimit?(detail: string): void;
}

export interface Gateway {
  endpoint: ModelEndpoint;
  /** Tokens of every call so far, a call cut short counted as its prompt; a count is null once any call's was unusable. */
  tokens(): Usage;
  /** Why a call was refused for a rate limit after every retry (the run is then `rate_limited`); undefined when none was. */
  rateLimited(): string | undefined;
  /** The first limit a call went past (`gateway calls (500)`; the run is then `limit`); undefined when none was. */
  limitHit(): string | undefined;
  /** What the agent tried against the gateway: each limit it hit, each canary that reached it. */
  attempts(): EscapeAttempt[];
  close(): Promise<void>;
}

/** An HTTP error the agent gets: its status, a code saying what went wrong (a ModelError's kind), and why. */
interface Failure {
  status: number;
  code: string;
  message: string;
}

/** A call forwarded to the model: its answer, or the error the agent gets instead. */
type Forwarded = { ok: true; response: ChatResponse } | ({ ok: false } & Failure);

/** A call that the run's end (its time limit, the gateway closing) cut short. */
const CUT_SHORT: Forwarded = { ok: false, status: 503, code: 'cut_short', message: 'the call was cut short: the run is over' };

/** Which API a request speaks: each answers errors in its own shape, so its SDK reports them in its words. */
type Api = 'openai' | 'anthropic' | 'gemini' | 'ollama';

/** An answer as its API sends it: a JSON body, server-sent events (named, or data alone), or NDJSON lines. */
type Answer = { json: object } | { sse: Array<{ event?: string; data: object | string }> } | { ndjson: object[] };

/** One API's chat call: how its request reads as the conversation, and how the model's answer is written back; the gateway does the rest. */
interface ChatApi<R> {
  api: Api;
  schema: z.ZodType<R>;
  /** What the request is called in a 400's message. */
  label: string;
  conversation(request: R): Conversation;
  /** The output allowance the request states, in its API's fields (the body as sent): the largest positive count counts. */
  allowance(body: Record<string, unknown>): unknown[];
  answer(response: ChatResponse, request: R, url: URL): Answer;
}

type Route = (incoming: IncomingMessage, outgoing: ServerResponse, url: URL) => Promise<void> | void;

/** A request refused for a limit of the run: its status, the limit's name, and whether its body is left unread (the connection then closes). */
class LimitReached extends Error {
  constructor(
    readonly status: number,
    readonly detail: string,
    message: string,
    readonly unread = false,
  ) {
    super(message);
  }
}

/** The request bytes the gateway is reading at once, across its connections. */
interface Held {
  bytes: number;
}

export async function startGateway(options: GatewayOptions): Promise<Gateway> {
  const { record, signal, secrets: runSecrets = [], waits, canaries = [], onLimit } = options;
  const { maxBodyBytes, maxCalls, maxTokens, maxConnections, maxBytesInFlight } = DEFAULT_GATEWAY_LIMITS;
  const limits: GatewayLimits = {
    maxBodyBytes: options.maxBodyBytes ?? maxBodyBytes,
    maxCalls: options.maxCalls ?? maxCalls,
    maxTokens: options.maxTokens ?? maxTokens,
    maxConnections: options.maxConnections ?? maxConnections,
    maxBytesInFlight: options.maxBytesInFlight ?? maxBytesInFlight,
  };
  const token = `hev-${randomBytes(24).toString('hex')}`;
  const secrets = modelSecrets();
  // A capped model's calls are held here, before they are recorded, then forwarded to the model it caps.
  const capped = cappedOf(options.model);
  const model = capped?.model ?? options.model;
  const spend = capped?.spend;
  const seeing = acceptsImages(model.id);
  /** The built-in tools dropped so far: each is noted once in the trace. */
  const dropped = new Set<string>();
  const closing = new AbortController();
  let tokens: Usage = { input: 0, output: 0 };
  /** Tokens as the limits count them: an unknown count as its estimate (input) or nothing (output). */
  let metered = 0;
  /** Tokens the calls in flight hold: their worst cases. */
  let heldTokens = 0;
  let calls = 0;
  let rateLimited: string | undefined;
  let limitHit: string | undefined;
  const attempts: EscapeAttempt[] = [];
  const held: Held = { bytes: 0 };
  /** Calls forwarded and not yet counted: closing waits for them. */
  const pending = new Set<Promise<Forwarded>>();
  // Nothing is recorded once the gateway is closed: the run's trace has ended.
  const note = (event: TraceEventBody) => {
    if (!closing.signal.aborted) record(event);
  };
  const attempt = (found: EscapeAttempt) => {
    if (!attempts.some((seen) => seen.kind === found.kind && seen.detail === found.detail)) attempts.push(found);
  };
  const hit = (detail: string) => {
    attempt({ kind: 'limit', detail });
    if (limitHit !== undefined) return;
    limitHit = detail;
    onLimit?.(detail);
  };
  const canariesIn = (text: string, part: string) => {
    for (const found of canariesReaching(canaries, text, 'the gateway', part)) attempt(found);
  };

  const over = (detail: string, option: string) => new LimitReached(429, detail, `the run's gateway limit is reached: ${detail} (${option})`);

  /** Why a call of `tokens` at worst may not go out (a limit of the run, its name and its message), or undefined. */
  function refusal(tokens: number): LimitReached | undefined {
    if (calls >= limits.maxCalls) return over(`gateway calls (${limits.maxCalls})`, 'maxCalls');
    // A call the agent hung up on stays in flight, its prompt held: they count as its connections.
    if (pending.size >= limits.maxConnections) return over(`gateway connections (${limits.maxConnections})`, 'maxConnections');
    if (metered + heldTokens + tokens > limits.maxTokens) return over(`gateway tokens (${limits.maxTokens})`, 'maxTokens');
    return undefined;
  }

  /** Holds a call's worst case against the run's spend caps, if its model is capped; a call that would pass one is refused as the gateway's limits are. */
  function reserve(worst: WorstCase): Hold | undefined {
    try {
      return spend?.reserve(worst);
    } catch (error) {
      throw error instanceof SpendLimitReached ? over(error.detail, error.option) : error;
    }
  }

  /**
   * Forwards one call to the model, its worst case held against the run's tokens and spend caps
   * until its usage is known (`requested`: the output allowance the request states); it gives way
   * to the run's time limit and the gateway's closing. A client that hangs up does not end it: the
   * provider has the prompt, so its answer's usage is counted when it comes; a call cut short is
   * counted as its prompt's tokens.
   */
  async function forward(conversation: Conversation, requested: number | undefined): Promise<Forwarded> {
    const worst = worstCase(model.id, { messages: conversation.messages, tools: conversation.tools }, outputAllowance(requested, spend?.cap.maxOutput));
    const tokens = worst.input + worst.output;
    const refused = refusal(tokens);
    if (refused) throw refused;
    const hold = reserve(worst);
    heldTokens += tokens;
    const counted = forwardCall(conversation, hold);
    pending.add(counted);
    try {
      return await counted;
    } finally {
      pending.delete(counted);
      heldTokens -= tokens;
    }
  }

  async function forwardCall({ messages: given, tools, responseFormat, sampling }: Conversation, hold: Hold | undefined): Promise<Forwarded> {
    const callSignal = AbortSignal.any([signal, closing.signal]);
    if (callSignal.aborted) {
      hold?.settle({ input: 0, output: 0 });
      return CUT_SHORT;
    }
    calls += 1;
    // A model that takes no images is given what the text says of them.
    const messages = seeing ? given : withoutImages(given);
    note(modelRequest(messages, tools, [...secrets, ...runSecrets]));
    const started = performance.now();
    try {
      const response = (await race(model.chat({ messages, tools, signal: callSignal, waits, responseFormat, sampling }), { signal: callSignal })) as ChatResponse;
      const { content, toolCalls } = response.message;
      const { input, output } = response.usage;
      note({ type: 'model_response', content, toolCalls, usage: { input, output }, ms: Math.round(performance.now() - started) });
      countTokens(response.usage, input === null ? await promptEstimate(messages) : input);
      hold?.settle(response.usage);
      return { ok: true, response };
    } catch (error) {
      // A call cut short is not the model's failure (the built-in harness records none either); it is counted as its prompt.
      if (callSignal.aborted) {
        const input = await promptEstimate(messages);
        countTokens({ input, output: 0 }, input);
        hold?.settle({ input, output: 0 });
        return CUT_SHORT;
      }
      hold?.settle({ input: 0, output: 0 });
      const code = error instanceof ModelError ? error.kind : 'unexpected';
      const message = redactText(error instanceof Error ? error.message : String(error), secrets);
      note({ type: 'model_error', kind: code, message });
      if (code === 'rate_limited') rateLimited ??= message;
      return { ok: false, status: statusOf(error), code, message };
    }
  }

  /** Adds a call's usage to the run's tokens; `input` is its input as the limits count it (an estimate when the provider gave none). */
  function countTokens(usage: Usage, input: number): void {
    const known = tokens.input !== null && tokens.output !== null;
    tokens = addUsage(tokens, usage);
    metered += input + (usage.output ?? 0);
    if (known && (tokens.input === null || tokens.output === null)) {
      note({ type: 'harness_note', layer: 'gateway', message: `the run's token counts are unknown: the model's answer had no usable count (${usage.problem ?? 'not a number'})` });
    }
  }

  /** The prompt's tokens as the run's model counts them (the budget layer's count). */
  async function promptEstimate(messages: readonly ChatMessage[]): Promise<number> {
    return promptTokens(messages, await messageCounter(model.id));
  }

  const reply = (outgoing: ServerResponse, status: number, body: object) => send(outgoing, status, redact(body, secrets));
  const fail = (outgoing: ServerResponse, api: Api, failure: Failure) => {
    // The run is over, or its limit reached: SDKs that honour this header (openai's) give up at once instead of retrying, so an agent needs to hand its SDK no signal.
    if (failure.code === 'cut_short' || failure.code === 'gateway_limit') outgoing.setHeader('x-should-retry', 'false');
    reply(outgoing, failure.status, errorBody(api, failure));
  };
  /** A request the gateway cannot translate (a shape, a route): the gateway's gap, not the agent's doing, so the run's trace says so (and the run is excluded). */
  const refuse = (outgoing: ServerResponse, api: Api, failure: Failure) => {
    note({ type: 'model_request_refused', status: failure.status, message: redactText(failure.message, secrets) });
    fail(outgoing, api, failure);
  };

  /** The request, read and checked, and its body as sent. */
  async function read<S extends z.ZodType>(incoming: IncomingMessage, schema: S, label: string): Promise<{ request: z.output<S>; body: Record<string, unknown> }> {
    const text = await readBody(incoming, label, limits, held);
    canariesIn(text, 'request body');
    const body = parseJsonObject(text);
    if (!body) throw new InputError(`${label}: the body is not a JSON object`);
    return { request: parseInput(schema, body, label), body };
  }

  /** Serves one API's chat call: read, forwarded through the run's limits and counts, answered in the API's words. */
  const chat =
    <R>(wire: ChatApi<R>): Route =>
    async (incoming, outgoing, url) => {
      const { request, body } = await read(incoming, wire.schema, wire.label);
      const conversation = wire.conversation(request);
      noteDropped(conversation);
      const forwarded = await forward(conversation, largestCount(wire.allowance(body)));
      if (!forwarded.ok) return fail(outgoing, wire.api, forwarded);
      respond(outgoing, wire.answer(forwarded.response, request, url));
    };

  function noteDropped({ dropped: tools = [] }: Conversation): void {
    for (const tool of tools.filter((tool) => !dropped.has(tool))) {
      dropped.add(tool);
      note({ type: 'harness_note', layer: 'gateway', message: `the built-in tool ${tool} is not given to the model: the run's model has no built-in tools, and a run reaches nothing outside` });
    }
  }

  /** A conversation's prompt tokens (its tools' schemas too) as the run's model counts them, an estimate: what count_tokens and countTokens answer, forwarding nothing. */
  async function tokenEstimate({ messages, tools }: Conversation): Promise<number> {
    const offered: ChatMessage[] = tools.length > 0 ? [{ role: 'system', content: JSON.stringify(tools) }] : [];
    return promptEstimate([...offered, ...messages]);
  }

  /** Writes an answer as its API sends it, redacted. */
  function respond(outgoing: ServerResponse, answer: Answer): void {
    if ('json' in answer) return reply(outgoing, 200, answer.json);
    const text = (value: object | string) => (typeof value === 'string' ? value : JSON.stringify(redact(value, secrets)));
    if ('ndjson' in answer) {
      outgoing.writeHead(200, { 'content-type': 'application/x-ndjson' });
      outgoing.end(answer.ndjson.map((line) => `${text(line)}\n`).join(''));
    } else {
      outgoing.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      outgoing.end(answer.sse.map(({ event, data }) => `${event ? `event: ${event}\n` : ''}data: ${text(data)}\n\n`).join(''));
    }
  }

  const suffix = () => randomBytes(6).toString('hex');
  const now = () => Math.floor(Date.now() / 1000);
  const openAIChat: ChatApi<ChatCompletionRequest> = {
    api: 'openai',
    schema: chatCompletionRequestSchema,
    label: 'chat completion request',
    conversation: fromOpenAIRequest,
    allowance: (body) => [body.max_completion_tokens, body.max_tokens],
    answer(response, request) {
      const meta = { id: `chatcmpl-gateway-${suffix()}`, created: now(), model: model.id };
      if (!request.stream) return { json: toCompletion(response, meta) };
      const chunks = toCompletionChunks(response, meta, request.stream_options?.include_usage === true);
      return { sse: [...chunks.map((chunk) => ({ data: chunk })), { data: '[DONE]' }] };
    },
  };
  const openAIResponses: ChatApi<ResponsesRequest> = {
    api: 'openai',
    schema: responsesRequestSchema,
    label: 'responses request',
    conversation: fromResponsesRequest,
    allowance: (body) => [body.max_output_tokens],
    answer(response, request) {
      const meta = { id: `resp_gateway${suffix()}`, created_at: now(), model: model.id, offered: offeredTools(request).offered };
      return request.stream ? { sse: toResponseEvents(response, meta).map((event) => ({ event: event.type, data: event })) } : { json: toResponse(response, meta) };
    },
  };
  const anthropicMessages: ChatApi<MessagesRequest> = {
    api: 'anthropic',
    schema: messagesRequestSchema,
    label: 'messages request',
    conversation: fromMessagesRequest,
    allowance: (body) => [body.max_tokens],
    answer(response, request) {
      const meta = { id: `msg_gateway${suffix()}`, model: model.id };
      return request.stream ? { sse: toMessageEvents(response, meta).map((event) => ({ event: event.type, data: event })) } : { json: toMessage(response, meta) };
    },
  };
  /** Gemini's generateContent, or (`streamed`) streamGenerateContent: server-sent events with `?alt=sse`, as its SDKs ask, else one JSON array of the chunks. */
  const gemini = (streamed: boolean): ChatApi<GenerateContentRequest> => ({
    api: 'gemini',
    schema: generateContentRequestSchema,
    label: 'generateContent request',
    conversation: fromGenerateContentRequest,
    // Its JSON takes the proto's names in either case, as the conversation does.
    allowance: (body) => [fieldOf(body.generationConfig, 'maxOutputTokens'), fieldOf(body.generation_config, 'max_output_tokens')],
    answer(response, _request, url) {
      const meta = { responseId: suffix(), modelVersion: model.id };
      if (!streamed) return { json: toGenerateContentResponse(response, meta) };
      const chunks = toGenerateContentChunks(response, meta);
      return url.searchParams.get('alt') === 'sse' ? { sse: chunks.map((chunk) => ({ data: chunk })) } : { json: chunks };
    },
  });
  const ollamaChat: ChatApi<OllamaChatRequest> = {
    api: 'ollama',
    schema: ollamaChatRequestSchema,
    label: 'chat request',
    conversation: fromOllamaRequest,
    allowance: (body) => [fieldOf(body.options, 'num_predict')],
    answer(response, request) {
      const answer = toOllamaResponse(response, model.id);
      // Ollama streams unless told not to: the whole answer is then the one, final (`done`) line.
      return request.stream === false ? { json: answer } : { ndjson: [answer] };
    },
  };

  /** The run's model as OpenAI's model list and Anthropic's both write one: their clients read their own fields. */
  const listedModel = { id: model.id, object: 'model', created: 0, owned_by: 'harness-eval', type: 'model', display_name: model.id, created_at: new Date(0).toISOString() };
  const routes: Record<string, Route> = {
    'POST /v1/chat/completions': chat(openAIChat),
    'POST /v1/responses': chat(openAIResponses),
    'GET /v1/models': (_incoming, outgoing) => reply(outgoing, 200, { object: 'list', data: [listedModel], has_more: false, first_id: model.id, last_id: model.id }),
    'GET /v1/models/{model}': (_incoming, outgoing) => reply(outgoing, 200, listedModel),
    'POST /v1/messages': chat(anthropicMessages),
    'POST /v1/messages/count_tokens': async (incoming, outgoing) =>
      reply(outgoing, 200, { input_tokens: await tokenEstimate(fromMessagesRequest((await read(incoming, messagesRequestSchema, 'count_tokens request')).request)) }),
    'POST /v1beta/models/{model}:generateContent': chat(gemini(false)),
    'POST /v1beta/models/{model}:streamGenerateContent': chat(gemini(true)),
    'POST /v1beta/models/{model}:countTokens': async (incoming, outgoing) =>
      reply(outgoing, 200, { totalTokens: await tokenEstimate(fromGenerateContentRequest((await read(incoming, countTokensRequestSchema, 'countTokens request')).request)) }),
    'POST /api/chat': chat(ollamaChat),
    'GET /api/tags': (_incoming, outgoing) =>
      reply(outgoing, 200, { models: [{ name: model.id, model: model.id, modified_at: new Date(0).toISOString(), size: 0, digest: '', details: {} }] }),
    'GET /api/version': (_incoming, outgoing) => reply(outgoing, 200, { version: OLLAMA_VERSION }),
  };

  const server = createServer((incoming, outgoing) => {
    const url = incoming.url ?? '/';
    canariesIn(url, 'URL');
    for (let index = 0; index < incoming.rawHeaders.length; index += 2) canariesIn(incoming.rawHeaders[index + 1]!, `${incoming.rawHeaders[index]!.toLowerCase()} header`);
    const address = new URL(url, 'http://gateway');
    const { path, tokenInPath } = routePath(address.pathname, token);
    const api = apiOf(path, incoming);
    const handle = async () => {
      if (!tokenInPath && !authorized(keysOf(incoming, address), token)) {
        const message = "the gateway takes only this run's API key (the OPENAI_API_KEY, ANTHROPIC_API_KEY or GEMINI_API_KEY the agent was given, or the path OLLAMA_HOST names)";
        return fail(outgoing, api, { status: 401, code: 'invalid_api_key', message });
      }
      const route = routes[`${incoming.method} ${routeKey(path)}`];
      if (!route) {
        const served = Object.keys(routes).join(', ');
        return refuse(outgoing, api, { status: 404, code: 'not_found', message: `the model gateway does not serve ${incoming.method} ${path} (it serves ${served})` });
      }
      await route(incoming, outgoing, address);
    };
    handle().catch((error: unknown) => {
      const message = error instanceof Error ? error.message : String(error);
      if (outgoing.headersSent) return;
      if (error instanceof LimitReached) {
        hit(error.detail);
        if (error.unread) {
          // The rest is not read: the connection closes once the answer is out.
          outgoing.setHeader('connection', 'close');
          outgoing.on('finish', () => incoming.destroy());
        }
        const code = error.status === 413 ? 'request_too_large' : 'gateway_limit';
        return fail(outgoing, api, { status: error.status, code, message });
      }
      if (error instanceof InputError) return refuse(outgoing, api, { status: 400, code: 'invalid_request', message });
      fail(outgoing, api, { status: 500, code: 'gateway_error', message });
    });
  });
  // One more connection is closed at once (net.Server's own check), never queued.
  server.maxConnections = limits.maxConnections;
  server.on('drop', () => hit(`gateway connections (${limits.maxConnections})`));
  const origin = `http://127.0.0.1:${await listenLocal(server)}`;

  return {
    // Ollama's clients send no key, but keep the path of OLLAMA_HOST: the token goes there.
    endpoint: { id: model.id, baseURL: `${origin}/v1`, apiKey: token, ollamaHost: `${origin}/${token}`, anthropicBaseURL: origin, geminiBaseURL: origin },
    tokens: () => ({ ...tokens }),
    rateLimited: () => rateLimited,
    limitHit: () => limitHit,
    attempts: () => [...attempts],
    async close() {
      closing.abort(new Error('the gateway closed'));
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      // Calls cut short are counted (as their prompts) before the run reads its tokens.
      await Promise.allSettled([closed, ...pending]);
    },
  };
}

/** `object[key]`, when `object` is one. */
function fieldOf(object: unknown, key: string): unknown {
  return typeof object === 'object' && object !== null ? (object as Record<string, unknown>)[key] : undefined;
}

/** The largest of the positive counts among `values`; anything else (Ollama's -1, for no limit) states none. */
function largestCount(values: readonly unknown[]): number | undefined {
  const counts = values.filter((value): value is number => Number.isSafeInteger(value) && (value as number) > 0);
  return counts.length > 0 ? Math.max(...counts) : undefined;
}

/** The route a path names, and whether it came under the run's token (`/<token>/api/chat`: OLLAMA_HOST's path). */
function routePath(pathname: string, token: string): { path: string; tokenInPath: boolean } {
  const prefix = `/${token}/`;
  return pathname.startsWith(prefix) ? { path: pathname.slice(prefix.length - 1), tokenInPath: true } : { path: pathname, tokenInPath: false };
}

/** Which API a path is of (the model list is OpenAI's and Anthropic's: Anthropic's clients send their version): its errors are in that API's shape. */
function apiOf(path: string, incoming: IncomingMessage): Api {
  if (path === '/v1/messages' || path.startsWith('/v1/messages/') || (path.startsWith('/v1/models') && incoming.headers['anthropic-version'] !== undefined)) return 'anthropic';
  if (path.startsWith('/v1beta/')) return 'gemini';
  return path.startsWith('/v1/') ? 'openai' : 'ollama';
}

/** The route a path is served by: a Gemini path names its model before the method (`/v1beta/models/gemini-2.5-flash:generateContent`), a model's own path names it last. */
function routeKey(path: string): string {
  return path.replace(/^\/v1beta\/models\/.+(:\w+)$/, '/v1beta/models/{model}$1').replace(/^\/v1\/models\/[^/]+$/, '/v1/models/{model}');
}

/**
 * The keys a request offers, wherever an API's clients put one: a bearer token (OpenAI's clients;
 * Anthropic's with ANTHROPIC_AUTH_TOKEN), `x-api-key` (Anthropic's), `x-goog-api-key` or `?key=`
 * (Gemini's). The scheme's case does not matter in HTTP.
 */
function keysOf(incoming: IncomingMessage, url: URL): string[] {
  const { authorization, 'x-api-key': anthropic, 'x-goog-api-key': google } = incoming.headers;
  const bearer = authorization === undefined ? undefined : /^bearer\s+(\S+)\s*$/i.exec(authorization)?.[1];
  return [bearer, anthropic, google, url.searchParams.get('key')].filter((key): key is string => typeof key === 'string');
}

/** Whether one of the keys is the run's token. */
function authorized(keys: readonly string[], token: string): boolean {
  return keys.some((key) => key.length === token.length && timingSafeEqual(Buffer.from(key), Buffer.from(token)));
}

/** A provider failure as the provider would answer it: its own status, or the one its kind stands for. */
function statusOf(error: unknown): number {
  if (!(error instanceof ModelError)) return 500;
  if (error.status !== undefined) return error.status;
  if (error.kind === 'rate_limited') return 429;
  if (error.kind === 'timeout') return 504;
  return 502;
}

/** The error in the API's own shape, so its SDK reports the reason in its words. */
function errorBody(api: Api, { status, code, message }: Failure): object {
  switch (api) {
    case 'openai':
      return openAIError(message, status < 500 ? 'invalid_request_error' : 'api_error', code);
    case 'anthropic':
      return anthropicError(status, message);
    case 'gemini':
      return geminiError(status, message, code);
    case 'ollama':
      return { error: message };
  }
}

/**
 * The request's body as text, read against the limits: a body over `maxBodyBytes` is a 413, and one
 * that would take the bytes being read across all connections past `maxBytesInFlight` is a 503;
 * both are refused read no further. A declared length is held from the start, else each chunk as
 * it comes; all of it is let go once the body is read or refused.
 */
async function readBody(incoming: IncomingMessage, label: string, limits: GatewayLimits, held: Held): Promise<string> {
  const tooLarge = () => new LimitReached(413, `gateway body bytes (${limits.maxBodyBytes})`, `${label}: the body is over the gateway's limit of ${limits.maxBodyBytes} bytes (maxBodyBytes)`, true);
  const tooMuch = () =>
    new LimitReached(503, `gateway bytes in flight (${limits.maxBytesInFlight})`, `${label}: the run's gateway limit is reached: gateway bytes in flight (${limits.maxBytesInFlight}) (maxBytesInFlight): it is reading that many request bytes at once`, true);
  const declared = Number(incoming.headers['content-length'] ?? 0);
  if (declared > limits.maxBodyBytes) throw tooLarge();
  if (held.bytes + declared > limits.maxBytesInFlight) throw tooMuch();
  let holding = declared;
  held.bytes += declared;
  try {
    // Not `for await`: leaving it early would destroy the connection before the refusal is sent.
    return await new Promise<string>((resolve, reject) => {
      const chunks: Buffer[] = [];
      let size = 0;
      const refuse = (error: LimitReached) => {
        incoming.off('data', onData).pause();
        reject(error);
      };
      const onData = (chunk: Buffer) => {
        size += chunk.length;
        if (size > limits.maxBodyBytes) return refuse(tooLarge());
        if (size > holding) {
          if (held.bytes + size - holding > limits.maxBytesInFlight) return refuse(tooMuch());
          held.bytes += size - holding;
          holding = size;
        }
        chunks.push(chunk);
      };
      incoming
        .on('data', onData)
        .once('end', () => resolve(Buffer.concat(chunks).toString('utf8')))
        .once('error', reject)
        // A client gone mid-body lets its bytes go.
        .once('close', () => reject(new Error(`${label}: the client closed the connection`)));
    });
  } finally {
    held.bytes -= holding;
  }
}

function send(outgoing: ServerResponse, status: number, body: object): void {
  outgoing.writeHead(status, { 'content-type': 'application/json' });
  outgoing.end(JSON.stringify(body));
}

function redactText(text: string, secrets: readonly string[]): string {
  return redact({ text }, secrets).text;
}
