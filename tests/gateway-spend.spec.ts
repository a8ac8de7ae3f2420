import { expect, test } from '@playwright/test';
import OpenAI from 'openai';
import type { Gateway } from '../src/agents/gateway.ts';
import type { Usage } from '../src/core/model.ts';
import { RunSpend, SpendLimitReached, spendCapped } from '../src/models/spend.ts';
import { openRunLedger, runLedger } from '../src/playwright/cost.ts';
import { tokensCost } from '../src/report/cost.ts';
import { billingProvider, gatewayStarter, task, type WireUsage } from './gateway-doubles.ts';

/**
 * Spend caps hold under concurrency: before a call goes out, its worst case (every byte of its
 * prompt a token, and its output allowance) is held against `maxRunCost`, the run-wide `maxCost`
 * and the gateway's `maxTokens`; a call that would pass one is refused, never forwarded. What the
 * provider bills (its usage × the price) stays within the cap plus one call.
 */

const startGateway = gatewayStarter();
const closers: Array<() => unknown> = [];
test.afterEach(() => {
  for (const close of closers.splice(0)) close();
});

/** gpt-4o-mini's price, USD per million tokens. */
const PRICE = { input: 0.15, output: 0.6 };
const costOf = (tokens: Usage) => tokensCost(tokens, PRICE);
const usd = (usage: WireUsage) => costOf({ input: usage.prompt_tokens, output: usage.completion_tokens });

/** 3.9 MB of English: about a million tokens, as in the attack that billed $2.19 against a $0.01 cap. */
const LARGE = 'The quick brown fox jumps over the lazy dog 12345. '.repeat(76_500);
/** Request bodies of every call at once are let in: the caps under test are the spend's, not the bytes being read. */
const ROOMY = { maxBytesInFlight: 128 * 1024 * 1024 };

async function provider(options?: Parameters<typeof billingProvider>[0]) {
  const started = await billingProvider(options);
  closers.push(started.close);
  return started;
}

/** `count` chat completions of `content` sent at once through the gateway (no retries), streamed or not: each one's status, as it comes. */
function calls({ endpoint }: Gateway, count: number, content: string, stream = false): Array<Promise<number | string>> {
  const openai = new OpenAI({ baseURL: endpoint.baseURL, apiKey: endpoint.apiKey, maxRetries: 0 });
  return Array.from({ length: count }, async (_, call) => {
    const messages = [{ role: 'user' as const, content: `${call}: ${content}` }];
    try {
      if (stream) for await (const _ of await openai.chat.completions.create({ model: 'x', messages, stream }));
      else await openai.chat.completions.create({ model: 'x', messages });
      return 200;
    } catch (error) {
      return (error as { status?: number }).status ?? String(error);
    }
  });
}

const concurrently = (...args: Parameters<typeof calls>) => Promise.all(calls(...args));

test.describe('spend caps hold under concurrency', () => {
  test('15 calls of 3.9 MB at once under maxRunCost $0.01, streamed or not: billed within the cap plus one call, the rest refused with a 429 naming it', async () => {
    const upstream = await provider();
    const spend = new RunSpend({ maxUsd: 0.01, costOf });
    const { gateway, limits } = await startGateway(spendCapped(upstream.model, spend), ROOMY);
    const statuses = (await Promise.all([concurrently(gateway, 8, LARGE), concurrently(gateway, 7, LARGE, true)])).flat();
    const oneCall = usd(upstream.bills()[0] ?? { prompt_tokens: 1_000_000, completion_tokens: 100 });
    expect(usd(upstream.billed())).toBeLessThanOrEqual(0.01 + oneCall);
    expect(statuses.filter((status) => status === 429).length).toBeGreaterThanOrEqual(14);
    expect(limits).toEqual(['run cost ($0.01)']);
    expect(gateway.attempts()).toEqual([{ kind: 'limit', detail: 'run cost ($0.01)' }]);
  });

  test('calls in flight hold their worst case: of 15 at once, only as many as the cap holds are forwarded, and even billed at their worst they stay within it', async () => {
    const upstream = await provider({ held: true });
    const spend = new RunSpend({ maxUsd: 0.05, costOf });
    const { gateway } = await startGateway(spendCapped(upstream.model, spend), ROOMY);
    const content = LARGE.slice(0, 40_000);
    let answered = 0;
    const sent = calls(gateway, 15, content).map((call) => call.finally(() => (answered += 1)));
    // Each holds its 40 KB as 40,000 tokens and the default allowance of 4,096 out, about $0.0085: five of them fit in $0.05, and the other ten are refused at once.
    await expect.poll(() => answered).toBe(10);
    expect(upstream.received()).toBe(5);
    // The provider bills each at the most its hold allowed: a token a byte, the whole allowance.
    const worst = { prompt_tokens: Buffer.byteLength(`10: ${content}`), completion_tokens: 4_096 };
    for (let call = 0; call < 5; call++) upstream.answer(call, worst);
    const statuses = await Promise.all(sent);
    expect(statuses.filter((status) => status === 200)).toHaveLength(5);
    expect(statuses.filter((status) => status === 429)).toHaveLength(10);
    expect(usd(upstream.billed())).toBeLessThanOrEqual(0.05);
    // The run is over once a call was refused: a smaller one is refused too.
    expect(await concurrently(gateway, 1, 'hi')).toEqual([429]);
  });

  test('maxTokens: 15 calls of 3.9 MB at once under the default 5,000,000 are billed within it plus one call', async () => {
    const upstream = await provider();
    const { gateway, limits } = await startGateway(upstream.model, ROOMY);
    const statuses = await concurrently(gateway, 15, LARGE);
    const billed = upstream.billed();
    const oneCall = Math.max(...upstream.bills().map((bill) => bill.prompt_tokens + bill.completion_tokens));
    expect(billed.prompt_tokens + billed.completion_tokens).toBeLessThanOrEqual(5_000_000 + oneCall);
    expect(statuses.filter((status) => status === 200).length).toBeGreaterThanOrEqual(1);
    expect(limits).toEqual(['gateway tokens (5000000)']);
  });

  test('maxCost holds across runs: two runs\' gateways sharing the run-wide ledger, 4 calls of 3.9 MB each at once, are billed within it plus one call', async () => {
    const env: NodeJS.ProcessEnv = {};
    closers.push(openRunLedger(env));
    const upstream = await provider();
    const runs = await Promise.all(
      [0, 1].map(async () => {
        // Each run's own view of the ledger, as each worker has: only the file is shared.
        const spend = new RunSpend({ costOf, budget: runLedger({ ...env }).budget(0.7) });
        return startGateway(spendCapped(upstream.model, spend), { ...ROOMY, maxTokens: 1e9 });
      }),
    );
    await Promise.all(runs.map(({ gateway }) => concurrently(gateway, 4, LARGE)));
    const oneCall = Math.max(0, ...upstream.bills().map(usd));
    expect(usd(upstream.billed())).toBeLessThanOrEqual(0.7 + oneCall);
    expect(runs.flatMap(({ limits }) => limits)).toContain('budget ($0.7)');
    // Settled to what was billed; the largest hold is such a call's worst case.
    const spent = runLedger(env).spent();
    expect(spent.usd).toBeCloseTo(usd(upstream.billed()), 9);
    expect(spent.largestHold).toBeGreaterThan(costOf({ input: Buffer.byteLength(LARGE), output: 4_096 }));
  });

  test('the built-in harness\'s path: a capped model called 15 times at once is billed within the cap plus one call, the rest refused for it', async () => {
    const upstream = await provider();
    const spend = new RunSpend({ maxUsd: 1, costOf });
    const model = spendCapped(upstream.model, spend);
    const outcomes = await Promise.allSettled(Array.from({ length: 15 }, (_, call) => model.chat({ messages: [{ role: 'user', content: `${call}: ${LARGE}` }], tools: [] })));
    const oneCall = Math.max(0, ...upstream.bills().map(usd));
    expect(usd(upstream.billed())).toBeLessThanOrEqual(1 + oneCall);
    const refusals = outcomes.filter((outcome) => outcome.status === 'rejected').map((outcome) => (outcome as PromiseRejectedResult).reason as Error);
    expect(refusals.length).toBeGreaterThanOrEqual(14);
    for (const refusal of refusals) expect(refusal).toBeInstanceOf(SpendLimitReached);
    expect(refusals[0]!.message).toBe("the run's cost limit is reached: run cost ($1) (maxRunCost)");
    expect(spend.refused()).toBe('run cost ($1)');
  });
});

test.describe('what a call holds', () => {
  /** Each API's request for `task`, with an output allowance of `tokens` in that API's own field. */
  const requests: Array<{ api: string; path: (endpoint: { baseURL: string; anthropicBaseURL: string; geminiBaseURL: string; ollamaHost: string }) => string; body: (tokens: number) => object }> = [
    { api: 'chat completions, max_tokens', path: (at) => `${at.baseURL}/chat/completions`, body: (tokens) => ({ messages: [{ role: 'user', content: task }], max_tokens: tokens }) },
    { api: 'chat completions, max_completion_tokens', path: (at) => `${at.baseURL}/chat/completions`, body: (tokens) => ({ messages: [{ role: 'user', content: task }], max_completion_tokens: tokens }) },
    { api: 'responses', path: (at) => `${at.baseURL}/responses`, body: (tokens) => ({ input: task, max_output_tokens: tokens }) },
    { api: 'messages', path: (at) => `${at.anthropicBaseURL}/v1/messages`, body: (tokens) => ({ messages: [{ role: 'user', content: task }], max_tokens: tokens }) },
    { api: 'generateContent', path: (at) => `${at.geminiBaseURL}/v1beta/models/x:generateContent`, body: (tokens) => ({ contents: [{ role: 'user', parts: [{ text: task }] }], generationConfig: { maxOutputTokens: tokens } }) },
    { api: 'generateContent, snake case', path: (at) => `${at.geminiBaseURL}/v1beta/models/x:generateContent`, body: (tokens) => ({ contents: [{ role: 'user', parts: [{ text: task }] }], generation_config: { max_output_tokens: tokens } }) },
    { api: 'ollama chat', path: (at) => `${at.ollamaHost}/api/chat`, body: (tokens) => ({ messages: [{ role: 'user', content: task }], options: { num_predict: tokens }, stream: false }) },
  ];

  for (const { api, path, body } of requests) {
    test(`${api}: the request's output allowance is held, never less than the default of 4,096`, async () => {
      const upstream = await provider();
      // $0.004 holds the default allowance ($0.0025 out) and the short prompt, not 8,000 tokens out ($0.0048).
      const statusOf = async (tokens: number) => {
        const { gateway } = await startGateway(spendCapped(upstream.model, new RunSpend({ maxUsd: 0.004, costOf })));
        const key = gateway.endpoint.apiKey;
        const response = await fetch(path(gateway.endpoint), { method: 'POST', headers: { authorization: `Bearer ${key}`, 'x-api-key': key, 'x-goog-api-key': key, 'content-type': 'application/json' }, body: JSON.stringify(body(tokens)) });
        await response.arrayBuffer();
        return response.status;
      };
      expect(await statusOf(8_000)).toBe(429);
      // A smaller allowance holds the default: the gateway does not pass it on, so it bounds nothing.
      expect(await statusOf(1)).toBe(200);
      expect(upstream.received()).toBe(1);
    });
  }
});
