import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { http, HttpResponse, passthrough } from 'msw';
import OpenAI, { AuthenticationError } from 'openai';
import { Ollama } from 'ollama';
import { startGateway, type Gateway } from '../src/agents/gateway.ts';
import type { TraceEventBody } from '../src/harness/trace.ts';
import { openCassette } from '../src/models/cassette.ts';
import { createModel } from '../src/models/registry.ts';
import type { Model } from '../src/models/types.ts';
import { mswServer } from './support.ts';

const server = mswServer();

/** A marker for the provider's real key: it must never come out of the gateway. */
const REAL_KEY = 'sk-real-MARKER-7f3a9c';
const PROVIDER = 'https://provider.example.test/v1';
const providerEnv = { OPENAI_API_KEY: REAL_KEY, OPENAI_BASE_URL: PROVIDER };

const task = 'Upvote the first story on the front page.';
const navigateTool = {
  type: 'function' as const,
  function: { name: 'navigate', description: 'Opens a URL.', parameters: { type: 'object', properties: { url: { type: 'string' } }, required: ['url'] } },
};

/** A gateway for `model` whose events are kept, reachable from this process (msw lets its traffic through). */
async function gatewayFor(model: Model) {
  const events: TraceEventBody[] = [];
  const gateway = await startGateway({ model, record: (event) => events.push(event), signal: new AbortController().signal });
  server.use(http.all(`${gateway.endpoint.ollamaHost}/*`, () => passthrough()));
  return { gateway, events, openai: openaiClient(gateway) };
}

function openaiClient(gateway: Gateway, apiKey = gateway.endpoint.apiKey) {
  return new OpenAI({ baseURL: gateway.endpoint.baseURL, apiKey, maxRetries: 0 });
}

const types = (events: readonly TraceEventBody[]) => events.map((event) => event.type);

let gateway: Gateway | undefined;
test.afterEach(async () => {
  await gateway?.close();
  gateway = undefined;
});

test('the openai SDK gets the scripted double\'s tool call through the gateway, and the call is in the trace', async () => {
  const started = await gatewayFor(createModel('scripted:diligent'));
  gateway = started.gateway;
  const completion = await started.openai.chat.completions.create({
    model: 'whatever-the-agent-names',
    messages: [
      { role: 'system', content: [{ type: 'text', text: 'You browse Hacker News.' }] },
      { role: 'user', content: task },
    ],
    tools: [navigateTool],
  });
  const [call] = completion.choices[0]!.message.tool_calls ?? [];
  expect(call).toMatchObject({ type: 'function', function: { name: 'navigate' } });
  expect(JSON.parse(call!.type === 'function' ? call!.function.arguments : '{}')).toEqual({ url: 'https://news.ycombinator.com/news' });
  expect(completion.model).toBe('scripted:diligent');
  expect(completion.usage?.prompt_tokens).toBeGreaterThan(0);

  expect(types(started.events)).toEqual(['model_request', 'model_response']);
  expect(started.events[0]).toEqual({ type: 'model_request', messages: 2, tools: 1 });
  expect(started.events[1]).toMatchObject({ type: 'model_response', content: null, toolCalls: [{ name: 'navigate' }] });
  expect(gateway.tokens()).toEqual({ input: completion.usage!.prompt_tokens, output: completion.usage!.completion_tokens });

  // The next turn carries the assistant's tool call and the tool's result back: the double moves on.
  const next = await started.openai.chat.completions.create({
    model: 'gpt-4o',
    messages: [
      { role: 'user', content: task },
      completion.choices[0]!.message,
      { role: 'tool', tool_call_id: call!.id, content: JSON.stringify({ url: 'https://news.ycombinator.com/news' }) },
    ],
    tools: [navigateTool],
  });
  expect(next.choices[0]!.message.tool_calls?.[0]).toMatchObject({ function: { name: 'get_stories' } });
  expect(types(started.events)).toEqual(['model_request', 'model_response', 'model_request', 'model_response']);
  expect(started.events[2]).toEqual({ type: 'model_request', messages: 3, tools: 1 });
});

test('GET /v1/models lists the run\'s model', async () => {
  const started = await gatewayFor(createModel('scripted:diligent'));
  gateway = started.gateway;
  const models = await started.openai.models.list();
  expect(models.data.map((model) => model.id)).toEqual(['scripted:diligent']);
  expect(started.events).toEqual([]);
});

test('a wrong or missing token is refused with 401 in OpenAI\'s shape, and no call is counted', async () => {
  const started = await gatewayFor(createModel('scripted:diligent'));
  gateway = started.gateway;
  const wrong = openaiClient(gateway, 'not-the-token');
  const refused = await wrong.chat.completions.create({ model: 'x', messages: [{ role: 'user', content: task }] }).catch((error: unknown) => error);
  expect(refused).toBeInstanceOf(AuthenticationError);
  expect((refused as AuthenticationError).error).toMatchObject({ code: 'invalid_api_key' });

  const missing = await fetch(`${gateway.endpoint.baseURL}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'x', messages: [{ role: 'user', content: task }] }),
  });
  expect(missing.status).toBe(401);
  expect(await missing.json()).toMatchObject({ error: { code: 'invalid_api_key' } });
  expect(started.events).toEqual([]);
  expect(gateway.tokens()).toEqual({ input: 0, output: 0 });
});

test('a request that is not a chat completion is a 400 naming the field, and no call', async () => {
  const started = await gatewayFor(createModel('scripted:diligent'));
  gateway = started.gateway;
  const refused = await started.openai.chat.completions
    .create({ model: 'x', messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://example.test/a.png' } }] }] })
    .catch((error: unknown) => error);
  expect(refused).toMatchObject({ status: 400 });
  expect((refused as Error).message).toContain('messages.0.content');
  expect(started.events).toEqual([]);
});
