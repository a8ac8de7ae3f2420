import { getEventListeners } from 'node:events';
import { expect, test } from '@playwright/test';
import { delay, http, HttpResponse } from 'msw';
import { ollamaModel } from '../src/models/ollama.ts';
import { openaiModel } from '../src/models/openai.ts';
import { ModelError } from '../src/models/types.ts';
import type { ChatMessage, ToolSchema, Usage } from '../src/models/types.ts';
import { mswServer } from './support.ts';

const API_KEY = 'sk-test-MARKER-123';
const OPENAI_BASE_URL = 'https://api.example.test/v1';
const OLLAMA_HOST = 'http://ollama.example.test:11434';

const server = mswServer();

interface WireToolCall {
  name: string;
  arguments: Record<string, unknown>;
}

/** A chat completions answer. Its tool-call ids are the ones Ollama's are derived as on a first turn, so expectations are shared. */
function openaiAnswer(content: string | null, calls: WireToolCall[], usage: Usage | null) {
  return openaiCompletion(
    content,
    calls.map((call, index) => ({ id: `call_0_${index}`, name: call.name, arguments: JSON.stringify(call.arguments) })),
    usage,
  );
}

function openaiCompletion(content: string | null, calls: { id: string; name: string; arguments: string }[], usage: Usage | null) {
  const toolCalls = calls.map(({ id, name, arguments: args }) => ({ id, type: 'function', function: { name, arguments: args } }));
  return {
    id: 'chatcmpl-test',
    object: 'chat.completion',
    created: 1_700_000_000,
    model: 'gpt-test',
    choices: [
      {
        index: 0,
        finish_reason: calls.length > 0 ? 'tool_calls' : 'stop',
        message: { role: 'assistant', content, ...(toolCalls.length > 0 && { tool_calls: toolCalls }) },
      },
    ],
    ...(usage && { usage: { prompt_tokens: usage.input, completion_tokens: usage.output, total_tokens: (usage.input ?? 0) + (usage.output ?? 0) } }),
  };
}

/** An answer from Ollama's /api/chat: arguments as objects, no tool-call ids, "" for no text. */
function ollamaAnswer(content: string | null, calls: WireToolCall[], usage: Usage | null) {
  return {
    model: 'llama-test',
    created_at: '2025-01-01T00:00:00Z',
    message: {
      role: 'assistant',
      content: content ?? '',
      ...(calls.length > 0 && { tool_calls: calls.map((call) => ({ function: call })) }),
    },
    done: true,
    done_reason: 'stop',
    ...(usage && { prompt_eval_count: usage.input, eval_count: usage.output }),
  };
}

type ProviderOptions = { maxRetries?: number; timeoutMs?: number; rateLimitRetries?: number };
const openai = {
  name: 'openai',
  url: `${OPENAI_BASE_URL}/chat/completions`,
  model: (options: ProviderOptions = {}) => openaiModel('gpt-test', { apiKey: API_KEY, baseURL: OPENAI_BASE_URL, ...options }),
  answer: openaiAnswer,
};
const ollama = {
  name: 'ollama',
  url: `${OLLAMA_HOST}/api/chat`,
  model: (options: ProviderOptions = {}) => ollamaModel('llama-test', { host: OLLAMA_HOST, ...options }),
  answer: ollamaAnswer,
};

type Reply = () => Response | Promise<Response>;

/** Serves `replies` in order at `url` (the last one repeats) and records the body of every request. */
function serve(url: string, ...replies: Reply[]): unknown[] {
  const bodies: unknown[] = [];
  server.use(
    http.post(url, async ({ request }) => {
      bodies.push(await request.json());
      return replies[Math.min(bodies.length, replies.length) - 1]!();
    }),
  );
  return bodies;
}

const json = (body: object): Reply => () => HttpResponse.json(body);
// retry-after: 0 keeps the retries of these tests instant; both clients honour it on 5xx as well as 429.
const failure = (status: number): Reply => () =>
  HttpResponse.json({ error: { message: `failure ${status}` } }, { status, headers: { 'retry-after': '0' } });

async function modelError(answer: Promise<unknown>): Promise<ModelError> {
  const error = await answer.then(
    () => undefined,
    (error: unknown) => error,
  );
  expect(error).toBeInstanceOf(ModelError);
  return error as ModelError;
}

const question: ChatMessage[] = [
  { role: 'system', content: 'You browse Hacker News.' },
  { role: 'user', content: 'Find stories about Rust.' },
];
const tools: ToolSchema[] = [
  {
    name: 'search',
    description: 'Search stories by title.',
    parameters: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] },
  },
];
const sampling = { seed: 7, temperature: 0.2, maxTokens: 256 };

const answers: { name: string; content: string | null; calls: WireToolCall[] }[] = [
  { name: 'a single tool call', content: null, calls: [{ name: 'search', arguments: { query: 'rust', filters: { points: 100 } } }] },
  {
    name: 'several tool calls in one answer',
    content: null,
    calls: [
      { name: 'search', arguments: { query: 'rust' } },
      { name: 'open_item', arguments: { id: 42 } },
    ],
  },
  { name: 'a plain text answer', content: 'No stories about Rust today.', calls: [] },
];

for (const provider of [openai, ollama]) {
  test.describe(provider.name, () => {
    for (const answer of answers) {
      test(`${answer.name}: tool-call arguments become raw JSON text, usage is counted`, async () => {
        serve(provider.url, json(provider.answer(answer.content, answer.calls, { input: 12, output: 5 })));
        const response = await provider.model().chat({ messages: question, tools });
        expect(response.message).toEqual({
          content: answer.content,
          toolCalls: answer.calls.map((call, index) => ({
            id: `call_0_${index}`,
            name: call.name,
            arguments: JSON.stringify(call.arguments),
          })),
        });
        expect(response.usage).toEqual({ input: 12, output: 5 });
      });
    }

    // Only a finite non-negative number is a count: anything else is unknown (null), never 0 or "0NaN".
    const unusable: Array<{ name: string; usage: Usage | null; expected: object }> = [
      { name: 'missing', usage: null, expected: { input: null, output: null, problem: expect.stringMatching(/is missing.*is missing/) } },
      { name: 'the string "NaN"', usage: { input: 'NaN' as never, output: 5 }, expected: { input: null, output: 5, problem: expect.stringMatching(/ is "NaN"$/) } },
      { name: 'negative', usage: { input: 12, output: -3 }, expected: { input: 12, output: null, problem: expect.stringMatching(/ is -3$/) } },
    ];
    for (const { name, usage, expected } of unusable) {
      test(`usage ${name} is recorded as unknown, saying why`, async () => {
        serve(provider.url, json(provider.answer('Hi.', [], usage)));
        const response = await provider.model().chat({ messages: question, tools });
        expect(response.usage).toEqual(expected);
      });
    }

    test('429 with retry-after: 0 is retried, then succeeds', async () => {
      const requests = serve(provider.url, failure(429), json(provider.answer('Hi.', [], null)));
      const response = await provider.model().chat({ messages: question, tools });
      expect(response.message.content).toBe('Hi.');
      expect(requests).toHaveLength(2);
    });

    test('a persistent 500 is a server error after maxRetries + 1 requests', async () => {
      const requests = serve(provider.url, failure(500));
      const error = await modelError(provider.model({ maxRetries: 2 }).chat({ messages: question, tools }));
      expect(error).toMatchObject({ kind: 'server', status: 500 });
      expect(requests).toHaveLength(3);
    });

    test('a persistent 429 is rate_limited', async () => {
      serve(provider.url, failure(429));
      const error = await modelError(provider.model({ maxRetries: 1 }).chat({ messages: question, tools }));
      expect(error).toMatchObject({ kind: 'rate_limited', status: 429 });
    });

    test('a connection failure is retried, then a network error', async () => {
      const requests = serve(provider.url, () => HttpResponse.error());
      const error = await modelError(provider.model({ maxRetries: 1 }).chat({ messages: question, tools }));
      expect(error.kind).toBe('network');
      expect(requests).toHaveLength(2);
    });

    test('an answer slower than timeoutMs is a timeout', async () => {
      serve(provider.url, async () => {
        await delay(10_000);
        return HttpResponse.json(provider.answer('Too late.', [], null));
      });
      const started = Date.now();
      const error = await modelError(provider.model({ timeoutMs: 200, maxRetries: 0 }).chat({ messages: question, tools }));
      expect(error.kind).toBe('timeout');
      // Far below the handler's 10 s: the 200 ms timeout cut it short, even on a loaded machine.
      expect(Date.now() - started).toBeLessThan(5_000);
    });

    test('the caller aborting is not a model error: the signal’s reason is thrown', async () => {
      serve(provider.url, async () => {
        await delay(1_000);
        return HttpResponse.json(provider.answer('Too late.', [], null));
      });
      const reason = new Error('run cancelled');
      const controller = new AbortController();
      setTimeout(() => controller.abort(reason), 100);
      await expect(provider.model().chat({ messages: question, tools, signal: controller.signal })).rejects.toBe(reason);
    });
  });
}

test.describe('openai', () => {
  test("a run's calls leave no listener on the run's signal (the SDK never removes the one it adds)", async () => {
    server.use(http.post(`${OPENAI_BASE_URL}/chat/completions`, () => HttpResponse.json(openaiAnswer('ok', [], { input: 1, output: 1 }))));
    const model = openaiModel('gpt-test', { apiKey: API_KEY, baseURL: OPENAI_BASE_URL });
    const run = new AbortController();
    for (let call = 0; call < 12; call++) await model.chat({ messages: [{ role: 'user', content: 'hi' }], tools: [], signal: run.signal });
    expect(getEventListeners(run.signal, 'abort')).toHaveLength(0);
  });

  test('invalid JSON arguments are kept as the raw text', async () => {
    const truncated = '{"query": "rust", "filt';
    serve(openai.url, json(openaiCompletion(null, [{ id: 'call_x', name: 'search', arguments: truncated }], null)));
    const response = await openai.model().chat({ messages: question, tools });
    expect(response.message.toolCalls).toEqual([{ id: 'call_x', name: 'search', arguments: truncated }]);
  });

  test('sends our conversation in the chat completions shape; tool-call ids round-trip', async () => {
    const requests = serve(
      openai.url,
      json(openaiCompletion(null, [{ id: 'call_abc', name: 'search', arguments: '{"query":"rust"}' }], null)),
      json(openaiCompletion('Three stories.', [], null)),
    );
    const model = openaiModel('gpt-test', { apiKey: API_KEY, baseURL: OPENAI_BASE_URL, ...sampling });
    const first = await model.chat({ messages: question, tools });
    const [call] = first.message.toolCalls;
    await model.chat({
      messages: [
        ...question,
        { role: 'assistant', content: first.message.content, toolCalls: first.message.toolCalls },
        { role: 'tool', toolCallId: call!.id, name: call!.name, content: '3 stories' },
      ],
      tools,
    });
    expect(requests[1]).toEqual({
      model: 'gpt-test',
      seed: 7,
      temperature: 0.2,
      max_tokens: 256,
      messages: [
        { role: 'system', content: 'You browse Hacker News.' },
        { role: 'user', content: 'Find stories about Rust.' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'call_abc', type: 'function', function: { name: 'search', arguments: '{"query":"rust"}' } }],
        },
        { role: 'tool', tool_call_id: 'call_abc', content: '3 stories' },
      ],
      tools: [{ type: 'function', function: tools[0] }],
    });
  });

  test('error messages never contain the API key, even when the server echoes it', async () => {
    const echoes: Reply[] = [
      () => HttpResponse.json({ error: { message: `Incorrect API key provided: ${API_KEY}` } }, { status: 401 }),
      () => HttpResponse.json({ error: { message: `Authorization: Bearer ${API_KEY}` } }, { status: 500 }),
      () => HttpResponse.text(`rate limited for ${API_KEY}`, { status: 429 }),
    ];
    for (const echo of echoes) {
      serve(openai.url, echo);
      const error = await modelError(openai.model({ maxRetries: 0, rateLimitRetries: 0 }).chat({ messages: question, tools }));
      expect(error.message).toContain('[redacted]');
      expect(`${error.message}\n${error.stack}`).not.toContain(API_KEY);
    }
  });
});

test.describe('ollama', () => {
  test('sends our conversation in the /api/chat shape; ids are unique across turns', async () => {
    const requests = serve(
      ollama.url,
      json(ollamaAnswer(null, [{ name: 'search', arguments: { query: 'rust' } }], null)),
      json(ollamaAnswer(null, [{ name: 'search', arguments: { query: 'rust lang' } }], null)),
    );
    const model = ollamaModel('llama-test', { host: OLLAMA_HOST, ...sampling });
    const first = await model.chat({ messages: question, tools });
    const [call] = first.message.toolCalls;
    const second = await model.chat({
      messages: [
        ...question,
        { role: 'assistant', content: first.message.content, toolCalls: first.message.toolCalls },
        { role: 'tool', toolCallId: call!.id, name: call!.name, content: '3 stories' },
      ],
      tools,
    });
    expect(first.message.toolCalls.map((toolCall) => toolCall.id)).toEqual(['call_0_0']);
    expect(second.message.toolCalls.map((toolCall) => toolCall.id)).toEqual(['call_1_0']);
    expect(requests[1]).toEqual({
      model: 'llama-test',
      stream: false,
      options: { seed: 7, temperature: 0.2, num_predict: 256 },
      messages: [
        { role: 'system', content: 'You browse Hacker News.' },
        { role: 'user', content: 'Find stories about Rust.' },
        { role: 'assistant', content: '', tool_calls: [{ function: { name: 'search', arguments: { query: 'rust' } } }] },
        { role: 'tool', content: '3 stories', tool_name: 'search' },
      ],
      tools: [{ type: 'function', function: tools[0] }],
    });
  });
});
