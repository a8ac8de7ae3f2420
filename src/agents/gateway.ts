import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';
import type { ModelEndpoint } from '../core/agent.ts';
import { race } from '../harness/limits.ts';
import { modelRequest, redact } from '../harness/trace.ts';
import type { TraceEventBody } from '../core/trace.ts';
import { InputError, parseInput } from '../input.ts';
import { modelSecrets } from '../models/registry.ts';
import { addUsage, ModelError } from '../models/types.ts';
import type { ChatMessage, ChatResponse, Model, ModelWaits, ToolSchema, Usage } from '../core/model.ts';
import { chatCompletionRequestSchema, fromOpenAIRequest, openAIError, toCompletion, toCompletionChunks } from '../models/wire-openai.ts';
import { fromOllamaRequest, ollamaChatRequestSchema, toOllamaResponse } from '../models/wire-ollama.ts';
import { fromResponsesRequest, responsesRequestSchema, toResponse, toResponseEvents } from '../models/wire-responses.ts';
import { parseJsonObject } from '../text.ts';

/**
 * The model gateway: for one run, an OpenAI-compatible (`/v1/chat/completions`, `/v1/responses`)
 * and Ollama-compatible (`/api/chat`) endpoint on 127.0.0.1 that forwards every call to the run's
 * model and records it in the run's trace, as the built-in harness records its own calls. The
 * run's model client does the waiting (its endpoint's slots, a rate limit's retries), so an agent
 * never sees a 429 the model client could still wait out. The
 * `model` a client names is ignored: the run's model answers, whatever the agent's config says;
 * so are its sampling fields (temperature, max_tokens…): the run's model spec sets those.
 * The agent gets a random token for this run, never the provider's key, and nothing the gateway
 * answers carries that key.
 */

/** What `GET /api/version` answers: an Ollama recent enough for tool calls, for clients that check. */
const OLLAMA_VERSION = '0.12.0';

export interface GatewayOptions {
  /** The run's model: every call the agent makes is forwarded to it. */
  model: Model;
  /** Receives `model_request`, `model_response` and `model_error` events for the run's trace, as the built-in harness writes them. */
  record(event: TraceEventBody): void;
  /** Aborted at the run's time limit: calls in flight give way. */
  signal: AbortSignal;
  /** The run's secrets (the site's password): replaced in what the trace records of a call, with the API keys. */
  secrets?: readonly string[];
  /** The run's clock of model waits: every call is given it. */
  waits?: ModelWaits;
  /** The largest request body taken (default DEFAULT_MAX_BODY_BYTES): a larger one is refused with a 413, unread. */
  maxBodyBytes?: number;
}

/** The gateway's own settings, as the agents that start one take them. */
export const gatewayOptionsSchema = z
  .object({
    /** The largest request body the gateway takes, in bytes (default 4 MB): a larger one is refused with a 413. */
    maxBodyBytes: z.int().positive(),
  })
  .partial()
  .strict();
export type GatewaySettings = z.input<typeof gatewayOptionsSchema>;

/** Screenshots sent as data URLs make requests large; a runaway agent's are larger still. */
export const DEFAULT_MAX_BODY_BYTES = 4 * 1024 * 1024;

export interface Gateway {
  endpoint: ModelEndpoint;
  /** Tokens of every call so far; a count is null once any call's was unusable. */
  tokens(): Usage;
  /** Why a call was refused for a rate limit after every retry (the run is then `rate_limited`); undefined when none was. */
  rateLimited(): string | undefined;
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

/** A call that the run's end (its time limit, the gateway closing) or the client hanging up cut short. */
const CUT_SHORT: Forwarded = { ok: false, status: 503, code: 'cut_short', message: 'the call was cut short: the run is over' };

/** Which API a request speaks: each answers errors in its own shape, so its SDK reports them in its words. */
type Api = 'openai' | 'ollama';

/** A request body over the limit: refused with a 413, the rest of it never read. */
class BodyTooLarge extends Error {}

export async function startGateway({ model, record, signal, secrets: runSecrets = [], waits, maxBodyBytes = DEFAULT_MAX_BODY_BYTES }: GatewayOptions): Promise<Gateway> {
  const token = `hev-${randomBytes(24).toString('hex')}`;
  const secrets = modelSecrets();
  const closing = new AbortController();
  let tokens: Usage = { input: 0, output: 0 };
  let rateLimited: string | undefined;
  // Nothing is recorded once the gateway is closed: the run's trace has ended.
  const note = (event: TraceEventBody) => {
    if (!closing.signal.aborted) record(event);
  };

  /** Forwards one call to the model; the call gives way to the run's time limit, the gateway's closing and the client hanging up. */
  async function forward(messages: ChatMessage[], tools: ToolSchema[], outgoing: ServerResponse): Promise<Forwarded> {
    const hangUp = new AbortController();
    outgoing.on('close', () => hangUp.abort(new Error('the client closed the connection')));
    const callSignal = AbortSignal.any([signal, closing.signal, hangUp.signal]);
    if (callSignal.aborted) return CUT_SHORT;
    note(modelRequest(messages, tools, [...secrets, ...runSecrets]));
    const started = performance.now();
    try {
      const response = (await race(model.chat({ messages, tools, signal: callSignal, waits }), { signal: callSignal })) as ChatResponse;
      const { content, toolCalls } = response.message;
      const { input, output } = response.usage;
      note({ type: 'model_response', content, toolCalls, usage: { input, output }, ms: Math.round(performance.now() - started) });
      countTokens(response.usage);
      return { ok: true, response };
    } catch (error) {
      // A call cut short is not the model's failure (the built-in harness records none either).
      if (callSignal.aborted) return CUT_SHORT;
      const code = error instanceof ModelError ? error.kind : 'unexpected';
      const message = redactText(error instanceof Error ? error.message : String(error), secrets);
      note({ type: 'model_error', kind: code, message });
      if (code === 'rate_limited') rateLimited ??= message;
      return { ok: false, status: statusOf(error), code, message };
    }
  }

  function countTokens(usage: Usage): void {
    const known = tokens.input !== null && tokens.output !== null;
    tokens = addUsage(tokens, usage);
    if (known && (tokens.input === null || tokens.output === null)) {
      note({ type: 'harness_note', layer: 'gateway', message: `the run's token counts are unknown: the model's answer had no usable count (${usage.problem ?? 'not a number'})` });
    }
  }

  const reply = (outgoing: ServerResponse, status: number, body: object) => send(outgoing, status, redact(body, secrets));
  const fail = (outgoing: ServerResponse, api: Api, failure: Failure) => reply(outgoing, failure.status, errorBody(api, failure));

  const read = <S extends z.ZodType>(incoming: IncomingMessage, schema: S, label: string) => readRequest(incoming, schema, label, maxBodyBytes);

  async function openAIChat(incoming: IncomingMessage, outgoing: ServerResponse): Promise<void> {
    const request = await read(incoming, chatCompletionRequestSchema, 'chat completion request');
    const { messages, tools } = fromOpenAIRequest(request);
    const forwarded = await forward(messages, tools, outgoing);
    if (!forwarded.ok) return fail(outgoing, 'openai', forwarded);
    const meta = { id: `chatcmpl-gateway-${randomBytes(6).toString('hex')}`, created: Math.floor(Date.now() / 1000), model: model.id };
    if (!request.stream) return reply(outgoing, 200, toCompletion(forwarded.response, meta));
    const chunks = toCompletionChunks(forwarded.response, meta, request.stream_options?.include_usage === true);
    const events = [...chunks.map((chunk) => JSON.stringify(redact(chunk, secrets))), '[DONE]'];
    outgoing.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    outgoing.end(events.map((data) => `data: ${data}\n\n`).join(''));
  }

  async function openAIResponses(incoming: IncomingMessage, outgoing: ServerResponse): Promise<void> {
    const request = await read(incoming, responsesRequestSchema, 'responses request');
    const { messages, tools } = fromResponsesRequest(request);
    const forwarded = await forward(messages, tools, outgoing);
    if (!forwarded.ok) return fail(outgoing, 'openai', forwarded);
    const meta = { id: `resp_gateway${randomBytes(6).toString('hex')}`, created_at: Math.floor(Date.now() / 1000), model: model.id };
    if (!request.stream) return reply(outgoing, 200, toResponse(forwarded.response, meta));
    const events = toResponseEvents(forwarded.response, meta).map((event) => redact(event, secrets));
    outgoing.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    outgoing.end(events.map((event) => `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`).join(''));
  }

  async function ollamaChat(incoming: IncomingMessage, outgoing: ServerResponse): Promise<void> {
    const request = await read(incoming, ollamaChatRequestSchema, 'chat request');
    const { messages, tools } = fromOllamaRequest(request);
    const forwarded = await forward(messages, tools, outgoing);
    if (!forwarded.ok) return fail(outgoing, 'ollama', forwarded);
    const answer = toOllamaResponse(forwarded.response, model.id);
    if (request.stream === false) return reply(outgoing, 200, answer);
    // Ollama streams unless told not to: the whole answer is then the one, final (`done`) line.
    outgoing.writeHead(200, { 'content-type': 'application/x-ndjson' });
    outgoing.end(`${JSON.stringify(redact(answer, secrets))}\n`);
  }

  const routes: Record<string, (incoming: IncomingMessage, outgoing: ServerResponse) => Promise<void> | void> = {
    'POST /v1/chat/completions': openAIChat,
    'POST /v1/responses': openAIResponses,
    'GET /v1/models': (_incoming, outgoing) =>
      reply(outgoing, 200, { object: 'list', data: [{ id: model.id, object: 'model', created: 0, owned_by: 'harness-eval' }] }),
    'POST /api/chat': ollamaChat,
    'GET /api/tags': (_incoming, outgoing) =>
      reply(outgoing, 200, { models: [{ name: model.id, model: model.id, modified_at: new Date(0).toISOString(), size: 0, digest: '', details: {} }] }),
    'GET /api/version': (_incoming, outgoing) => reply(outgoing, 200, { version: OLLAMA_VERSION }),
  };

  const server = createServer((incoming, outgoing) => {
    const path = new URL(incoming.url ?? '/', 'http://gateway').pathname;
    const api: Api = path.startsWith('/v1/') ? 'openai' : 'ollama';
    const handle = async () => {
      if (!authorized(incoming.headers.authorization, token, api)) {
        return fail(outgoing, api, { status: 401, code: 'invalid_api_key', message: 'the gateway takes only the API key of this run (the OPENAI_API_KEY the agent was given)' });
      }
      const route = routes[`${incoming.method} ${path}`];
      if (!route) {
        const served = Object.keys(routes).join(', ');
        const message = `the model gateway does not serve ${incoming.method} ${path} (it serves ${served})`;
        return fail(outgoing, api, { status: 404, code: 'not_found', message });
      }
      await route(incoming, outgoing);
    };
    handle().catch((error: unknown) => {
      const message = error instanceof Error ? error.message : String(error);
      if (outgoing.headersSent) return;
      if (error instanceof BodyTooLarge) {
        // The rest is not read: the connection closes once the answer is out.
        outgoing.setHeader('connection', 'close');
        outgoing.on('finish', () => incoming.destroy());
        return fail(outgoing, api, { status: 413, code: 'request_too_large', message });
      }
      fail(outgoing, api, error instanceof InputError ? { status: 400, code: 'invalid_request', message } : { status: 500, code: 'gateway_error', message });
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    endpoint: { id: model.id, baseURL: `${origin}/v1`, apiKey: token, ollamaHost: origin },
    tokens: () => ({ ...tokens }),
    rateLimited: () => rateLimited,
    async close() {
      closing.abort(new Error('the gateway closed'));
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
    },
  };
}

/**
 * The OpenAI API needs the run's token. Ollama's API has no keys and its clients send none, so
 * there no header is accepted too (the port is on 127.0.0.1 and lives for this run only); a wrong
 * token is refused on both.
 */
function authorized(header: string | undefined, token: string, api: Api): boolean {
  if (header === undefined) return api === 'ollama';
  // The scheme's case does not matter in HTTP.
  return /^bearer\s+(\S+)\s*$/i.exec(header)?.[1] === token;
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
  return api === 'openai' ? openAIError(message, status < 500 ? 'invalid_request_error' : 'api_error', code) : { error: message };
}

/** The request's JSON body, checked: anything else is an InputError naming the field (a 400); a body over `maxBytes` is BodyTooLarge (a 413), read no further. */
async function readRequest<S extends z.ZodType>(incoming: IncomingMessage, schema: S, label: string, maxBytes: number): Promise<z.output<S>> {
  const tooLarge = () => new BodyTooLarge(`${label}: the body is over the gateway's limit of ${maxBytes} bytes (maxBodyBytes)`);
  if (Number(incoming.headers['content-length'] ?? 0) > maxBytes) throw tooLarge();
  // Not `for await`: leaving it early would destroy the connection before the 413 is sent.
  const text = await new Promise<string>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= maxBytes) return void chunks.push(chunk);
      incoming.off('data', onData).pause();
      reject(tooLarge());
    };
    incoming.on('data', onData).once('end', () => resolve(Buffer.concat(chunks).toString('utf8'))).once('error', reject);
  });
  const body = parseJsonObject(text);
  if (!body) throw new InputError(`${label}: the body is not a JSON object`);
  return parseInput(schema, body, label);
}

function send(outgoing: ServerResponse, status: number, body: object): void {
  outgoing.writeHead(status, { 'content-type': 'application/json' });
  outgoing.end(JSON.stringify(body));
}

function redactText(text: string, secrets: readonly string[]): string {
  return redact({ text }, secrets).text;
}
