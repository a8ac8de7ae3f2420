import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect, test } from '@playwright/test';
import { http, HttpResponse, passthrough } from 'msw';
import OpenAI, { APIConnectionError, AuthenticationError } from 'openai';
import { Ollama } from 'ollama';
import { startGateway, type Gateway } from '../src/agents/gateway.ts';
import type { TraceEventBody } from '../src/harness/trace.ts';
import { openCassette } from '../src/models/cassette.ts';
import { createModel } from '../src/models/registry.ts';
import { chatCompletionRequestSchema, fromOpenAIRequest } from '../src/models/wire-openai.ts';
import { fromOllamaRequest, ollamaChatRequestSchema } from '../src/models/wire-ollama.ts';
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
const listTool = { type: 'function' as const, function: { name: 'list_stories', description: 'The stories on the current page.', parameters: { type: 'object', properties: {} } } };

/** A gateway for `model` whose events are kept, reachable from this process (msw lets its traffic through). */
async function gatewayFor(model: Model) {
  const events: TraceEventBody[] = [];
  const gateway = await startGateway({ model, record: (event) => events.push(event), signal: new AbortController().signal });
  letThrough(gateway);
  return { gateway, events, openai: openaiClient(gateway) };
}

/** msw lets every request to the gateway's port through, whatever its path. */
function letThrough(gateway: Gateway) {
  server.use(http.all(`${new URL(gateway.endpoint.baseURL).origin}/*`, () => passthrough()));
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
  expect(started.events[0]).toEqual({
    type: 'model_request',
    messages: 2,
    tools: 1,
    sent: [
      { role: 'system', text: 'You browse Hacker News.', chars: 23 },
      { role: 'user', text: task, chars: task.length },
    ],
    offered: ['navigate'],
  });
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
    tools: [navigateTool, listTool],
  });
  // The doubles choose among the tools offered by what they do: the one that lists stories.
  expect(next.choices[0]!.message.tool_calls?.[0]).toMatchObject({ function: { name: 'list_stories' } });
  expect(types(started.events)).toEqual(['model_request', 'model_response', 'model_request', 'model_response']);
  expect(started.events[2]).toMatchObject({ type: 'model_request', messages: 3, tools: 2, offered: ['navigate', 'list_stories'] });
  const [, assistant, result] = (started.events[2] as { sent: Array<{ role: string; text: string }> }).sent;
  expect(assistant).toMatchObject({ role: 'assistant', text: `navigate(${call!.type === 'function' ? call!.function.arguments : ''})` });
  expect(result).toMatchObject({ role: 'tool', text: `${call!.id}: {"url":"https://news.ycombinator.com/news"}` });
});

test('GET /v1/models lists the run\'s model', async () => {
  const started = await gatewayFor(createModel('scripted:diligent'));
  gateway = started.gateway;
  const models = await started.openai.models.list();
  expect(models.data.map((model) => model.id)).toEqual(['scripted:diligent']);
  // A path it does not serve is a 404 that lists those it does, in the trace too.
  const refused = await started.openai.embeddings.create({ model: 'x', input: task }).catch((error: unknown) => error);
  expect(refused).toMatchObject({ status: 404, message: expect.stringContaining('POST /v1/responses') });
  expect(started.events).toEqual([{ type: 'model_request_refused', status: 404, message: expect.stringContaining('POST /v1/embeddings') }]);
});

test('wire requests read back as the conversation: developer is system, text parts join, a tool result finds its call', () => {
  const openai = fromOpenAIRequest(
    chatCompletionRequestSchema.parse({
      model: 'ignored',
      temperature: 0.3,
      messages: [
        { role: 'developer', content: 'Be brief.' },
        { role: 'user', content: [{ type: 'text', text: 'Upvote ' }, { type: 'text', text: 'it.' }] },
        { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'click', arguments: '{"selector":"#up_1"}' } }] },
        { role: 'tool', tool_call_id: 'c1', content: '{"ok":true}' },
      ],
      tools: [{ type: 'function', function: { name: 'click' } }],
    }),
  );
  expect(openai.messages).toEqual([
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: 'Upvote it.' },
    { role: 'assistant', content: null, toolCalls: [{ id: 'c1', name: 'click', arguments: '{"selector":"#up_1"}' }] },
    { role: 'tool', toolCallId: 'c1', name: 'click', content: '{"ok":true}' },
  ]);
  expect(openai.tools).toEqual([{ name: 'click', description: '', parameters: { type: 'object', properties: {} } }]);

  // A user's image part is named in its text, and goes to the model as an image when it is one (a data URL).
  const png = 'iVBORw0KGgo=';
  const image = (url: string) => ({ type: 'image_url', image_url: { url } });
  const seeing = fromOpenAIRequest(chatCompletionRequestSchema.parse({ messages: [{ role: 'user', content: [{ type: 'text', text: 'What is this?' }, image(`data:image/png;base64,${png}`), image('https://example.test/a.png')] }] }));
  expect(seeing.messages).toEqual([
    { role: 'user', content: 'What is this?\n[image: image/png, 8 bytes]\n[image at https://example.test/a.png: not fetched]', images: [{ mimeType: 'image/png', data: png }] },
  ]);

  // Ollama's tool messages carry no id: each answers its turn's first unanswered call of its name.
  const ollama = fromOllamaRequest(
    ollamaChatRequestSchema.parse({
      model: 'ignored',
      messages: [
        { role: 'user', content: 'Go.' },
        { role: 'assistant', content: '', tool_calls: [{ function: { name: 'navigate', arguments: { url: '/' } } }, { function: { name: 'get_text', arguments: {} } }] },
        { role: 'tool', tool_name: 'get_text', content: 'text' },
        { role: 'tool', content: 'navigated' },
        { role: 'assistant', content: 'Done.' },
      ],
    }),
  );
  expect(ollama.messages.slice(1)).toEqual([
    {
      role: 'assistant',
      content: null,
      toolCalls: [
        { id: 'call_0_0', name: 'navigate', arguments: '{"url":"/"}' },
        { id: 'call_0_1', name: 'get_text', arguments: '{}' },
      ],
    },
    { role: 'tool', toolCallId: 'call_0_1', name: 'get_text', content: 'text' },
    { role: 'tool', toolCallId: 'call_0_0', name: 'navigate', content: 'navigated' },
    { role: 'assistant', content: 'Done.' },
  ]);
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

test('a request that is not a chat completion is a 400 naming the field, traced as refused, and no call', async () => {
  const started = await gatewayFor(createModel('scripted:diligent'));
  gateway = started.gateway;
  const refused = await started.openai.chat.completions
    .create({ model: 'x', messages: [{ role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } }] }] })
    .catch((error: unknown) => error);
  const message = 'chat completion request: messages.0.content.0.type: "input_audio" is not served here (text and image_url parts are)';
  expect(refused).toMatchObject({ status: 400, error: { message } });
  expect(started.events).toEqual([{ type: 'model_request_refused', status: 400, message }]);
});

test('streaming: the openai SDK reads the answer as chunks, usage last, and its stream helper assembles the tool call', async () => {
  const started = await gatewayFor(createModel('scripted:diligent'));
  gateway = started.gateway;
  const request = { model: 'x', messages: [{ role: 'user' as const, content: task }], tools: [navigateTool] };
  const chunks = [];
  for await (const chunk of await started.openai.chat.completions.create({ ...request, stream: true, stream_options: { include_usage: true } })) chunks.push(chunk);
  expect(chunks[0]!.choices[0]!.delta.tool_calls?.[0]).toMatchObject({ index: 0, function: { name: 'navigate' } });
  expect(chunks.map((chunk) => chunk.choices[0]?.finish_reason ?? null)).toEqual([null, 'tool_calls', null]);
  expect(chunks.at(-1)!.usage).toEqual({
    prompt_tokens: gateway.tokens().input,
    completion_tokens: gateway.tokens().output,
    total_tokens: gateway.tokens().input! + gateway.tokens().output!,
  });

  const final = await started.openai.chat.completions.stream(request).finalChatCompletion();
  expect(final.choices[0]!.message.tool_calls?.[0]).toMatchObject({ type: 'function', function: { name: 'navigate', arguments: '{"url":"https://news.ycombinator.com/news"}' } });
  expect(types(started.events)).toEqual(['model_request', 'model_response', 'model_request', 'model_response']);
});

test('the ollama SDK chats with tools through the gateway, streaming or not, and its tool results reach the model', async () => {
  const started = await gatewayFor(createModel('scripted:diligent'));
  gateway = started.gateway;
  // Ollama clients send no key: the token is in OLLAMA_HOST's path, which the client keeps.
  const ollama = new Ollama({ host: gateway.endpoint.ollamaHost });
  const tools = [navigateTool, listTool];
  const first = await ollama.chat({ model: 'llama3.1', messages: [{ role: 'user', content: task }], tools, stream: false });
  expect(first.done).toBe(true);
  expect(first.message.tool_calls).toEqual([{ function: { name: 'navigate', arguments: { url: 'https://news.ycombinator.com/news' } } }]);
  expect(first.prompt_eval_count).toBeGreaterThan(0);

  const messages = [{ role: 'user', content: task }, first.message, { role: 'tool', tool_name: 'navigate', content: '{"url":"https://news.ycombinator.com/news"}' }];
  const parts = [];
  for await (const part of await ollama.chat({ model: 'llama3.1', messages, tools, stream: true })) parts.push(part);
  expect(parts).toHaveLength(1);
  expect(parts[0]).toMatchObject({ done: true, message: { tool_calls: [{ function: { name: 'list_stories' } }] } });
  expect(types(started.events)).toEqual(['model_request', 'model_response', 'model_request', 'model_response']);

  expect((await ollama.list()).models.map((model) => model.name)).toEqual(['scripted:diligent']);
  expect((await ollama.version()).version).toMatch(/^\d+\.\d+\.\d+$/);
});

test('every route needs the run\'s token, Ollama\'s too: without it, or with another, a 401 in the API\'s shape and nothing forwarded', async () => {
  const started = await gatewayFor(createModel('scripted:diligent'));
  gateway = started.gateway;
  const origin = new URL(gateway.endpoint.baseURL).origin;
  const chat = (ollama: Ollama) => ollama.chat({ model: 'x', messages: [{ role: 'user', content: task }], stream: false }).catch((error: unknown) => error);
  // Another run's gateway reached by its port alone, a guessed token in the path, a wrong bearer token.
  for (const ollama of [new Ollama({ host: origin }), new Ollama({ host: `${origin}/hev-${'0'.repeat(48)}` }), new Ollama({ host: origin, headers: { Authorization: 'Bearer not-the-token' } })]) {
    expect(await chat(ollama)).toMatchObject({ status_code: 401, error: expect.stringContaining("this run's API key") });
    for (const ask of [() => ollama.list(), () => ollama.version()]) expect(await ask().catch((error: unknown) => error)).toMatchObject({ status_code: 401 });
  }
  for (const path of ['/api/chat', '/api/tags', '/api/version', '/v1/models']) expect((await fetch(`${origin}${path}`, { method: path === '/api/chat' ? 'POST' : 'GET' })).status, path).toBe(401);
  expect(started.events).toEqual([]);
  expect(gateway.tokens()).toEqual({ input: 0, output: 0 });

  // The token in the header serves the Ollama API too.
  const withToken = new Ollama({ host: origin, headers: { Authorization: `bearer ${gateway.endpoint.apiKey}` } });
  await withToken.chat({ model: 'x', messages: [{ role: 'user', content: task }], stream: false });
  expect(types(started.events)).toEqual(['model_request', 'model_response']);
});

test('a Python client that builds its URL from OLLAMA_HOST (as ollama-python does: the path kept) chats through the gateway unmodified', async () => {
  const started = await gatewayFor(createModel('scripted:diligent'));
  gateway = started.gateway;
  // ollama-python's _parse_host keeps OLLAMA_HOST's path, and its httpx client appends /api/chat to it.
  const python = `
import json, os, urllib.request
host = os.environ["OLLAMA_HOST"].rstrip("/")
body = json.dumps({"model": "llama3.1", "messages": [{"role": "user", "content": "Upvote the first story."}], "stream": False}).encode()
answer = json.load(urllib.request.urlopen(urllib.request.Request(host + "/api/chat", body, {"content-type": "application/json"})))
print(answer["done"], answer["message"]["tool_calls"][0]["function"]["name"])
`;
  const { stdout } = await promisify(execFile)('python3', ['-c', python], { env: { PATH: process.env.PATH, OLLAMA_HOST: gateway.endpoint.ollamaHost } });
  expect(stdout.trim()).toBe('True navigate');
  expect(types(started.events)).toEqual(['model_request', 'model_response']);
});

/** Answers the provider's chat completions in order (the last repeats), as an OpenAI server would. */
function serveProvider(...answers: Array<(request: Request) => Response | Promise<Response>>) {
  let count = 0;
  server.use(http.post(`${PROVIDER}/chat/completions`, ({ request }) => answers[Math.min(count++, answers.length - 1)]!(request)));
}

function completion(content: string, usage?: object) {
  return HttpResponse.json({
    id: 'chatcmpl-provider',
    object: 'chat.completion',
    created: 1_700_000_000,
    model: 'gpt-test',
    choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content } }],
    ...(usage && { usage }),
  });
}

test('tokens are summed over calls, and a count the provider did not give makes the total unknown, not zero', async () => {
  serveProvider(
    () => completion('one', { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 }),
    () => completion('two', { prompt_tokens: 20, completion_tokens: 7, total_tokens: 27 }),
    () => completion('three'),
  );
  const started = await gatewayFor(createModel({ id: 'openai:gpt-test', maxRetries: 0 }, providerEnv));
  gateway = started.gateway;
  const ask = () => started.openai.chat.completions.create({ model: 'x', messages: [{ role: 'user', content: 'Hello' }] });
  expect((await ask()).usage).toEqual({ prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 });
  await ask();
  expect(gateway.tokens()).toEqual({ input: 30, output: 12 });
  const third = await ask();
  expect(third.choices[0]!.message.content).toBe('three');
  expect(third.usage).toBeUndefined();
  expect(gateway.tokens()).toEqual({ input: null, output: null });
  expect(started.events.filter((event) => event.type === 'harness_note')).toHaveLength(1);
  expect(started.events.at(-2)).toMatchObject({ type: 'model_response', usage: { input: null, output: null } });
});

test('a provider failure reaches the agent as the provider\'s status in each API\'s error shape, recorded as a model_error', async () => {
  serveProvider(() => HttpResponse.json({ error: { message: 'Rate limit reached' } }, { status: 429 }));
  // No retries left: the model client has waited all it may, and the agent gets the 429.
  const started = await gatewayFor(createModel({ id: 'openai:gpt-test', maxRetries: 0, rateLimitRetries: 0 }, providerEnv));
  gateway = started.gateway;
  const refused = await started.openai.chat.completions.create({ model: 'x', messages: [{ role: 'user', content: 'Hello' }] }).catch((error: unknown) => error);
  expect(refused).toMatchObject({ status: 429, error: { code: 'rate_limited', message: expect.stringContaining('Rate limit reached') } });
  const ollama = new Ollama({ host: gateway.endpoint.ollamaHost });
  const refusedToo = await ollama.chat({ model: 'x', messages: [{ role: 'user', content: 'Hello' }], stream: false }).catch((error: unknown) => error);
  expect(refusedToo).toMatchObject({ status_code: 429, error: expect.stringContaining('Rate limit reached') });
  expect(types(started.events)).toEqual(['model_request', 'model_error', 'model_request', 'model_error']);
  expect(started.events[1]).toMatchObject({ kind: 'rate_limited' });
});

test('the real API key comes out of no answer, even when the provider puts it in the model\'s text', async () => {
  const saved = process.env.OPENAI_API_KEY;
  process.env.OPENAI_API_KEY = REAL_KEY;
  try {
    // A provider (or proxy) that echoes the key it was sent.
    serveProvider((request) => completion(`you sent ${request.headers.get('authorization')}`, { prompt_tokens: 1, completion_tokens: 1 }));
    const started = await gatewayFor(createModel({ id: 'openai:gpt-test', maxRetries: 0 }, providerEnv));
    gateway = started.gateway;
    const { baseURL, apiKey, ollamaHost } = gateway.endpoint;
    expect(JSON.stringify(gateway.endpoint)).not.toContain(REAL_KEY);
    const post = (url: string, body: object) =>
      fetch(url, { method: 'POST', headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const messages = [{ role: 'user', content: 'Hello' }];
    const bodies = await Promise.all(
      [
        post(`${baseURL}/chat/completions`, { model: 'x', messages }),
        post(`${baseURL}/chat/completions`, { model: 'x', messages, stream: true }),
        post(`${ollamaHost}/api/chat`, { model: 'x', messages, stream: false }),
        post(`${ollamaHost}/api/chat`, { model: 'x', messages }),
      ].map(async (response) => (await response).text()),
    );
    expect(bodies.every((body) => body.includes('you sent Bearer'))).toBe(true);
    for (const body of bodies) expect(body).not.toContain(REAL_KEY);
  } finally {
    if (saved === undefined) delete process.env.OPENAI_API_KEY;
    else process.env.OPENAI_API_KEY = saved;
  }
});

test('an openai: model with a cassette records through the gateway, then replays with no provider and answers the same', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gateway-cassette-'));
  const cache = { dir, model: 'openai:gpt-test', run: 'gateway › cassette', secrets: [REAL_KEY] };
  const conversation = async (model: Model) => {
    const started = await gatewayFor(model);
    try {
      const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: task }];
      const first = await started.openai.chat.completions.create({ model: 'x', messages, tools: [navigateTool] });
      messages.push(first.choices[0]!.message, { role: 'tool', tool_call_id: first.choices[0]!.message.tool_calls![0]!.id, content: '{"ok":true}' });
      const second = await started.openai.chat.completions.create({ model: 'x', messages, tools: [navigateTool] });
      return { answers: [first, second].map((answer) => answer.choices[0]!.message), events: started.events, tokens: started.gateway.tokens() };
    } finally {
      await started.gateway.close();
    }
  };
  serveProvider(
    () =>
      HttpResponse.json({
        id: 'chatcmpl-provider',
        object: 'chat.completion',
        created: 1_700_000_000,
        model: 'gpt-test',
        choices: [{ index: 0, finish_reason: 'tool_calls', message: { role: 'assistant', content: null, tool_calls: [{ id: 'call_p1', type: 'function', function: { name: 'navigate', arguments: '{"url":"https://news.ycombinator.com/"}' } }] } }],
        usage: { prompt_tokens: 40, completion_tokens: 9, total_tokens: 49 },
      }),
    () => completion('Done: the page is open.', { prompt_tokens: 60, completion_tokens: 6, total_tokens: 66 }),
  );
  const recording = openCassette({ ...cache, mode: 'record' })!;
  const recorded = await conversation(createModel('openai:gpt-test', providerEnv, recording));
  const cassettes = (readdirSync(dir, { recursive: true }) as string[]).filter((name) => name.endsWith('.json'));
  expect(cassettes).toHaveLength(1);
  expect(readFileSync(join(dir, cassettes[0]!), 'utf8')).not.toContain(REAL_KEY);

  server.resetHandlers(); // No provider any more: a request that reached one would fail the test.
  const replaying = openCassette({ ...cache, mode: 'replay' })!;
  const replayed = await conversation(createModel('openai:gpt-test', { OPENAI_BASE_URL: PROVIDER }, replaying));
  expect(replaying.failure).toBeUndefined();
  expect(replayed.answers).toEqual(recorded.answers);
  expect(replayed.tokens).toEqual({ input: 100, output: 15 });
  expect(types(replayed.events)).toEqual(types(recorded.events));
});

test('close() ends a call in flight: the client sees its connection close, and nothing more is recorded', async () => {
  const hanging: Model = { id: 'test:hanging', chat: () => new Promise(() => {}) };
  const started = await gatewayFor(hanging);
  const pending = started.openai.chat.completions.create({ model: 'x', messages: [{ role: 'user', content: 'Hello' }] }).catch((error: unknown) => error);
  await expect.poll(() => types(started.events)).toEqual(['model_request']);
  await started.gateway.close();
  expect(await pending).toBeInstanceOf(APIConnectionError);
  expect(types(started.events)).toEqual(['model_request']);
});

test('at the run\'s time limit a call in flight gives way: the agent gets a 503, and no model_error is recorded', async () => {
  const hanging: Model = { id: 'test:hanging', chat: () => new Promise(() => {}) };
  const limit = new AbortController();
  const events: TraceEventBody[] = [];
  gateway = await startGateway({ model: hanging, record: (event) => events.push(event), signal: limit.signal });
  letThrough(gateway);
  const pending = openaiClient(gateway).chat.completions.create({ model: 'x', messages: [{ role: 'user', content: 'Hello' }] }).catch((error: unknown) => error);
  await expect.poll(() => types(events)).toEqual(['model_request']);
  limit.abort(new Error('time limit'));
  expect(await pending).toMatchObject({ status: 503 });
  expect(types(events)).toEqual(['model_request']);
});
