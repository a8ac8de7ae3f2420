import { test } from '@playwright/test';
import { startGateway, type Gateway, type GatewaySettings } from '../src/agents/gateway.ts';
import type { TraceEventBody } from '../src/core/trace.ts';
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

/** `model`, keeping each request it is given (the messages, with their images; the tools; the response format and sampling). */
export function recording(model: Model) {
  const requests: ChatRequest[] = [];
  return { model: { id: model.id, chat: (request: ChatRequest) => (requests.push(request), model.chat(request)) } satisfies Model, requests };
}

/** A double that answers each call with `calls` (a tool call each), as a model that names tools the doubles do not know; it takes images, as the scripted doubles do. */
export function calling(...calls: Array<{ name: string; arguments: string }>): Model {
  return { id: 'scripted:calling', chat: async () => ({ message: { content: null, toolCalls: calls.map((call, index) => ({ id: `call_${index}`, ...call })) }, usage: { input: 20, output: 5 } }) };
}
