import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from '@playwright/test';
import { startGateway, type Gateway, type GatewaySettings } from '../src/agents/gateway.ts';
import type { TraceEventBody } from '../src/core/trace.ts';
import { textCounter } from '../src/harness/tokens.ts';
import { createModel } from '../src/models/registry.ts';
import type { ChatRequest, ChatResponse, Model, Usage } from '../src/models/types.ts';
// `scripted:<name>` resolves to HN's doubles.
import '../src/playwright/doubles.ts';

/** What the gateway tests of each API share: gateways on 127.0.0.1 for a model double, and the doubles. */

export const task = 'Upvote the first story on the front page.';

/** Two tools as every API offers them: the scripted doubles navigate first, then list the stories. */
export const tools = [
  { name: 'navigate', description: 'Opens a URL.', parameters: { type: 'object', properties: { url: { type: 'string' } }, required: ['url'] } },
  { name: 'list_stories', description: 'The stories on the current page.', parameters: { type: 'object', properties: {} } },
];

/** What the first tool call navigates to, in the scripted doubles' script. */
export const FRONT_PAGE = { url: 'https://news.ycombinator.com/news' };

export const types = (events: readonly TraceEventBody[]) => events.map((event) => event.type);

/** Starts gateways for a file's tests, each closed after its test: a gateway, its trace events and the limits it reported. */
export function gatewayStarter() {
  const started: Gateway[] = [];
  test.afterEach(async () => {
    await Promise.all(started.splice(0).map((gateway) => gateway.close()));
  });
  return async (model: Model, settings: GatewaySettings = {}) => {
    const events: TraceEventBody[] = [];
    const limits: string[] = [];
    const gateway = await startGateway({ model, record: (event) => events.push(event), signal: new AbortController().signal, onLimit: (detail) => limits.push(detail), ...settings });
    started.push(gateway);
    return { gateway, events, limits };
  };
}

/** `model` as a provider with a prompt cache reports it: `cachedInput` of each answer's input was read from the cache. */
export function caching(model: Model, cachedInput: number): Model {
  return { id: model.id, chat: async (request) => withUsage(await model.chat(request), (usage) => ({ ...usage, cachedInput })) };
}

/** `model` as a provider that gives no usable count. */
export function uncounted(model: Model): Model {
  return { id: model.id, chat: async (request) => withUsage(await model.chat(request), () => ({ input: null, output: null, problem: 'usage is missing' })) };
}

function withUsage(response: ChatResponse, usage: (given: Usage) => Usage): ChatResponse {
  return { ...response, usage: usage(response.usage) };
}

/** A model that fails every call with `error`, as a provider does once its retries are spent. */
export function failing(error: Error): Model {
  return { id: 'test:failing', chat: () => Promise.reject(error) };
}

/** A model whose calls wait until the test answers them: `received()` calls so far, `answer(index, response)`. */
export function held() {
  const waiting: Array<(response: ChatResponse) => void> = [];
  const model: Model = { id: 'test:held', chat: () => new Promise((resolve) => waiting.push(resolve)) };
  return { model, received: () => waiting.length, answer: (index: number, response: ChatResponse) => waiting[index]!(response) };
}

/** A model that says something and navigates, each call: an answer of two parts (text, then a call), its usage known. */
export const talker: Model = {
  id: 'test:talker',
  chat: async () => ({ message: { content: 'Opening it.', toolCalls: [{ id: 'call_talk', name: 'navigate', arguments: JSON.stringify(FRONT_PAGE) }] }, usage: { input: 30, output: 9 } }),
};

/** What a provider answers as a call's usage, in OpenAI's words. */
export interface WireUsage {
  prompt_tokens: number;
  completion_tokens: number;
}

/**
 * An OpenAI-compatible provider on 127.0.0.1, as `openai:gpt-4o-mini` (its calls at once not limited
 * by a slot), billing as OpenAI does: a call's input is its messages' tokens (gpt-tokenizer's
 * o200k_base, the provider's own), its output `output` tokens. With `held`, each call waits until
 * the test answers it (with that bill, or the usage it gives). `bills()` is what it answered, `billed()` their sum.
 */
export async function billingProvider({ output = 100, held = false }: { output?: number; held?: boolean } = {}) {
  const count = await textCounter('gpt-4o-mini');
  const waiting: Array<(usage?: WireUsage) => void> = [];
  const bills: WireUsage[] = [];
  let calls = 0;
  const server = createServer((incoming, outgoing) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk)).once('end', () => {
      calls += 1;
      const { messages } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { messages: Array<{ content?: string | null }> };
      const bill: WireUsage = { prompt_tokens: 3 + messages.reduce((sum, message) => sum + 4 + count(message.content ?? ''), 0), completion_tokens: output };
      const answer = (usage = bill) => {
        bills.push(usage);
        const choice = { index: 0, finish_reason: 'stop', message: { role: 'assistant', content: 'done' } };
        const completion = { id: 'chatcmpl-1', object: 'chat.completion', created: 1, model: 'gpt-4o-mini', choices: [choice], usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens } };
        outgoing.writeHead(200, { 'content-type': 'application/json' });
        outgoing.end(JSON.stringify(completion));
      };
      if (held) waiting.push(answer);
      else answer();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  const model = createModel({ id: 'openai:gpt-4o-mini', maxRetries: 0, concurrency: 64 }, { OPENAI_API_KEY: 'sk-provider-key', OPENAI_BASE_URL: baseURL });
  return {
    model,
    /** Calls it has been sent. */
    received: () => calls,
    answer: (index: number, usage?: WireUsage) => waiting[index]!(usage),
    /** Each call's usage as it was billed. */
    bills: () => [...bills],
    billed: (): WireUsage => ({ prompt_tokens: bills.reduce((sum, bill) => sum + bill.prompt_tokens, 0), completion_tokens: bills.reduce((sum, bill) => sum + bill.completion_tokens, 0) }),
    close: () => (server.closeAllConnections(), server.close()),
  };
}

/** `model`, keeping each request it is given (the messages, with their images; the tools; the response format and sampling). */
export function recording(model: Model) {
  const requests: ChatRequest[] = [];
  return { model: { id: model.id, chat: (request: ChatRequest) => (requests.push(request), model.chat(request)) } satisfies Model, requests };
}

/** A double that answers each call with `calls` (a tool call each), as a model that names tools the doubles do not know; it takes images, as the scripted doubles do. */
export function calling(...calls: Array<{ name: string; arguments: string }>): Model {
  return { id: 'scripted:calling', chat: async () => ({ message: { content: null, toolCalls: calls.map((call, index) => ({ id: `call_${index}`, ...call })) }, usage: { input: 20, output: 5 } }) };
}
