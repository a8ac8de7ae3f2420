import { test } from '@playwright/test';
import OpenAI from 'openai';
import { functionAgent } from '../src/agents/function.ts';
import { startGateway } from '../src/agents/gateway.ts';
import type { Model } from '../src/models/types.ts';
import { expect, runAgent } from './support.ts';

/**
 * A function agent's model calls warn of no listener leak: harness-eval adds no listener to the
 * run's signal per call, and the openai SDK, which adds one to any signal it is given and never
 * removes it (openai-node #1811), needs none: at the time limit the gateway answers 503 with
 * `x-should-retry: false`, and the SDK gives up at once.
 */

test('30 model calls, through the openai SDK as docs/agents.md shows and through fetch with the signal: no MaxListenersExceededWarning', async ({ context }, testInfo) => {
  const warnings: string[] = [];
  const onWarning = (warning: Error) => warnings.push(`${warning.name}: ${warning.message}`);
  process.on('warning', onWarning);
  try {
    const agent = functionAgent(async function caller({ model, signal }) {
      const openai = new OpenAI({ baseURL: model.baseURL, apiKey: model.apiKey });
      for (let call = 0; call < 15; call++) await openai.chat.completions.create({ model: model.id, messages: [{ role: 'user', content: 'Hello' }] });
      for (let call = 0; call < 15; call++) {
        const response = await fetch(`${model.baseURL}/chat/completions`, { method: 'POST', signal, headers: { authorization: `Bearer ${model.apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: model.id, messages: [{ role: 'user', content: 'Hello' }] }) });
        await response.text();
      }
      return { success: false, summary: 'called the model 30 times' };
    });
    const { result } = await runAgent(context, testInfo, agent);
    expect(result).toMatchObject({ iterations: 30, summary: 'called the model 30 times' });
    // A warning is emitted on the next tick.
    await new Promise((resolve) => setImmediate(resolve));
  } finally {
    process.off('warning', onWarning);
  }
  expect(warnings).toEqual([]);
});

test('at the time limit the openai SDK, given no signal, stops at the first 503: the gateway says not to retry', async () => {
  const hanging: Model = { id: 'test:hanging', chat: () => new Promise(() => {}) };
  const limit = new AbortController();
  let requests = 0;
  const gateway = await startGateway({ model: hanging, record: (event) => event.type === 'model_request' && limit.abort(new Error('time limit')), signal: limit.signal });
  try {
    // The SDK's default retries (2), its requests counted.
    const openai = new OpenAI({ baseURL: gateway.endpoint.baseURL, apiKey: gateway.endpoint.apiKey, fetch: (url, init) => ((requests += 1), fetch(url, init)) });
    const error = await openai.chat.completions.create({ model: 'x', messages: [{ role: 'user', content: 'Hello' }] }).catch((thrown: unknown) => thrown);
    expect(error).toMatchObject({ status: 503 });
    expect(requests).toBe(1);
  } finally {
    await gateway.close();
  }
});
