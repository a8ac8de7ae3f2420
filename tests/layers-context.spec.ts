import { existsSync, readFileSync } from 'node:fs';
import type { BrowserContext } from '@playwright/test';
import { countTokens as o200kTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { countTokens as cl100kTokens } from 'gpt-tokenizer/encoding/cl100k_base';
import { upvoteFirstPost } from '../src/sites/hn/suite.ts';
import { RunContext } from '../src/harness/context.ts';
import { defineLayer, type LayerValue } from '../src/harness/layer.ts';

/** One run's instance of a layer, for tests that call its hooks directly. */
const instance = (layer: LayerValue) => layer({ outputDir: test.info().outputDir });
import { contextWindow, DEFAULT_CONTEXT_WINDOW, messageCounter, promptTokens } from '../src/harness/tokens.ts';
import type { TraceEvent, TraceEventOf } from '../src/harness/trace.ts';
import { budget, REMOVED_OUTPUT } from '../src/layers/budget.ts';
import { checkpoint } from '../src/layers/checkpoint.ts';
import { guardrails } from '../src/layers/guardrails.ts';
import { output } from '../src/layers/output.ts';
import { settle } from '../src/layers/settle.ts';
import { createModel } from '../src/models/registry.ts';
import type { ChatMessage, ChatRequest, Model } from '../src/models/types.ts';
import { evaluate } from '../src/eval/evaluate.ts';
import { recordedHn, type Site } from '../src/sites/hn/site.ts';
import { TEXT_LIMIT } from '../src/tools/browser.ts';
import { expect, referenceDir, test, turnsDouble } from './support.ts';

const HN = 'https://news.ycombinator.com';
const run = (context: BrowserContext, model: Model, layers: readonly LayerValue[], site: Site = recordedHn()) =>
  evaluate({ context, site, model, layers, task: upvoteFirstPost });

const events = <T extends TraceEvent['type']>(trace: readonly TraceEvent[], type: T) => trace.filter((event) => event.type === type) as TraceEventOf<T>[];
const resultOf = (trace: readonly TraceEvent[], callId: string) => events(trace, 'tool_result').find((event) => event.callId === callId)!;

/** A double that picks each call from the last tool output: for paths and page counts a test cannot know in advance. */
function reactiveDouble(decide: (last: Record<string, unknown> | undefined, turn: number) => { name: string; args?: Record<string, unknown> }) {
  let turn = 0;
  const model: Model = {
    id: 'test:reactive-double',
    async chat({ messages }) {
      turn += 1;
      const last = messages.at(-1);
      const { name, args = {} } = decide(last?.role === 'tool' ? (JSON.parse(last.content) as Record<string, unknown>) : undefined, turn);
      return { message: { content: null, toolCalls: [{ id: `r${turn}`, name, arguments: JSON.stringify(args) }] }, usage: { input: 10, output: 5 } };
    },
  };
  return model;
}
const giveUp = { name: 'finish', args: { success: false, summary: 'done looking' } };

/** Every tool result answers a call made earlier in the same request: providers reject orphans. */
function expectNoOrphans(messages: readonly ChatMessage[]) {
  const calls = new Set(messages.flatMap((message) => (message.role === 'assistant' ? (message.toolCalls ?? []).map((call) => call.id) : [])));
  for (const message of messages) if (message.role === 'tool') expect(calls.has(message.toolCallId)).toBe(true);
}

test.describe('prompt tokens', () => {
  test("OpenAI models count with their own encoding, others with characters ÷ 4; tool-call arguments count", async () => {
    const text = 'Показать HN: токенизатор для TypeScript, 東京で作った <|endoftext|>';
    const user: ChatMessage = { role: 'user', content: text };
    for (const id of ['openai:gpt-4o-mini', 'openai:gpt-4.1-nano', 'openai:o3-mini', 'openai:gpt-5']) {
      expect((await messageCounter(id))(user), id).toBe(4 + o200kTokens(text, { disallowedSpecial: new Set() }));
    }
    expect((await messageCounter('openai:gpt-4'))(user)).toBe(4 + cl100kTokens(text, { disallowedSpecial: new Set() }));
    expect(o200kTokens(text, { disallowedSpecial: new Set() })).not.toBe(cl100kTokens(text, { disallowedSpecial: new Set() }));
    const estimate = await messageCounter('ollama:llama3.1');
    expect(estimate(user)).toBe(4 + Math.ceil(text.length / 4));
    const arguments_ = JSON.stringify({ url: `${HN}/news?p=2` });
    const call: ChatMessage = { role: 'assistant', content: null, toolCalls: [{ id: 'c1', name: 'navigate', arguments: arguments_ }] };
    expect(estimate(call)).toBe(4 + Math.ceil(`\nnavigate${arguments_}`.length / 4));
    expect(promptTokens([user, call], estimate)).toBe(estimate(user) + estimate(call) + 3);
  });

  test('known context windows by model, the longest name first; a small default for unknown models', () => {
    expect(contextWindow('openai:gpt-4o-mini')).toBe(128_000);
    expect(contextWindow('openai:gpt-4o-2024-08-06')).toBe(128_000);
    expect(contextWindow('openai:gpt-4.1-mini')).toBe(1_047_576);
    expect(contextWindow('openai:o1-mini')).toBe(128_000);
    expect(contextWindow('openai:o1')).toBe(200_000);
    expect(contextWindow('ollama:llama3.1:8b')).toBe(128_000);
    expect(contextWindow('ollama:llama3')).toBe(8_192);
    expect(contextWindow('scripted:looper')).toBe(DEFAULT_CONTEXT_WINDOW);
    expect(contextWindow('openai:gpt-4o1-imaginary')).toBe(DEFAULT_CONTEXT_WINDOW);
  });
});

test('bad options fail in one line naming the field', () => {
  expect(() => budget({ reserve: 1 })).toThrow(/^layer budget: reserve: Too big: expected number to be <1$/);
  expect(() => checkpoint({ threshold: 0 })).toThrow(/^layer checkpoint: threshold: Too small: expected number to be >0$/);
  expect(() => settle({ quietMs: 3000 })).toThrow(/^layer settle: quietMs: must not exceed maxMs$/);
  expect(() => output({ inline: 5000, paged: 4000 })).toThrow(/^layer output: paged: must be more than inline$/);
  expect(() => budget({ windw: 10 } as never)).toThrow(/^layer budget: \(options\): Unrecognized key: "windw"$/);
});

test.describe('budget', () => {
  const call = (id: string, name: string, args: object = {}): ChatMessage => ({ role: 'assistant', content: null, toolCalls: [{ id, name, arguments: JSON.stringify(args) }] });
  const result = (id: string, name: string, content: string): ChatMessage => ({ role: 'tool', toolCallId: id, name, content });
  const page = (n: number) => JSON.stringify({ text: `page ${n} `.repeat(250) });

  /** A run holding the conversation, as the loop would hand it to the layer before a model call. */
  function conversation(messages: ChatMessage[]) {
    const model: Model = { id: 'ollama:llama3.1', chat: () => Promise.reject(new Error('not called')) };
    const context = new RunContext('Upvote the first post.', model, 'You are a browser agent.', undefined, []);
    for (const message of [{ role: 'system', content: context.systemPrompt } as const, { role: 'user', content: context.task } as const, ...messages]) context.push(message);
    return context;
  }
  const tokensOf = async (messages: readonly ChatMessage[]) => promptTokens(messages, await messageCounter('ollama:llama3.1'));

  test('over the limit, old tool outputs are stubbed first, oldest first; the latest turn stays whole', async () => {
    const messages = [call('a', 'navigate', { url: `${HN}/news` }), result('a', 'navigate', page(1)), call('b', 'get_text'), result('b', 'get_text', page(2)), call('c', 'get_text', { again: true }), result('c', 'get_text', page(3))];
    const context = conversation(messages);
    const before = await tokensOf(context.messages);
    await instance(budget({ window: before - 100, reserve: 0 })).beforeModel!(context);
    expect(context.messages.map((message) => message.content)).toEqual([
      context.systemPrompt, context.task, null, REMOVED_OUTPUT, null, page(2), null, page(3),
    ]);
    const [event] = context.trace.of('harness_prompt_tokens');
    expect(event).toMatchObject({ layer: 'budget', window: before - 100, tokens: await tokensOf(context.messages) });
    expect(event!.tokens).toBeLessThanOrEqual(before - 100);
    expect(event!.tokens + event!.dropped).toBe(before);
  });

  test('then older copies of repeated calls go, then the oldest turns, each call with its result', async () => {
    const messages = [
      call('a', 'get_stories'), result('a', 'get_stories', '{"stories":[]}'),
      call('b', 'current_url'), result('b', 'current_url', '{"url":"about:blank"}'),
      { role: 'user', content: '[harness] a note' } as const,
      call('c', 'get_stories'), result('c', 'get_stories', '{"stories":[]}'),
      call('d', 'get_stories'), result('d', 'get_stories', '{"stories":[]}'),
    ];
    const repeats = conversation(messages);
    const all = await tokensOf(repeats.messages);
    await instance(budget({ window: all - 1, reserve: 0 })).beforeModel!(repeats);
    // One repeated pair (the oldest get_stories) is enough; nothing was stubbed, as stubs would not be shorter.
    expect(repeats.messages.slice(2)).toEqual(messages.slice(2));

    const tight = conversation(messages);
    const latest = await tokensOf([...tight.messages.slice(0, 2), ...messages.slice(-2)]);
    await instance(budget({ window: latest + 20, reserve: 0 })).beforeModel!(tight);
    // Both older get_stories copies went first; then the oldest turns (current_url, then the note) until it fit.
    expect(tight.messages.map((message) => message.role)).toEqual(['system', 'user', 'user', 'assistant', 'tool']);
    expect(tight.messages.slice(2)).toEqual([messages[4], ...messages.slice(-2)]);

    const none = conversation(messages);
    await instance(budget({ window: 1, reserve: 0 })).beforeModel!(none);
    expect(none.messages).toEqual([...none.messages.slice(0, 2), ...messages.slice(-2)]);
    expect(none.messages.slice(0, 2).map((message) => message.content)).toEqual([none.systemPrompt, none.task]);
  });

  test('a long looper run with a small window stays under the limit, task first, no orphans, recorded each iteration', async ({ context }) => {
    const looper = createModel('scripted:looper');
    const requests: ChatRequest[] = [];
    const model: Model = { id: looper.id, chat: (request) => (requests.push({ ...request, messages: [...request.messages] }), looper.chat(request)) };
    const result = await run(context, model, [guardrails({ maxIterations: 30 }), budget({ window: 300 })]);
    expect(result).toMatchObject({ stopReason: 'max_iterations', iterations: 30 });
    const count = await messageCounter(looper.id);
    const sizes = requests.map((request) => promptTokens(request.messages, count));
    expect(Math.max(...sizes)).toBeLessThanOrEqual(270);
    for (const request of requests) {
      expect(request.messages.slice(0, 2)).toEqual([
        { role: 'system', content: expect.stringContaining('browser agent') },
        { role: 'user', content: upvoteFirstPost.prompt },
      ]);
      expectNoOrphans(request.messages);
    }
    const recorded = events(result.trace, 'harness_prompt_tokens');
    expect(recorded.map((event) => event.iteration)).toEqual(requests.map((_, index) => index));
    expect(recorded.map((event) => event.tokens)).toEqual(sizes);
    expect(recorded.at(-1)!.dropped).toBeGreaterThan(0);
    expect(requests.at(-1)!.messages.length).toBeGreaterThan(4);
  });
});

test('checkpoint saves the conversation, redacted, restarts from a summary, and read_checkpoint reads it back', async ({ context }, testInfo) => {
  const site = recordedHn();
  const password = site.account.password;
  const { model, requests } = turnsDouble([
    [{ name: 'navigate', arguments: JSON.stringify({ url: `${HN}/login?goto=news` }) }],
    [{ name: 'fill', arguments: JSON.stringify({ selector: 'input[name="pw"]', value: password }) }],
    [{ name: 'navigate', arguments: JSON.stringify({ url: `${HN}/news` }) }],
    [{ name: 'get_text', arguments: '{}' }],
    [{ name: 'read_checkpoint', arguments: '{"n": 1, "count": 3}' }],
    [{ name: 'read_checkpoint', arguments: '{"n": 7}' }],
  ]);
  const dir = testInfo.outputPath('checkpoints');
  const result = await run(context, model, [checkpoint({ dir, window: 1000 })], site);

  const [saved] = events(result.trace, 'harness_checkpoint');
  expect(saved!.iteration).toBe(4);
  expect(saved!.file).toMatch(new RegExp(`^${dir}/run-[^/]+/checkpoint-1-1\\.json$`));
  const file = readFileSync(saved!.file, 'utf8');
  expect(file).not.toContain(password);
  expect(file).toContain('[secret]');
  const { messages } = JSON.parse(file) as { messages: ChatMessage[] };
  expect(messages).toHaveLength(saved!.messages);
  expect(messages.slice(0, 2)).toEqual(requests[0]!.messages);
  expect(messages.slice(0, -2)).toEqual(requests[3]!.messages.map((message) => JSON.parse(JSON.stringify(message).replaceAll(password, '[secret]'))));

  // The next request: system prompt, task, a summary of the calls, and the latest turn (the page text).
  const after = requests[4]!.messages;
  expect(after.length).toBeLessThan(messages.length);
  expect(after.slice(0, 2)).toEqual(messages.slice(0, 2));
  expect(after[2]).toMatchObject({ role: 'user', content: expect.stringContaining('saved as checkpoint 1; read_checkpoint({ n: 1, from, count })') });
  expect(after[2]!.content).toContain(`1. navigate {"url":"${HN}/login?goto=news"} → ok`);
  expect(after[2]!.content).toContain('4. get_text {} → ok');
  expect(after.slice(3)).toEqual(messages.slice(-2));
  expect(after.filter((message) => message.role === 'assistant')).toEqual([messages.at(-2)]);

  const [read, missing] = events(result.trace, 'tool_call').filter((event) => event.name === 'read_checkpoint').map((event) => resultOf(result.trace, event.callId));
  expect(read!.output).toMatchObject({ checkpoint: 1, total: messages.length, from: 0, messages: messages.slice(0, 3) });
  expect(JSON.stringify(read!.output)).toContain('/login?goto=news');
  // The page text still filled the window after the read, so the read turn was saved as checkpoint 2, in the same folder.
  expect(events(result.trace, 'harness_checkpoint').map((event) => event.file).slice(1, 2)).toEqual([saved!.file.replace(/1\.json$/, '2.json')]);
  expect(missing).toMatchObject({ ok: false, error: 'no checkpoint 7: there are 2' });
});

test('settle waits for a quiet page after act tools: quick on the replica, bounded by maxMs on a page that keeps changing', async ({ context }) => {
  let ticking = false;
  const ticker = defineLayer({
    name: 'ticker',
    create: () => ({
      async afterTools(harness) {
        if (ticking) return;
        ticking = true;
        await harness.page.evaluate(() => setInterval(() => (document.body.dataset.tick = String(Date.now())), 30));
      },
    }),
  })();
  const { model } = turnsDouble([
    [{ name: 'navigate', arguments: JSON.stringify({ url: `${HN}/news` }) }],
    [{ name: 'click', arguments: '{"selector": "span.rank"}' }],
    [{ name: 'current_url', arguments: '{}' }],
    [{ name: 'click', arguments: '{"selector": "#no-such-element"}' }],
  ]);
  const result = await run(context, model, [ticker, settle({ maxMs: 1200 })]);
  const calls = events(result.trace, 'tool_call').map((event) => event.callId);
  const waits = events(result.trace, 'harness_settle');
  expect(waits.map((event) => event.callId)).toEqual([calls[0], calls[1], calls[3]]);
  const [navigated, clicked, missed] = waits;
  expect(navigated).toMatchObject({ settled: true });
  expect(navigated!.ms).toBeGreaterThanOrEqual(145);
  // Bounds, not timings: a loaded machine may be slow, but a quiet page settles before maxMs…
  expect(navigated!.ms).toBeLessThan(1200);
  expect(clicked).toMatchObject({ settled: false });
  // …and a page that never quiets is left at maxMs, not waited on for ever.
  expect(clicked!.ms).toBeGreaterThanOrEqual(1150);
  expect(clicked!.ms).toBeLessThan(5000);
  // A failed action may still have started something, so it is waited on too.
  expect(missed).toMatchObject({ settled: false });
});

test.describe('output', () => {
  const morePages = (last: Record<string, unknown> | undefined) => /more\(\{ page: (\d+) \}\)/.exec(String(last?.truncated ?? ''))?.[1];

  test('a long output becomes its first page with an announcement; more() serves the rest; short ones pass', async ({ context }) => {
    const model = reactiveDouble((last, turn) => {
      if (turn === 1) return { name: 'navigate', args: { url: `${HN}/news` } };
      if (turn === 2) return { name: 'get_text' };
      const next = morePages(last);
      if (next) return { name: 'more', args: { page: Number(next) } };
      return last && 'content' in last ? { name: 'more', args: { page: 99 } } : giveUp;
    });
    const result = await run(context, model, [output()]);
    const tiers = events(result.trace, 'harness_output');
    expect(tiers.map((event) => event.tier)).toEqual(['inline', 'paged', 'inline']);
    const text = tiers[1]!;
    expect(text.bytes).toBeGreaterThan(2048);

    const first = resultOf(result.trace, text.callId).output!;
    const served = events(result.trace, 'tool_result').filter((event) => event.name === 'more');
    const json = [first, ...served.slice(0, -1).map((event) => event.output!)].map((part) => String(part.content)).join('');
    const whole = JSON.parse(json) as { url: string; text: string };
    expect(whole.url).toBe(`${HN}/news`);
    expect(whole.text).toMatch(/^\s*Hacker News/);
    expect(Buffer.byteLength(json)).toBe(text.bytes);
    const pages = Math.ceil(json.length / 2048);
    expect(pages).toBeGreaterThan(1);
    expect(first.truncated).toBe(`page 1 of ${pages}; call more({ page: 2 }) for the rest`);
    expect(served).toHaveLength(pages);
    expect(served.at(-2)!.output).toMatchObject({ page: `${pages} of ${pages}, the last` });
    expect(served.at(-1)).toMatchObject({ ok: false, error: `the last long output has ${pages} pages` });
  });

  test('a huge output is saved as a file read in chunks; only its own files are readable; get_text is uncapped', async ({ context }, testInfo) => {
    const capture = `${referenceDir}item-2026-harrisjose-easyhn.html`;
    test.skip(!existsSync(capture), 'no ../shared/hn-reference beside the project');
    const site = recordedHn({ capture });
    const story = [...site.replica.capture.items.values()].find((item) => item.kind === 'story')!;
    let artifact = '';
    const model = reactiveDouble((last, turn) => {
      if (turn === 1) return { name: 'navigate', args: { url: `${HN}/item?id=${story.id}` } };
      if (turn === 2) return { name: 'get_text' };
      if (turn === 3) {
        artifact = String(last!.artifact);
        return { name: 'read_artifact', args: { path: '/etc/passwd' } };
      }
      if (turn === 4) return { name: 'read_artifact', args: { path: artifact, offset: 0, length: 1_000_000 } };
      const next = /offset: (\d+)/.exec(String(last?.truncated ?? ''))?.[1];
      return next ? { name: 'read_artifact', args: { path: artifact, offset: Number(next) } } : giveUp;
    });
    const result = await run(context, model, [output({ inline: 4096, paged: 20_000, dir: testInfo.outputPath('outputs') })], site);

    const saved = events(result.trace, 'harness_output').find((event) => event.tier === 'artifact')!;
    expect(saved.artifact).toBe(artifact);
    expect(artifact).toMatch(new RegExp(`^${testInfo.outputPath('outputs')}/run-[^/]+/output-1\\.json$`));
    expect(saved.bytes).toBeGreaterThan(20_000);
    expect(resultOf(result.trace, saved.callId).output).toMatchObject({ artifact, bytes: saved.bytes, truncated: expect.stringContaining('read_artifact({ path: ') });
    const reads = events(result.trace, 'tool_result').filter((event) => event.name === 'read_artifact');
    expect(reads[0]).toMatchObject({ ok: false, error: '/etc/passwd is not an artifact of this run' });
    const chunks = reads.slice(1).map((event) => String(event.output!.content));
    expect(chunks.every((chunk) => chunk.length <= 4096)).toBe(true);
    expect(chunks.join('')).toBe(readFileSync(artifact, 'utf8'));
    const page = JSON.parse(chunks.join('')) as { text: string; truncated?: string };
    expect(page.text.length).toBeGreaterThan(9 * TEXT_LIMIT);
    expect(page.truncated).toBeUndefined();
  });
});
