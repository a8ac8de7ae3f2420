import { ApiError, GoogleGenAI, Type, type Content, type FunctionDeclaration, type GenerateContentParameters, type GenerateContentResponse } from '@google/genai';
import { expect, test } from '@playwright/test';
import type { Gateway } from '../src/agents/gateway.ts';
import { ollamaModel } from '../src/models/ollama.ts';
import { openaiModel } from '../src/models/openai.ts';
import { createModel } from '../src/models/registry.ts';
import { ModelError } from '../src/models/types.ts';
import { fromGenerateContentRequest, generateContentRequestSchema } from '../src/models/wire-gemini.ts';
import { caching, failing, FRONT_PAGE, gatewayStarter, held, recording, talker, task, tools, types, uncounted } from './gateway-doubles.ts';

/** The gateway's Gemini API (generateContent, streamGenerateContent), with the official `@google/genai` as the client. */

const start = gatewayStarter();
const diligent = () => createModel('scripted:diligent');

const declarations: FunctionDeclaration[] = tools.map((tool) => ({ name: tool.name, description: tool.description, parametersJsonSchema: tool.parameters }));

function client(gateway: Gateway, apiKey = gateway.endpoint.apiKey) {
  return new GoogleGenAI({ apiKey, httpOptions: { baseUrl: gateway.endpoint.geminiBaseURL } });
}

const request = (contents: Content[], offered = declarations.slice(0, 1)): GenerateContentParameters => ({ model: 'gemini-2.5-flash', contents, config: { tools: [{ functionDeclarations: offered }] } });
const user = (text: string): Content => ({ role: 'user', parts: [{ text }] });

/** An SDK's error as the API wrote it: the SDK puts the body, as JSON, in its message. */
const bodyOf = (error: unknown) => (error instanceof ApiError ? { status: error.status, ...JSON.parse(error.message) } : error);

/** A REST client's call (`method` with its query), with the key as `x-goog-api-key` unless `key` is null. */
function rest(gateway: Gateway, body: object, { method = 'generateContent', key = gateway.endpoint.apiKey as string | null } = {}) {
  const url = `${gateway.endpoint.geminiBaseURL}/v1beta/models/gemini-2.5-flash:${method}`;
  return fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...(key !== null && { 'x-goog-api-key': key }) }, body: JSON.stringify(body) });
}

test('the genai SDK gets the double\'s functionCall through the gateway; its functionResponse goes back and the double moves on; each call is in the trace', async () => {
  const { gateway, events } = await start(diligent());
  const ai = client(gateway);
  const first = await ai.models.generateContent({ ...request([user(task)]), config: { ...request([]).config, systemInstruction: 'You browse Hacker News.' } });
  const [call] = first.functionCalls ?? [];
  expect(call).toMatchObject({ name: 'navigate', args: FRONT_PAGE });
  expect(call!.id).toBeTruthy();
  expect(first.candidates?.[0]).toMatchObject({ finishReason: 'STOP', content: { role: 'model' } });
  expect(first.modelVersion).toBe('scripted:diligent');
  expect(first.usageMetadata?.promptTokenCount).toBeGreaterThan(0);
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
  expect(gateway.tokens()).toEqual({ input: first.usageMetadata!.promptTokenCount, output: first.usageMetadata!.candidatesTokenCount });

  const next = await ai.models.generateContent(
    request([user(task), first.candidates![0]!.content!, { role: 'user', parts: [{ functionResponse: { id: call!.id, name: 'navigate', response: FRONT_PAGE } }] }], declarations),
  );
  expect(next.functionCalls).toMatchObject([{ name: 'list_stories' }]);
  expect(types(events)).toEqual(['model_request', 'model_response', 'model_request', 'model_response']);
  const [, assistant, result] = (events[2] as { sent: Array<{ role: string; text: string }> }).sent;
  expect(assistant).toMatchObject({ role: 'assistant', text: `navigate(${JSON.stringify(FRONT_PAGE)})` });
  expect(result).toMatchObject({ role: 'tool', text: `${call!.id}: ${JSON.stringify(FRONT_PAGE)}` });
});

test('a REST client\'s request reads as the conversation: snake_case fields, OpenAPI types, calls and responses without ids (matched by name), thoughts left out', () => {
  const read = fromGenerateContentRequest(
    generateContentRequestSchema.parse({
      system_instruction: { parts: [{ text: 'Be ' }, { text: 'brief.' }] },
      contents: [
        { role: 'user', parts: [{ text: 'Go.' }] },
        {
          role: 'model',
          parts: [{ text: 'Planning.', thought: true }, { text: 'Opening both.' }, { function_call: { name: 'navigate', args: { url: '/' } } }, { functionCall: { name: 'get_text' } }],
        },
        // Answered out of order, one by the older role `function`: each finds its call by name.
        { role: 'function', parts: [{ function_response: { name: 'get_text', response: { text: 'Hello' } } }] },
        { role: 'user', parts: [{ functionResponse: { name: 'navigate', response: { ok: true } } }, { text: 'Next?' }] },
      ],
      tools: [{ function_declarations: [{ name: 'navigate', parameters: { type: 'OBJECT', properties: { url: { type: 'STRING' }, tags: { type: 'ARRAY', items: { type: 'STRING' } } }, required: ['url'] } }, { name: 'get_text' }] }],
      generation_config: { temperature: 0.2 },
    }),
  );
  expect(read.messages).toEqual([
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: 'Go.' },
    {
      role: 'assistant',
      content: 'Opening both.',
      toolCalls: [
        { id: 'call_0_0', name: 'navigate', arguments: '{"url":"/"}' },
        { id: 'call_0_1', name: 'get_text', arguments: '{}' },
      ],
    },
    { role: 'tool', toolCallId: 'call_0_1', name: 'get_text', content: '{"text":"Hello"}' },
    { role: 'tool', toolCallId: 'call_0_0', name: 'navigate', content: '{"ok":true}' },
    { role: 'user', content: 'Next?' },
  ]);
  expect(read.tools).toEqual([
    { name: 'navigate', description: '', parameters: { type: 'object', properties: { url: { type: 'string' }, tags: { type: 'array', items: { type: 'string' } } }, required: ['url'] } },
    { name: 'get_text', description: '', parameters: { type: 'object', properties: {} } },
  ]);
});

test('streamed with alt=sse: a chunk per part, the last with the finish reason and usage; without alt=sse, one JSON array of the same chunks', async () => {
  const { gateway, events } = await start(talker);
  const ai = client(gateway);
  const chunks: GenerateContentResponse[] = [];
  for await (const chunk of await ai.models.generateContentStream(request([user(task)]))) chunks.push(chunk);
  expect(chunks.map((chunk) => chunk.candidates?.[0]?.content?.parts)).toEqual([[{ text: 'Opening it.' }], [{ functionCall: { id: 'call_talk', name: 'navigate', args: FRONT_PAGE } }]]);
  expect(chunks.map((chunk) => chunk.candidates?.[0]?.finishReason)).toEqual([undefined, 'STOP']);
  expect(chunks.map((chunk) => chunk.usageMetadata)).toEqual([undefined, { promptTokenCount: 30, candidatesTokenCount: 9, totalTokenCount: 39 }]);

  const plain = await ai.models.generateContent(request([user(task)]));
  expect(plain.candidates?.[0]?.content?.parts).toEqual(chunks.flatMap((chunk) => chunk.candidates![0]!.content!.parts));

  const array = await rest(gateway, { contents: [user(task)] }, { method: 'streamGenerateContent' });
  expect(array.headers.get('content-type')).toBe('application/json');
  expect(((await array.json()) as GenerateContentResponse[]).map((chunk) => chunk.candidates?.[0]?.content?.parts)).toEqual(chunks.map((chunk) => chunk.candidates?.[0]?.content?.parts));
  expect(types(events)).toEqual(['model_request', 'model_response', 'model_request', 'model_response', 'model_request', 'model_response']);
  expect(gateway.tokens()).toEqual({ input: 90, output: 27 });
});

test('usage: the prompt count holds the cached tokens, cachedContentTokenCount says how many; the run counts both, plain and streamed; an unknown count is left out', async () => {
  const { gateway } = await start(caching(diligent(), 40));
  const ai = client(gateway);
  const plain = await ai.models.generateContent(request([user(task)]));
  const { promptTokenCount, candidatesTokenCount } = plain.usageMetadata!;
  expect(plain.usageMetadata).toEqual({ promptTokenCount, cachedContentTokenCount: 40, candidatesTokenCount, totalTokenCount: promptTokenCount! + candidatesTokenCount! });
  expect(gateway.tokens()).toEqual({ input: promptTokenCount, output: candidatesTokenCount, cachedInput: 40 });
  const chunks: GenerateContentResponse[] = [];
  for await (const chunk of await ai.models.generateContentStream(request([user(task)]))) chunks.push(chunk);
  expect(chunks.at(-1)!.usageMetadata).toEqual(plain.usageMetadata);
  expect(gateway.tokens()).toEqual({ input: 2 * promptTokenCount!, output: 2 * candidatesTokenCount!, cachedInput: 80 });

  const unknown = await start(uncounted(diligent()));
  expect((await client(unknown.gateway).models.generateContent(request([user(task)]))).usageMetadata).toEqual({});
  expect(unknown.gateway.tokens()).toEqual({ input: null, output: null });
});

test('a wrong or missing key is a 401 in Google\'s shape and nothing is forwarded; the run\'s token is taken as x-goog-api-key or as ?key=', async () => {
  const { gateway, events } = await start(diligent());
  const refused = await client(gateway, 'AIza-not-the-token').models.generateContent(request([user(task)])).catch((error: unknown) => error);
  expect(refused).toBeInstanceOf(ApiError);
  expect(bodyOf(refused)).toEqual({
    status: 401,
    error: { code: 401, status: 'UNAUTHENTICATED', message: expect.stringContaining('GEMINI_API_KEY'), details: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'INVALID_API_KEY', domain: 'harness-eval' }] },
  });
  const post = (query: string) => rest(gateway, { contents: [user(task)] }, { method: `generateContent${query}`, key: null });
  expect((await post('')).status).toBe(401);
  expect((await post('?key=AIza-not-the-token')).status).toBe(401);
  expect(events).toEqual([]);

  const taken = await post(`?key=${gateway.endpoint.apiKey}`);
  expect(taken.status).toBe(200);
  expect(((await taken.json()) as GenerateContentResponse).candidates?.[0]?.content?.parts?.[0]?.functionCall).toMatchObject({ name: 'navigate' });
  expect(types(events)).toEqual(['model_request', 'model_response']);
});

test('what the gateway cannot translate is a 400 in Google\'s shape naming the field, traced as model_request_refused, and no call: no contents, a role it does not know; another path is a 404, traced too', async () => {
  const { gateway, events } = await start(diligent());
  // The SDK refuses no contents itself: sent as a REST client would.
  const empty = await rest(gateway, { contents: [] });
  expect(empty.status).toBe(400);
  expect(await empty.json()).toMatchObject({ error: { code: 400, status: 'INVALID_ARGUMENT', message: 'generateContent request: contents: must hold at least one content' } });
  const role = await rest(gateway, { contents: [{ role: 'tool', parts: [{ text: task }] }] });
  expect(await role.json()).toMatchObject({ error: { status: 'INVALID_ARGUMENT', message: expect.stringContaining('contents.0.role') } });
  const embedded = await client(gateway).models.embedContent({ model: 'gemini-embedding-001', contents: task }).catch(bodyOf);
  expect(embedded).toMatchObject({ status: 404, error: { status: 'NOT_FOUND', message: expect.stringContaining(':batchEmbedContents') } });
  expect(events).toEqual([
    { type: 'model_request_refused', status: 400, message: 'generateContent request: contents: must hold at least one content' },
    { type: 'model_request_refused', status: 400, message: expect.stringContaining('contents.0.role') },
    { type: 'model_request_refused', status: 404, message: expect.stringContaining(':batchEmbedContents') },
  ]);
});

test('the Gemini CLI\'s shapes: an image beside a function\'s response goes to the model (and is named in text), a built-in tool (googleSearch) is dropped with a note, countTokens answers an estimate', async () => {
  const png = 'iVBORw0KGgo=';
  const seen = recording(diligent());
  const { gateway, events } = await start(seen.model);
  const ai = client(gateway);
  const called: Content = { role: 'model', parts: [{ functionCall: { id: 'c1', name: 'navigate', args: FRONT_PAGE } }] };
  const answered: Content = { role: 'user', parts: [{ functionResponse: { id: 'c1', name: 'navigate', response: { output: 'Opened.' } } }, { inlineData: { mimeType: 'image/png', data: png } }] };
  const answer = await ai.models.generateContent({ ...request([user(task), called, answered]), config: { tools: [{ functionDeclarations: declarations }, { googleSearch: {} }] } });
  expect(answer.functionCalls).toMatchObject([{ name: 'list_stories' }]);
  expect(seen.requests[0]!.messages.slice(2)).toEqual([
    { role: 'tool', toolCallId: 'c1', name: 'navigate', content: '{"output":"Opened."}' },
    { role: 'user', content: '[image: image/png, 8 bytes]', images: [{ mimeType: 'image/png', data: png }] },
  ]);
  expect(seen.requests[0]!.tools.map((tool) => tool.name)).toEqual(['navigate', 'list_stories']);
  expect(events[0]).toEqual({ type: 'harness_note', layer: 'gateway', message: expect.stringContaining('googleSearch') });

  const counted = await ai.models.countTokens({ model: 'gemini-2.5-flash', contents: [user(task)] });
  expect(counted.totalTokens).toBeGreaterThan(Math.ceil(task.length / 4));
  expect(types(events)).toEqual(['harness_note', 'model_request', 'model_response']);
});

test('generationConfig reaches the model: JSON mode, with its schema (JSON Schema, or OpenAPI\'s read as JSON Schema), and sampling; the openai and ollama providers ask their APIs for them in their own words', async () => {
  const route = { type: 'object', properties: { model: { type: 'string' } }, required: ['model'] };
  const seen = recording({ id: 'test:json', chat: async () => ({ message: { content: '{"model":"flash"}', toolCalls: [] }, usage: { input: 9, output: 5 } }) });
  const ai = client((await start(seen.model)).gateway);
  const ask = (config: GenerateContentParameters['config']) => ai.models.generateContent({ model: 'gemini-2.5-flash', contents: 'Pick a model.', config });
  expect((await ask({ responseMimeType: 'application/json', responseJsonSchema: route, temperature: 0, topP: 0.5, maxOutputTokens: 100, stopSequences: ['END'] })).text).toBe('{"model":"flash"}');
  await ask({ responseMimeType: 'application/json', responseSchema: { type: Type.OBJECT, properties: { model: { type: Type.STRING } }, required: ['model'] } });
  await ask({ responseMimeType: 'application/json' });
  await ask({ temperature: 1 });
  expect(seen.requests.map(({ responseFormat, sampling }) => ({ responseFormat, sampling }))).toEqual([
    { responseFormat: { type: 'schema', name: 'response', schema: route }, sampling: { temperature: 0, topP: 0.5, maxTokens: 100, stop: ['END'] } },
    { responseFormat: { type: 'schema', name: 'response', schema: route }, sampling: undefined },
    { responseFormat: { type: 'json' }, sampling: undefined },
    { responseFormat: undefined, sampling: { temperature: 1 } },
  ]);

  // The providers: the model spec's own sampling wins; what the client asked fills in the rest.
  const bodies: Array<Record<string, unknown>> = [];
  const provider = (answer: object) => async (_url: string | URL | Request, init?: RequestInit) => (bodies.push(JSON.parse(String(init!.body))), Response.json(answer));
  const completion = { id: 'c', object: 'chat.completion', created: 0, model: 'gpt-test', choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: '{}' } }] };
  const openai = openaiModel('gpt-test', { apiKey: 'sk-test', baseURL: 'http://127.0.0.1:9/v1', temperature: 0.2, fetch: provider(completion) });
  const ollama = ollamaModel('llama3.1', { host: 'http://127.0.0.1:9', temperature: 0.2, fetch: provider({ model: 'llama3.1', created_at: new Date(0).toISOString(), message: { role: 'assistant', content: '{}' }, done: true }) });
  const asked = { messages: [{ role: 'user' as const, content: 'Pick a model.' }], tools: [], sampling: { temperature: 0, maxTokens: 100, stop: ['END'] } };
  for (const model of [openai, ollama]) {
    await model.chat({ ...asked, responseFormat: { type: 'schema', name: 'response', schema: route } });
    await model.chat({ ...asked, responseFormat: { type: 'json' } });
  }
  expect(bodies).toEqual([
    expect.objectContaining({ response_format: { type: 'json_schema', json_schema: { name: 'response', schema: route } }, temperature: 0.2, max_tokens: 100, stop: ['END'] }),
    expect.objectContaining({ response_format: { type: 'json_object' } }),
    expect.objectContaining({ format: route, options: { temperature: 0.2, num_predict: 100, stop: ['END'] } }),
    expect.objectContaining({ format: 'json' }),
  ]);
});

test('the run\'s limits hold in Google\'s shape: past maxCalls a 429 (GATEWAY_LIMIT), a body past maxBodyBytes a 413; a provider\'s failure is its status', async () => {
  const { gateway, events, limits } = await start(diligent(), { maxCalls: 1, maxBodyBytes: 10_000 });
  const ai = client(gateway);
  await ai.models.generateContent(request([user(task)]));
  expect(await ai.models.generateContent(request([user(task)])).catch(bodyOf)).toEqual({
    status: 429,
    error: expect.objectContaining({ code: 429, status: 'RESOURCE_EXHAUSTED', message: "the run's gateway limit is reached: gateway calls (1) (maxCalls)", details: [expect.objectContaining({ reason: 'GATEWAY_LIMIT' })] }),
  });
  expect(await ai.models.generateContent(request([user('x'.repeat(20_000))])).catch(bodyOf)).toMatchObject({ status: 413, error: { message: expect.stringContaining('maxBodyBytes'), details: [{ reason: 'REQUEST_TOO_LARGE' }] } });
  expect(types(events)).toEqual(['model_request', 'model_response']);
  expect(limits).toEqual(['gateway calls (1)']);

  const throttled = await start(failing(new ModelError('rate_limited', 'openai: Rate limit reached', 429)));
  expect(await client(throttled.gateway).models.generateContent(request([user(task)])).catch(bodyOf)).toMatchObject({ status: 429, error: { status: 'RESOURCE_EXHAUSTED', message: 'openai: Rate limit reached', details: [{ reason: 'RATE_LIMITED' }] } });
  expect(throttled.gateway.rateLimited()).toBe('openai: Rate limit reached');
  const broken = await start(failing(new ModelError('timeout', 'openai: timed out')));
  expect(await client(broken.gateway).models.generateContent(request([user(task)])).catch(bodyOf)).toMatchObject({ status: 504, error: { status: 'DEADLINE_EXCEEDED' } });
});

test('a stream cut part way: the client hangs up after the first chunk, before the usage came, or before the answer came; each call is counted whole', async () => {
  const { gateway, events } = await start(talker);
  for await (const chunk of await client(gateway).models.generateContentStream(request([user(task)]))) {
    expect(chunk.usageMetadata).toBeUndefined();
    break; // Leaving the loop hangs up.
  }
  expect(gateway.tokens()).toEqual({ input: 30, output: 9 });
  expect(types(events)).toEqual(['model_request', 'model_response']);

  const provider = held();
  const slow = await start(provider.model);
  const hangUp = new AbortController();
  const asked = client(slow.gateway).models.generateContentStream({ ...request([user(task)]), config: { abortSignal: hangUp.signal } }).catch((error: unknown) => error);
  await expect.poll(provider.received).toBe(1);
  hangUp.abort();
  expect(await asked).toBeInstanceOf(Error);
  provider.answer(0, { message: { content: 'late', toolCalls: [] }, usage: { input: 500, output: 7 } });
  await expect.poll(() => slow.gateway.tokens()).toEqual({ input: 500, output: 7 });
  expect(types(slow.events)).toEqual(['model_request', 'model_response']);
});
