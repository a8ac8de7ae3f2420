import Anthropic, { AuthenticationError, BadRequestError, RateLimitError } from '@anthropic-ai/sdk';
import type { MessageParam, RawMessageStreamEvent, Tool } from '@anthropic-ai/sdk/resources/messages';
import { expect, test } from '@playwright/test';
import type { Gateway } from '../src/agents/gateway.ts';
import { createModel } from '../src/models/registry.ts';
import { ModelError } from '../src/models/types.ts';
import OpenAI from 'openai';
import { caching, failing, FRONT_PAGE, gatewayStarter, held, recording, talker, task, tools, types, uncounted } from './gateway-doubles.ts';

/** The gateway's Anthropic Messages API, with the official `@anthropic-ai/sdk` as the client. */

const start = gatewayStarter();
const diligent = () => createModel('scripted:diligent');

const anthropicTools: Tool[] = tools.map((tool) => ({ name: tool.name, description: tool.description, input_schema: tool.parameters as Tool.InputSchema }));
const [navigate] = anthropicTools;

function client(gateway: Gateway, options: ConstructorParameters<typeof Anthropic>[0] = {}) {
  return new Anthropic({ baseURL: gateway.endpoint.anthropicBaseURL, apiKey: gateway.endpoint.apiKey, maxRetries: 0, ...options });
}

const request = (messages: MessageParam[], offered: Tool[] = [navigate!]) => ({ model: 'claude-named-by-the-agent', max_tokens: 1024, messages, tools: offered });
/** A message as a `model_request` records it. */
const sent = (role: string, text: string) => ({ role, text, chars: text.length });

test('the anthropic SDK gets the double\'s tool_use through the gateway; its tool_result goes back and the double moves on; each call is in the trace', async () => {
  const { gateway, events } = await start(diligent());
  const anthropic = client(gateway);
  const first = await anthropic.messages.create({ ...request([{ role: 'user', content: task }]), system: 'You browse Hacker News.' });
  expect(first).toMatchObject({ type: 'message', role: 'assistant', model: 'scripted:diligent', stop_reason: 'tool_use', content: [{ type: 'tool_use', name: 'navigate', input: FRONT_PAGE }] });
  expect(first.id).toMatch(/^msg_/);
  expect(first.usage.input_tokens).toBeGreaterThan(0);
  expect(events[0]).toEqual({
    type: 'model_request',
    messages: 2,
    tools: 1,
    sent: [
      { role: 'system', text: 'You browse Hacker News.', chars: 23 },
      { role: 'user', text: task, chars: task.length },
    ],
    offered: ['navigate'],
  });
  expect(gateway.tokens()).toEqual({ input: first.usage.input_tokens, output: first.usage.output_tokens });

  const [call] = first.content;
  const next = await anthropic.messages.create(
    request(
      [
        { role: 'user', content: task },
        { role: 'assistant', content: first.content },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: call!.type === 'tool_use' ? call!.id : '', content: JSON.stringify(FRONT_PAGE) }] },
      ],
      anthropicTools,
    ),
  );
  expect(next.content).toMatchObject([{ type: 'tool_use', name: 'list_stories' }]);
  expect(types(events)).toEqual(['model_request', 'model_response', 'model_request', 'model_response']);
  const [, assistant, result] = (events[2] as { sent: Array<{ role: string; text: string }> }).sent;
  expect(assistant).toMatchObject({ role: 'assistant', text: `navigate(${JSON.stringify(FRONT_PAGE)})` });
  expect(result).toMatchObject({ role: 'tool', text: `${call!.type === 'tool_use' ? call!.id : ''}: ${JSON.stringify(FRONT_PAGE)}` });
});

test('a system prompt as text blocks, a turn as text blocks, text beside tool results, handed-back thinking: the model is given the same conversation as in plain strings', async () => {
  const { gateway, events } = await start(diligent());
  const anthropic = client(gateway);
  const call = { type: 'tool_use' as const, id: 'toolu_1', name: 'navigate', input: FRONT_PAGE };
  await anthropic.messages.create({
    ...request([
      { role: 'user', content: task },
      { role: 'assistant', content: [{ type: 'text', text: 'Opening it.' }, call] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'opened' }, { type: 'text', text: 'Go on.' }] },
    ]),
    system: 'You browse Hacker News.',
  });
  await anthropic.messages.create({
    ...request([
      { role: 'user', content: [{ type: 'text', text: 'Upvote the first story ' }, { type: 'text', text: 'on the front page.' }] },
      { role: 'assistant', content: [{ type: 'thinking', thinking: 'The front page first.', signature: 'c2ln' }, { type: 'text', text: 'Opening it.' }, call] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: 'opened' }] }, { type: 'text', text: 'Go on.' }] },
    ]),
    system: [
      { type: 'text', text: 'You browse ' },
      { type: 'text', text: 'Hacker News.', cache_control: { type: 'ephemeral' } },
    ],
  });
  const [plain, blocks] = events.filter((event) => event.type === 'model_request');
  expect(blocks).toEqual(plain);
  expect((plain as { sent: unknown[] }).sent).toEqual([
    sent('system', 'You browse Hacker News.'),
    sent('user', task),
    sent('assistant', `Opening it. navigate(${JSON.stringify(FRONT_PAGE)})`),
    sent('tool', 'toolu_1: opened'),
    sent('user', 'Go on.'),
  ]);
});

test('streamed: message_start, each block\'s start, delta and stop, message_delta, message_stop; the SDK\'s stream helper assembles the message the plain call answers', async () => {
  const { gateway, events } = await start(diligent());
  const anthropic = client(gateway);
  const streamed: RawMessageStreamEvent[] = [];
  for await (const event of await anthropic.messages.create({ ...request([{ role: 'user', content: task }]), stream: true })) streamed.push(event);
  expect(streamed.map((event) => event.type)).toEqual(['message_start', 'content_block_start', 'content_block_delta', 'content_block_stop', 'message_delta', 'message_stop']);
  expect(streamed[1]).toMatchObject({ index: 0, content_block: { type: 'tool_use', name: 'navigate', input: {} } });
  expect(streamed[2]).toMatchObject({ index: 0, delta: { type: 'input_json_delta', partial_json: JSON.stringify(FRONT_PAGE) } });
  expect(streamed[4]).toMatchObject({ delta: { stop_reason: 'tool_use' }, usage: { input_tokens: gateway.tokens().input, output_tokens: gateway.tokens().output } });

  const final = await anthropic.messages.stream(request([{ role: 'user', content: task }])).finalMessage();
  const plain = await anthropic.messages.create(request([{ role: 'user', content: task }]));
  expect(final).toMatchObject({ content: plain.content, stop_reason: 'tool_use', usage: plain.usage });
  expect(types(events)).toEqual(['model_request', 'model_response', 'model_request', 'model_response', 'model_request', 'model_response']);
});

test('usage: cache_read_input_tokens is the input read from the cache, input_tokens the rest; the run counts the input whole, the cached part apart, plain and streamed', async () => {
  const { gateway } = await start(caching(diligent(), 40));
  const anthropic = client(gateway);
  const plain = await anthropic.messages.create(request([{ role: 'user', content: task }]));
  expect(plain.usage).toMatchObject({ cache_read_input_tokens: 40, cache_creation_input_tokens: null });
  const input = plain.usage.input_tokens + 40;
  expect(gateway.tokens()).toEqual({ input, output: plain.usage.output_tokens, cachedInput: 40 });
  const streamed = await anthropic.messages.stream(request([{ role: 'user', content: task }])).finalMessage();
  expect(streamed.usage).toEqual(plain.usage);
  expect(gateway.tokens()).toEqual({ input: 2 * input, output: 2 * plain.usage.output_tokens, cachedInput: 80 });

  // A count the provider did not give is left out, never sent as zero; the run's count is unknown.
  const unknown = await start(uncounted(diligent()));
  const answer = await client(unknown.gateway).messages.create(request([{ role: 'user', content: task }]));
  expect(answer.usage).toEqual({ cache_creation_input_tokens: null, cache_read_input_tokens: null });
  expect(unknown.gateway.tokens()).toEqual({ input: null, output: null });
});

test('a wrong or missing key is a 401 in Anthropic\'s shape and nothing is forwarded; the run\'s token is taken as x-api-key, or as a bearer token (ANTHROPIC_AUTH_TOKEN)', async () => {
  const { gateway, events } = await start(diligent());
  const ask = (anthropic: Anthropic) => anthropic.messages.create(request([{ role: 'user', content: task }])).catch((error: unknown) => error);
  const refused = await ask(client(gateway, { apiKey: 'sk-ant-not-the-token' }));
  expect(refused).toBeInstanceOf(AuthenticationError);
  expect((refused as AuthenticationError).error).toEqual({ type: 'error', error: { type: 'authentication_error', message: expect.stringContaining('ANTHROPIC_API_KEY') } });
  const missing = await fetch(`${gateway.endpoint.anthropicBaseURL}/v1/messages`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(request([{ role: 'user', content: task }])) });
  expect(missing.status).toBe(401);
  expect(await missing.json()).toMatchObject({ type: 'error', error: { type: 'authentication_error' } });
  expect(events).toEqual([]);

  expect(await ask(client(gateway, { apiKey: null, authToken: gateway.endpoint.apiKey }))).toMatchObject({ type: 'message' });
  expect(types(events)).toEqual(['model_request', 'model_response']);
});

test('what the gateway cannot translate is a 400 in Anthropic\'s shape naming the field, traced as model_request_refused, and no call; another path is a 404, traced too', async () => {
  const { gateway, events } = await start(diligent());
  const anthropic = client(gateway);
  const asks = [
    anthropic.messages.create(request([{ role: 'user', content: [{ type: 'container_upload', file_id: 'file_1' }] }])),
    anthropic.messages.create(request([{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'browser_state', tabs: [] } as never] }] }])),
    anthropic.messages.create(request([])),
  ];
  const refused = await Promise.all(asks.map((ask) => ask.catch((error: unknown) => error as BadRequestError)));
  for (const error of refused) expect(error).toBeInstanceOf(BadRequestError);
  const messages = [
    'messages request: messages.0.content.0.type: "container_upload" is not served here (text, image, document, search_result and tool_result blocks are)',
    'messages request: messages.0.content.0.content.0.type: "browser_state" is not served here (text, image, document, search_result and tool_reference blocks are)',
    'messages request: messages: must hold at least one message',
  ];
  expect(refused.map((error) => (error as BadRequestError).error)).toEqual(messages.map((message) => ({ type: 'error', error: { type: 'invalid_request_error', message } })));
  expect(events).toEqual(messages.map((message) => ({ type: 'model_request_refused', status: 400, message })));

  const batches = await anthropic.messages.batches.list().catch((error: unknown) => error);
  expect(batches).toMatchObject({ status: 404, error: { type: 'error', error: { type: 'not_found_error', message: expect.stringContaining('GET /v1/messages/batches') } } });
  expect(events.at(-1)).toEqual({ type: 'model_request_refused', status: 404, message: expect.stringContaining('GET /v1/messages/batches') });
  expect(types(events)).not.toContain('model_request');
});

test('Claude Code\'s request: system entries among the messages join the system prompt, in order; cache_control anywhere and the anthropic-beta header are taken', async () => {
  const { gateway, events } = await start(diligent());
  const anthropic = client(gateway, { defaultHeaders: { 'anthropic-beta': 'claude-code-20250219,interleaved-thinking-2025-05-14' } });
  const cache = { cache_control: { type: 'ephemeral' as const } };
  const answer = await anthropic.messages.create({
    ...request(
      [
        { role: 'system', content: 'The environment: Linux.' },
        { role: 'user', content: [{ type: 'text', text: task, ...cache }] },
        { role: 'system', content: [{ type: 'text', text: 'Be brief.', ...cache }] },
      ],
      [{ ...navigate!, ...cache }],
    ),
    system: [{ type: 'text', text: 'You browse Hacker News.', ...cache }],
  });
  expect(answer.content).toMatchObject([{ type: 'tool_use', name: 'navigate', input: FRONT_PAGE }]);
  expect(events[0]).toEqual({ type: 'model_request', messages: 2, tools: 1, sent: [sent('system', 'You browse Hacker News.\n\nThe environment: Linux.\n\nBe brief.'), sent('user', task)], offered: ['navigate'] });
});

test('a deferred tool is offered once a tool_reference names it, as Claude Code\'s ToolSearch loads one; handed-back thinking is left out', async () => {
  const { gateway, events } = await start(talker);
  const anthropic = client(gateway);
  const toolSearch: Tool = { name: 'ToolSearch', description: 'Loads deferred tools.', input_schema: { type: 'object', properties: { query: { type: 'string' } } } };
  const offered = [toolSearch, ...anthropicTools.map((tool) => ({ ...tool, defer_loading: true }))];
  await anthropic.messages.create(request([{ role: 'user', content: task }], offered));
  const search = { type: 'tool_use' as const, id: 'toolu_search', name: 'ToolSearch', input: { query: 'select:navigate' } };
  const answer = await anthropic.messages.create(
    request(
      [
        { role: 'user', content: task },
        { role: 'assistant', content: [{ type: 'thinking', thinking: 'The browser first.', signature: 'c2ln' }, { type: 'redacted_thinking', data: 'ZW5j' }, search] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_search', content: [{ type: 'tool_reference', tool_name: 'navigate', cache_control: { type: 'ephemeral' } }] }] },
      ],
      offered,
    ),
  );
  expect(answer.content).toMatchObject([{ type: 'text' }, { type: 'tool_use', name: 'navigate' }]);
  const [before, after] = events.filter((event) => event.type === 'model_request');
  expect(before).toMatchObject({ offered: ['ToolSearch'] });
  expect(after).toMatchObject({
    offered: ['ToolSearch', 'navigate'],
    sent: [sent('user', task), sent('assistant', 'ToolSearch({"query":"select:navigate"})'), sent('tool', 'toolu_search: [tool navigate loaded]')],
  });
});

test('documents, search results and images, in a turn and in a tool result: the model reads what they are in text, and a model that takes images is given the images', async () => {
  const png = 'iVBORw0KGgo=';
  const image = { type: 'image' as const, source: { type: 'base64' as const, media_type: 'image/png' as const, data: png } };
  const conversation: MessageParam[] = [
    { role: 'user', content: task },
    { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'navigate', input: FRONT_PAGE }] },
    {
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: 'Opened.' }, image] },
        { type: 'document', title: 'notes.txt', source: { type: 'text', media_type: 'text/plain', data: 'Vote once.' } },
        { type: 'document', title: 'paper', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0xLjQ=' } },
        { type: 'search_result', source: 'https://news.ycombinator.com/', title: 'Hacker News', content: [{ type: 'text', text: 'The front page.' }] },
        { type: 'image', source: { type: 'url', url: 'https://example.com/a.png' } },
        { type: 'text', text: 'Go on.' },
      ],
    },
  ];
  const seeing = recording(diligent());
  await client((await start(seeing.model)).gateway).messages.create(request(conversation));
  const text = [
    '[document "notes.txt"]\nVote once.',
    '[document "paper": application/pdf, not read: the run\'s model is given text]',
    '[search result "Hacker News" from https://news.ycombinator.com/]\nThe front page.',
    '[image at https://example.com/a.png: not fetched]',
    'Go on.',
  ].join('\n');
  expect(seeing.requests[0]!.messages.slice(1)).toEqual([
    { role: 'assistant', content: null, toolCalls: [{ id: 'toolu_1', name: 'navigate', arguments: JSON.stringify(FRONT_PAGE) }] },
    { role: 'tool', toolCallId: 'toolu_1', name: 'navigate', content: 'Opened.\n[image: image/png, 8 bytes]' },
    { role: 'user', content: text, images: [{ mimeType: 'image/png', data: png }] },
  ]);

  // A model that takes no images is given the text alone.
  const blind = recording(talker);
  await client((await start(blind.model)).gateway).messages.create(request(conversation));
  expect(blind.requests[0]!.messages.at(-1)).toEqual({ role: 'user', content: text });
});

test('count_tokens answers an estimate of the prompt, tools included: nothing is forwarded or counted; GET /v1/models lists the run\'s model to the anthropic SDK as to the openai SDK', async () => {
  const { gateway, events } = await start(diligent());
  const anthropic = client(gateway);
  const plain = await anthropic.messages.countTokens({ model: 'claude', system: 'You browse Hacker News.', messages: [{ role: 'user', content: task }] });
  const withTools = await anthropic.messages.countTokens({ model: 'claude', system: 'You browse Hacker News.', messages: [{ role: 'user', content: task }], tools: anthropicTools });
  expect(plain.input_tokens).toBeGreaterThan(Math.ceil(task.length / 4));
  expect(withTools.input_tokens).toBeGreaterThan(plain.input_tokens + Math.ceil(JSON.stringify(tools).length / 8));
  expect(events).toEqual([]);
  expect(gateway.tokens()).toEqual({ input: 0, output: 0 });

  expect((await anthropic.models.list()).data).toMatchObject([{ type: 'model', id: 'scripted:diligent' }]);
  expect(await anthropic.models.retrieve('claude-sonnet-4-5')).toMatchObject({ type: 'model', id: 'scripted:diligent' });
  const openai = new OpenAI({ baseURL: gateway.endpoint.baseURL, apiKey: gateway.endpoint.apiKey, maxRetries: 0 });
  expect((await openai.models.list()).data.map((model) => model.id)).toEqual(['scripted:diligent']);
  expect(events).toEqual([]);
});

test('a server tool (web_search, the MCP connector\'s toolset) is not given to the model, and the trace says so once; the custom tools beside it are', async () => {
  const { gateway, events } = await start(diligent());
  const anthropic = client(gateway);
  const toolset = { type: 'mcp_toolset', mcp_server_name: 'playwright' } as unknown as Tool;
  for (let call = 0; call < 2; call += 1) {
    const answer = await anthropic.messages.create({ ...request([{ role: 'user', content: task }]), tools: [navigate!, { type: 'web_search_20250305', name: 'web_search' }, toolset] });
    expect(answer.content).toMatchObject([{ type: 'tool_use', name: 'navigate' }]);
  }
  expect(types(events)).toEqual(['harness_note', 'harness_note', 'model_request', 'model_response', 'model_request', 'model_response']);
  expect(events.slice(0, 2)).toEqual(['web_search_20250305', 'mcp_toolset'].map((tool) => ({ type: 'harness_note', layer: 'gateway', message: expect.stringContaining(`built-in tool ${tool} `) })));
  expect(events[2]).toMatchObject({ offered: ['navigate'] });
});

test('the run\'s limits hold in Anthropic\'s shape: past maxCalls a 429 the SDK does not retry, a body past maxBodyBytes a 413; a provider\'s failure is its status', async () => {
  const { gateway, events, limits } = await start(diligent(), { maxCalls: 1, maxBodyBytes: 10_000 });
  let sent = 0;
  // The SDK's own retries: a refusal for a limit is marked not to be retried.
  const anthropic = client(gateway, { maxRetries: 2, fetch: (url, init) => ((sent += 1), fetch(url, init)) });
  await anthropic.messages.create(request([{ role: 'user', content: task }]));
  const refused = await anthropic.messages.create(request([{ role: 'user', content: task }])).catch((error: unknown) => error);
  expect(refused).toBeInstanceOf(RateLimitError);
  expect((refused as RateLimitError).error).toEqual({ type: 'error', error: { type: 'rate_limit_error', message: "the run's gateway limit is reached: gateway calls (1) (maxCalls)" } });
  expect(sent).toBe(2);
  const tooLarge = await anthropic.messages.create(request([{ role: 'user', content: 'x'.repeat(20_000) }])).catch((error: unknown) => error);
  expect(tooLarge).toMatchObject({ status: 413, error: { type: 'error', error: { type: 'request_too_large', message: expect.stringContaining('maxBodyBytes') } } });
  expect(types(events)).toEqual(['model_request', 'model_response']);
  expect(limits).toEqual(['gateway calls (1)']);

  const throttled = await start(failing(new ModelError('rate_limited', 'openai: Rate limit reached', 429)));
  const failed = await client(throttled.gateway).messages.create(request([{ role: 'user', content: task }])).catch((error: unknown) => error);
  expect(failed).toMatchObject({ status: 429, error: { type: 'error', error: { type: 'rate_limit_error', message: 'openai: Rate limit reached' } } });
  expect(throttled.gateway.rateLimited()).toBe('openai: Rate limit reached');
  const broken = await start(failing(new ModelError('server', 'openai: upstream broke', 502)));
  expect(await client(broken.gateway).messages.create(request([{ role: 'user', content: task }])).catch((error: unknown) => error)).toMatchObject({ status: 502, error: { error: { type: 'api_error' } } });
});

test('a stream cut part way: the client hangs up after the first event, or before the answer came; each call is counted whole', async () => {
  const { gateway, events } = await start(diligent());
  const anthropic = client(gateway);
  let first: RawMessageStreamEvent | undefined;
  for await (const event of await anthropic.messages.create({ ...request([{ role: 'user', content: task }]), stream: true })) {
    first = event;
    break; // Leaving the loop hangs up.
  }
  const { usage } = (first as Extract<RawMessageStreamEvent, { type: 'message_start' }>).message;
  expect(gateway.tokens()).toEqual({ input: usage.input_tokens, output: usage.output_tokens });
  expect(types(events)).toEqual(['model_request', 'model_response']);

  const provider = held();
  const slow = await start(provider.model);
  const hangUp = new AbortController();
  const asked = client(slow.gateway).messages.create({ ...request([{ role: 'user', content: task }]), stream: true }, { signal: hangUp.signal }).catch((error: unknown) => error);
  await expect.poll(provider.received).toBe(1);
  hangUp.abort();
  expect(await asked).toMatchObject({ name: 'APIUserAbortError' });
  provider.answer(0, { message: { content: 'late', toolCalls: [] }, usage: { input: 500, output: 7 } });
  await expect.poll(() => slow.gateway.tokens()).toEqual({ input: 500, output: 7 });
  expect(types(slow.events)).toEqual(['model_request', 'model_response']);
});
