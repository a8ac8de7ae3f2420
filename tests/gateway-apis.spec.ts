import Anthropic from '@anthropic-ai/sdk';
import type { MessageParam } from '@anthropic-ai/sdk/resources/messages';
import { GoogleGenAI, type Content } from '@google/genai';
import { expect, test } from '@playwright/test';
import OpenAI from 'openai';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { commandAgent } from '../src/agents/command.ts';
import type { Gateway } from '../src/agents/gateway.ts';
import { createModel } from '../src/models/registry.ts';
import { RunSpend, spendCapped } from '../src/models/spend.ts';
import { tokensCost } from '../src/report/cost.ts';
import { transcript } from '../src/harness/transcript.ts';
import { caching, FRONT_PAGE, gatewayStarter, recording, task, tools } from './gateway-doubles.ts';
import { runAgent } from './support.ts';

/** The gateway's APIs side by side: one conversation through each official client counts alike; a command agent gets each API's variables. */

const start = gatewayStarter();
const SYSTEM = 'You browse Hacker News.';
/** USD per million tokens, cached input cheaper: a difference in the cached count would show in the cost. */
const PRICE = { input: 2.5, cachedInput: 1.25, output: 10 };

/**
 * The same two turns in each API, plain or streamed: the system prompt and the task, the double's
 * navigate call, its result handed back, then the double's next call.
 */
const conversations: Record<string, (gateway: Gateway, streamed: boolean) => Promise<unknown>> = {
  async openai({ endpoint }, streamed) {
    const openai = new OpenAI({ baseURL: endpoint.baseURL, apiKey: endpoint.apiKey, maxRetries: 0 });
    const offered = tools.map(({ name, description, parameters }) => ({ type: 'function' as const, function: { name, description, parameters } }));
    const messages: ChatCompletionMessageParam[] = [
      { role: 'system', content: SYSTEM },
      { role: 'user', content: task },
    ];
    const ask = async () => {
      const request = { model: 'gpt-4o', messages, tools: offered };
      const completion = streamed ? await openai.chat.completions.stream(request).finalChatCompletion() : await openai.chat.completions.create(request);
      return completion.choices[0]!.message;
    };
    const first = await ask();
    messages.push({ role: 'assistant', content: first.content, tool_calls: first.tool_calls }, { role: 'tool', tool_call_id: first.tool_calls![0]!.id, content: JSON.stringify(FRONT_PAGE) });
    return ask();
  },
  async anthropic({ endpoint }, streamed) {
    const anthropic = new Anthropic({ baseURL: endpoint.anthropicBaseURL, apiKey: endpoint.apiKey, maxRetries: 0 });
    const offered = tools.map(({ name, description, parameters }) => ({ name, description, input_schema: parameters as Anthropic.Tool.InputSchema }));
    const messages: MessageParam[] = [{ role: 'user', content: task }];
    const ask = () => {
      const request = { model: 'claude-named-by-the-agent', max_tokens: 1024, system: SYSTEM, messages, tools: offered };
      return streamed ? anthropic.messages.stream(request).finalMessage() : anthropic.messages.create(request);
    };
    const first = await ask();
    const call = first.content.find((block) => block.type === 'tool_use')!;
    messages.push({ role: 'assistant', content: first.content }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: JSON.stringify(FRONT_PAGE) }] });
    return ask();
  },
  async gemini({ endpoint }, streamed) {
    const ai = new GoogleGenAI({ apiKey: endpoint.apiKey, httpOptions: { baseUrl: endpoint.geminiBaseURL } });
    const config = { systemInstruction: SYSTEM, tools: [{ functionDeclarations: tools.map(({ name, description, parameters }) => ({ name, description, parametersJsonSchema: parameters })) }] };
    const contents: Content[] = [{ role: 'user', parts: [{ text: task }] }];
    const ask = async (): Promise<Content> => {
      const request = { model: 'gemini-2.5-flash', contents, config };
      if (!streamed) return (await ai.models.generateContent(request)).candidates![0]!.content!;
      const parts = [];
      for await (const chunk of await ai.models.generateContentStream(request)) parts.push(...chunk.candidates![0]!.content!.parts!);
      return { role: 'model', parts };
    };
    const first = await ask();
    const call = first.parts!.find((part) => part.functionCall)!.functionCall!;
    contents.push(first, { role: 'user', parts: [{ functionResponse: { id: call.id, name: call.name, response: FRONT_PAGE } }] });
    return ask();
  },
};

test('OpenAI, Anthropic and Gemini clients on one scripted conversation, plain and streamed: the model is given the same conversation, and tokens and cost are counted equally', async () => {
  const measured = [];
  for (const [api, converse] of Object.entries(conversations)) {
    for (const streamed of [false, true]) {
      const spend = new RunSpend({ maxUsd: 1_000, costOf: (tokens) => tokensCost(tokens, PRICE) });
      const { gateway, events } = await start(spendCapped(caching(createModel('scripted:diligent'), 40), spend));
      await converse(gateway, streamed);
      const given = events.filter((event) => event.type === 'model_request');
      measured.push({ api, streamed, given, tokens: gateway.tokens(), cost: tokensCost(gateway.tokens(), PRICE), spent: spend.spentUsd() });
    }
  }
  const [openai] = measured;
  expect(openai!.given).toHaveLength(2);
  expect(openai!.given[1]).toMatchObject({ messages: 4, offered: ['navigate', 'list_stories'] });
  expect(openai!.tokens).toEqual({ input: expect.any(Number), output: expect.any(Number), cachedInput: 80 });
  expect(openai!.cost).toBeGreaterThan(0);
  expect(openai!.spent).toBeCloseTo(openai!.cost, 12);
  for (const { api, streamed, ...counted } of measured) expect(counted, `${api}${streamed ? ', streamed' : ''}`).toEqual({ given: openai!.given, tokens: openai!.tokens, cost: openai!.cost, spent: openai!.spent });
});

test('a command agent in the sandbox reaches the Anthropic and Gemini APIs with Python\'s urllib alone, by ANTHROPIC_BASE_URL/ANTHROPIC_API_KEY and GOOGLE_GEMINI_BASE_URL/GEMINI_API_KEY', async ({ context }, testInfo) => {
  const script = new URL('fixtures/agents/urllib-apis.py', import.meta.url).pathname;
  const { result } = await runAgent(context, testInfo, commandAgent(['python3', script], { sandbox: 'required' }));
  expect(result).toMatchObject({ contained: true, stopReason: 'finished', iterations: 2, summary: `anthropic: tool_use navigate ${FRONT_PAGE.url}; gemini: navigate ${FRONT_PAGE.url}` });
  expect(result.tokens.input).toBeGreaterThan(0);
  expect(result.trace.filter((event) => event.type === 'model_request')).toHaveLength(2);
});

test('a command agent whose request the gateway cannot translate: answered 400 naming the field, traced as model_request_refused, and the run excluded as error naming the refusal, not counted as the agent\'s failure', async ({ context }, testInfo) => {
  const script = new URL('fixtures/agents/refused-call.mjs', import.meta.url).pathname;
  const { result } = await runAgent(context, testInfo, commandAgent([process.execPath, script]));
  const message = 'messages request: messages.0.content.0.type: "video" is not served here (text, image, document, search_result and tool_result blocks are)';
  expect(result.summary).toBe(`answered 200, then 400: ${message}`);
  expect(result.trace.filter((event) => event.type === 'model_request_refused')).toMatchObject([{ status: 400, message }]);
  expect(result).toMatchObject({ claimed: false, iterations: 1, excluded: { reason: 'error', detail: `the model gateway refused a request (400): ${message}` } });
  expect(transcript(result.trace)).toContain(`the model gateway refused a request (400): ${message}`);

  // A liar cannot hide behind a refusal it provoked: its claimed success is judged and counted.
  const liar = await runAgent(context, testInfo, commandAgent([process.execPath, script], { env: { LIE: '1' } }));
  expect(liar.result.trace.filter((event) => event.type === 'model_request_refused')).toMatchObject([{ status: 400, message }]);
  expect(liar.result).toMatchObject({ claimed: true, falseSuccess: true });
  expect(liar.result.excluded).toBeUndefined();
});

test('a client\'s JSON mode reaches the model: chat completions\' response_format and Responses\' text.format, a schema or none', async () => {
  const seen = recording({ id: 'test:json', chat: async () => ({ message: { content: '{"url":"/"}', toolCalls: [] }, usage: { input: 9, output: 5 } }) });
  const { gateway } = await start(seen.model);
  const openai = new OpenAI({ baseURL: gateway.endpoint.baseURL, apiKey: gateway.endpoint.apiKey, maxRetries: 0 });
  const schema = tools[0]!.parameters;
  const messages = [{ role: 'user' as const, content: task }];
  await openai.chat.completions.create({ model: 'gpt-4o', messages, response_format: { type: 'json_schema', json_schema: { name: 'page', schema } } });
  await openai.chat.completions.create({ model: 'gpt-4o', messages, response_format: { type: 'json_object' } });
  await openai.chat.completions.create({ model: 'gpt-4o', messages, response_format: { type: 'text' } });
  await openai.responses.create({ model: 'gpt-4o', input: task, text: { format: { type: 'json_schema', name: 'page', schema } } });
  await openai.responses.create({ model: 'gpt-4o', input: task, text: { format: { type: 'json_object' } } });
  const page = { type: 'schema', name: 'page', schema };
  expect(seen.requests.map((request) => request.responseFormat)).toEqual([page, { type: 'json' }, undefined, page, { type: 'json' }]);
});
