import { chromium, type BrowserContext } from '@playwright/test';
import type { ModelSpec } from '../src/models/registry.ts';
import { upvoteFirstPost } from '../src/sites/hn/suite.ts';
import { evaluate } from '../src/eval/evaluate.ts';
import { recordedHn } from '../src/sites/hn/site.ts';
import type { Site } from '../src/core/site.ts';
import { ModelError, type Model } from '../src/models/types.ts';
import { HARD_MAX_ITERATIONS } from '../src/harness/loop.ts';
import { SENT_CHARS, stampedEventSchema } from '../src/harness/trace.ts';
import { transcript } from '../src/harness/transcript.ts';
import { z } from 'zod';
import { defineLayer } from '../src/harness/layer.ts';
import { MAX_OUTPUT_CHARS } from '../src/harness/limits.ts';
import { DEFAULT_SYSTEM_PROMPT, runHarness, type RunHarnessOptions } from '../src/harness/run.ts';
import { chromiumLaunchOptions } from '../src/playwright/chromium.ts';
import { defineTool } from '../src/tools/registry.ts';
import { hungPage } from './hung-page.ts';
import { expect, test, turnsDouble } from './support.ts';

const run = (context: BrowserContext, model: ModelSpec | Model, layers: Parameters<typeof evaluate>[0]['layers'] = [], site: Site = recordedHn()) =>
  evaluate({ context, site, model, layers, task: upvoteFirstPost });

test('malformed tool calls become error observations and trace events, never a crash', async ({ context }) => {
  const { model, requests } = turnsDouble([
    [{ name: 'teleport', arguments: '{}' }],
    [{ name: 'navigate', arguments: '{"url": "https://news.ycombinator.com/news"' }],
    [{ name: 'click', arguments: '{"selector": 42}' }],
    [{ name: 'click', arguments: '{"selector": "#nothing-here"}' }],
    [{ name: 'finish', arguments: '{"success": false, "summary": "gave up"}' }],
  ]);
  const result = await run(context, model);
  expect(result.stopReason).toBe('finished');
  expect(result.claimed).toBe(false);
  const failures = result.trace.filter((event) => event.type === 'tool_result' && !event.ok);
  expect(failures.map((event) => event.type === 'tool_result' && event.kind)).toEqual(['unknown_tool', 'invalid_json', 'invalid_arguments', 'tool_error']);
  const observations = requests[4]!.messages.filter((message) => message.role === 'tool').map((message) => JSON.parse(message.content).error);
  expect(observations[0]).toContain('unknown tool "teleport"');
  expect(observations[1]).toContain('not valid JSON');
  expect(observations[2]).toContain('selector');
  expect(observations[3]).toContain('no element matches #nothing-here');
});

test('several tool calls in one turn run in order; a text-only turn gets a nudge', async ({ context }) => {
  const { model, requests } = turnsDouble([
    'I think I should look at the page.',
    [
      { name: 'navigate', arguments: '{"url": "https://news.ycombinator.com/news"}' },
      { name: 'current_url', arguments: '{}' },
    ],
  ]);
  const result = await run(context, model);
  expect(requests[1]!.messages.at(-1)).toMatchObject({ role: 'user', content: expect.stringContaining('[harness] Use a tool') });
  const calls = result.trace.filter((event) => event.type === 'tool_result').map((event) => event.type === 'tool_result' && event.name);
  expect(calls.slice(0, 2)).toEqual(['navigate', 'current_url']);
  const urlResult = result.trace.find((event) => event.type === 'tool_result' && event.name === 'current_url');
  expect(urlResult).toMatchObject({ ok: true, output: { url: 'https://news.ycombinator.com/news' } });
});

test('a model error ends the run with stopReason model_error; any other failure with error', async ({ context }) => {
  const failing: Model = { id: 'test:failing-double', chat: async () => { throw new ModelError('server', 'upstream 500', 500); } };
  const result = await run(context, failing);
  expect(result).toMatchObject({ stopReason: 'model_error', claimed: false, iterations: 0 });
  expect(result.trace.some((event) => event.type === 'model_error' && event.kind === 'server')).toBe(true);

  const exploding = defineLayer({ name: 'exploding', create: () => ({ afterTools: () => { throw new Error('boom'); } }) })();
  const crashed = await run(context, 'scripted:overclaimer', [exploding]);
  expect(crashed).toMatchObject({ stopReason: 'error', summary: 'boom', claimed: false });
  expect(crashed.trace.at(-1)).toMatchObject({ type: 'run_end', stopReason: 'error' });
});

test('without guardrails a looping model still stops at the hard limit', async ({ context }) => {
  test.setTimeout(120_000);
  const result = await run(context, turnsDouble(Array.from({ length: 200 }, () => [{ name: 'current_url', arguments: '{}' }])).model);
  expect(result).toMatchObject({ stopReason: 'max_iterations', iterations: HARD_MAX_ITERATIONS, claimed: false });
});

test('the trace is typed, JSON-serialisable data with iteration and time on every event', async ({ context }) => {
  const result = await run(context, 'scripted:overclaimer', ['guardrails', 'verify', 'login']);
  const parsed = JSON.parse(JSON.stringify(result.trace)) as unknown[];
  for (const event of parsed) expect(stampedEventSchema.safeParse(event).success).toBe(true);
  const types = new Set(result.trace.map((event) => event.type));
  for (const type of ['run_start', 'model_request', 'model_response', 'tool_call', 'tool_result', 'harness_auto_login', 'harness_verification', 'run_end']) {
    expect(types.has(type as never), type).toBe(true);
  }
  expect(result.trace.at(-1)).toMatchObject({ type: 'run_end', claimed: true, stopReason: 'finished', iterations: result.iterations });
  expect(result.tokens.input).toBeGreaterThan(0);
  expect(result.tokens.output).toBeGreaterThan(0);
  expect(result.trace.every((event, index) => event.seq === index + 1 && event.atMs >= 0)).toBe(true);
});

/** A run driven by runHarness itself, in the test's context on the recorded site: for what evaluate does not pass. */
async function runOn(context: BrowserContext, model: Model, extra: Partial<RunHarnessOptions> = {}, site: Site = recordedHn()) {
  await site.attach(context);
  return runHarness({
    task: upvoteFirstPost.prompt,
    model,
    credentials: site.account,
    site,
    openSession: async () => ({ page: await context.newPage(), close: async () => {} }),
    ...extra,
  });
}

const call = (name: string, args: object = {}) => ({ name, arguments: JSON.stringify(args) });
const FRONT = 'https://news.ycombinator.com/news';

test.describe('a run cut short', () => {
  test('abort during a model call: the call is abandoned, the run returns timeout with the trace so far', async ({ context }) => {
    const controller = new AbortController();
    let turns = 0;
    const model: Model = {
      id: 'test:hangs-on-turn-2',
      async chat() {
        turns += 1;
        if (turns === 1) return { message: { content: null, toolCalls: [{ id: 'a', ...call('navigate', { url: FRONT }) }] }, usage: { input: 10, output: 5 } };
        controller.abort(new Error("the test's timeout"));
        return new Promise(() => {});
      },
    };
    const result = await runOn(context, model, { signal: controller.signal });
    expect(result).toMatchObject({ stopReason: 'timeout', claimed: false, iterations: 1 });
    expect(result.summary).toBe("the run was cut short: the test's timeout");
    expect(result.trace.filter((event) => event.type === 'tool_result').map((event) => event.type === 'tool_result' && event.name)).toEqual(['navigate']);
    expect(result.trace.at(-2)).toMatchObject({ type: 'harness_guardrail_stop', reason: 'timeout' });
    expect(result.trace.at(-1)).toMatchObject({ type: 'run_end', stopReason: 'timeout' });
  });

  test('abort during a tool call: the call is abandoned and no further tool runs', async ({ context }) => {
    const hung = hungPage(recordedHn());
    const controller = new AbortController();
    const { model } = turnsDouble([[call('navigate', { url: hung.url }), call('current_url')]]);
    const aborting = (async () => {
      await expect.poll(() => hung.accepted(), { timeout: 20_000 }).toBeGreaterThan(0);
      controller.abort();
    })();
    const result = await runOn(context, model, { signal: controller.signal }, hung.site);
    await aborting;
    expect(result).toMatchObject({ stopReason: 'timeout', claimed: false });
    expect(result.trace.filter((event) => event.type === 'tool_call').map((event) => event.type === 'tool_call' && event.name)).toEqual(['navigate']);
    expect(result.trace.some((event) => event.type === 'tool_result')).toBe(false);
  });
});

test('abort during a layer hook (a verify that hangs) ends the run too', async ({ context }) => {
  const controller = new AbortController();
  const hangingCheck = defineLayer({
    name: 'hanging-check',
    create: () => ({
      onFinish: () => {
        controller.abort();
        return new Promise(() => {});
      },
    }),
  })();
  const { model } = turnsDouble([[call('finish', { success: true, summary: 'done' })]]);
  const result = await runOn(context, model, { signal: controller.signal, layers: [hangingCheck] });
  expect(result).toMatchObject({ stopReason: 'timeout', claimed: false, summary: 'the run was cut short: This operation was aborted' });
});

test('a browser that dies mid-run ends the run with error, saying the browser closed', async () => {
  const browser = await chromium.launch(chromiumLaunchOptions());
  try {
    const context = await browser.newContext();
    const { model, requests } = turnsDouble([[call('navigate', { url: FRONT })], ...Array<Array<ReturnType<typeof call>>>(3).fill([call('click', { selector: '#up_1' }), call('current_url')])], {
      beforeTurn: (turn) => turn === 2 && browser.close(),
    });
    const result = await runOn(context, model);
    expect(result).toMatchObject({ stopReason: 'error', claimed: false });
    expect(result.summary).toMatch(/^the browser( context| page)? closed mid-run/);
    expect(requests).toHaveLength(2);
  } finally {
    await browser.close();
  }
});

test.describe('every tool call has a time limit', () => {
  test('a navigation to a server that never answers ends at guardrails\' toolTimeoutMs, and at maxWallMs', async ({ context }) => {
    test.setTimeout(90_000);
    const hung = () => hungPage(recordedHn());
    const first = hung();
    const limited = await run(context, turnsDouble([[call('navigate', { url: first.url })]]).model, [['guardrails', { toolTimeoutMs: 1000 }]], first.site);
    const navigated = limited.trace.find((event) => event.type === 'tool_result' && event.name === 'navigate');
    expect(navigated).toMatchObject({ ok: false, kind: 'timeout', error: 'navigate did not finish within its time limit of 1000 ms, and was abandoned' });
    expect(limited).toMatchObject({ stopReason: 'finished', claimed: false });

    const second = hung();
    const walled = await run(context, turnsDouble([[call('navigate', { url: second.url })]]).model, [['guardrails', { maxWallMs: 2000 }]], second.site);
    expect(walled.trace.find((event) => event.type === 'tool_result' && event.name === 'navigate')).toMatchObject({ ok: false, kind: 'timeout' });
    expect(walled.stopReason).toBe('budget');
  });

  test('the harness default applies with no layers (toolTimeoutMs)', async ({ context }) => {
    const hung = hungPage(recordedHn());
    const result = await runOn(context, turnsDouble([[call('navigate', { url: hung.url })]]).model, { toolTimeoutMs: 800 }, hung.site);
    expect(result.trace.find((event) => event.type === 'tool_result' && event.name === 'navigate')).toMatchObject({ ok: false, kind: 'timeout' });
    expect(result.stopReason).toBe('finished');
  });
});

test('a 100 MB tool output is cut before the trace and the conversation, with a note; the claim survives', async ({ context }) => {
  const huge = defineLayer({
    name: 'huge-output',
    create: () => ({
      tools: (_run, tools) => [...tools, defineTool({ name: 'dump', effect: 'read', description: 'A huge answer.', parameters: z.object({}), execute: async () => ({ text: 'x'.repeat(100 * 1024 * 1024) }) })],
    }),
  })();
  const { model, requests } = turnsDouble([[call('dump')], [call('finish', { success: true, summary: 'dumped' })]]);
  const result = await run(context, model, [huge]);
  expect(result).toMatchObject({ stopReason: 'finished', claimed: true, summary: 'dumped' });
  const dumped = result.trace.find((event) => event.type === 'tool_result' && event.name === 'dump');
  const text = dumped?.type === 'tool_result' ? String(dumped.output?.text) : '';
  expect(text.length).toBeLessThanOrEqual(MAX_OUTPUT_CHARS + 100);
  expect(text).toMatch(/cut by the harness: 104857600 characters in all\]$/);
  expect(result.trace.some((event) => event.type === 'harness_note' && /dump .*: text was 104857600 characters/.test(event.message))).toBe(true);
  expect(String(requests[1]!.messages.at(-1)!.content).length).toBeLessThan(MAX_OUTPUT_CHARS + 200);
});

test('token counts a model cannot give are unknown (null), with a note why, never 0 or NaN', async ({ context }) => {
  let turns = 0;
  const model: Model = {
    id: 'test:bad-usage',
    async chat() {
      turns += 1;
      const usage = turns === 1 ? { input: 10, output: 5 } : { input: null, output: 3, problem: 'prompt_tokens is "NaN"' };
      const toolCalls = turns === 1 ? [{ id: 'u1', ...call('current_url') }] : [{ id: 'u2', ...call('finish', { success: false, summary: 'no' }) }];
      return { message: { content: null, toolCalls }, usage };
    },
  };
  const result = await run(context, model);
  expect(result.tokens).toEqual({ input: null, output: 8 });
  expect(result.trace.some((event) => event.type === 'harness_note' && event.message.includes('prompt_tokens is "NaN"'))).toBe(true);
  expect(JSON.parse(JSON.stringify(result.tokens))).toEqual({ input: null, output: 8 });
});

test('with a count unknown, guardrails still holds the token budget on the counts it has', async ({ context }) => {
  const model: Model = {
    id: 'test:no-input-counts',
    chat: async () => ({ message: { content: null, toolCalls: [{ id: 'n', ...call('current_url') }] }, usage: { input: null, output: 1000, problem: 'prompt_tokens is missing' } }),
  };
  const result = await run(context, model, [['guardrails', { maxTokens: 1500 }]]);
  expect(result).toMatchObject({ stopReason: 'budget', iterations: 2, tokens: { input: null, output: 2000 } });
});

test('each model_request records what the model was given: the messages, redacted before they are cut, and the tools offered', async ({ context }) => {
  const site = recordedHn();
  const { password } = site.account;
  // The model writes the password so that a cut at SENT_CHARS would fall inside it.
  const leading = 'x'.repeat(SENT_CHARS - 5);
  const { model, requests } = turnsDouble([`${leading}${password}`, [{ name: 'finish', arguments: '{"success": false, "summary": "done looking"}' }]]);
  const result = await evaluate({ context, site, model, layers: [], task: upvoteFirstPost });
  const sent = result.trace.filter((event) => event.type === 'model_request');
  expect(sent).toHaveLength(2);
  expect(sent[0]).toMatchObject({
    messages: 2,
    sent: [
      { role: 'system', text: DEFAULT_SYSTEM_PROMPT.length > SENT_CHARS ? `${DEFAULT_SYSTEM_PROMPT.slice(0, SENT_CHARS)}…` : DEFAULT_SYSTEM_PROMPT, chars: DEFAULT_SYSTEM_PROMPT.length },
      { role: 'user', text: upvoteFirstPost.prompt },
    ],
    offered: ['navigate', 'current_url', 'get_text', 'fill', 'click', 'has_class', 'get_stories', 'finish'],
  });
  const second = sent[1]!.type === 'model_request' ? sent[1]!.sent! : [];
  expect(second.map((message) => message.role)).toEqual(requests[1]!.messages.map((message) => message.role));
  expect(second[2]).toEqual({ role: 'assistant', text: `${leading}[secr…`, chars: SENT_CHARS - 5 + '[secret]'.length });
  expect(JSON.stringify(result.trace)).not.toContain(`${leading}${password.slice(0, 4)}`);

  const lines = transcript(result.trace).split('\n');
  expect(lines.find((line) => line.includes('model given 2 messages'))).toMatch(/model given 2 messages \(0 as before\); tools: navigate, current_url, get_text, fill, click, has_class, get_stories, finish$/);
  const given = lines.findIndex((line) => line.includes('model given 4 messages (2 as before)'));
  expect(lines.slice(given + 1, given + 3)).toEqual([`    assistant: ${leading}[secr…`, '    user: [harness] Use a tool to act, or call finish(success, summary) when the task is done or cannot be done.']);
});
