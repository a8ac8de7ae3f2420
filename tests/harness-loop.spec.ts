import type { BrowserContext } from '@playwright/test';
import type { ModelSpec } from '../src/models/registry.ts';
import { upvoteFirstPost } from '../src/eval/tasks.ts';
import { evaluateHarness } from '../src/playwright/evaluate.ts';
import { recordedHn } from '../src/sites/hn/site.ts';
import { ModelError, type Model } from '../src/models/types.ts';
import { HARD_MAX_ITERATIONS } from '../src/harness/loop.ts';
import { stampedEventSchema } from '../src/harness/trace.ts';
import { expect, test, turnsDouble } from './support.ts';

const run = (context: BrowserContext, model: ModelSpec | Model, layers: Parameters<typeof evaluateHarness>[0]['layers'] = []) =>
  evaluateHarness({ context, site: recordedHn(), model, layers, task: upvoteFirstPost });

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

  const exploding = { name: 'exploding', afterTools: () => { throw new Error('boom'); } };
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
