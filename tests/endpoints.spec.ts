import { spawn } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import OpenAI from 'openai';
import type { FunctionTool, ResponseFunctionToolCall } from 'openai/resources/responses/responses';
import { commandAgent } from '../src/agents/command.ts';
import { functionAgent } from '../src/agents/function.ts';
import { startGateway, type Gateway } from '../src/agents/gateway.ts';
import type { Agent } from '../src/core/agent.ts';
import type { Model } from '../src/core/model.ts';
import type { TraceEventBody } from '../src/core/trace.ts';
import { evaluate } from '../src/eval/evaluate.ts';
import type { RunRecord } from '../src/core/run.ts';
import { guardrails } from '../src/layers/guardrails.ts';
import { createModel } from '../src/models/registry.ts';
import { acquireSlot, SLOTS_ENV, startSlotCoordinator, withSlot } from '../src/models/slots.ts';
import { WaitClock } from '../src/models/waits.ts';
import { modelCondition } from '../src/playwright/condition.ts';
import { holdTestClock } from '../src/playwright/fixtures.ts';
import { recorded } from '../src/sites/hn/site.ts';
import { upvoteFirstPost } from '../src/sites/hn/suite.ts';
import { modelServer, readBody, type ModelServer } from './model-server.ts';
import { expect, test } from './support.ts';

/**
 * A model endpoint under load (issue 24): its limit on calls at once holds across a run's workers,
 * a rate limit is waited out (the wait recorded, and not the agent's time), and the gateway speaks
 * the Responses API and refuses bodies over its limit.
 */

/** A scripted double behind the local server, as a real openai: model reaches it. */
const doubleAt = (server: ModelServer, double = 'diligent', limits: object = {}) =>
  createModel({ id: `openai:${double}`, ...limits }, { OPENAI_API_KEY: 'sk-local-endpoint', OPENAI_BASE_URL: server.url });

/** What a run comes to, in the words of a cell. */
const outcome = (run: RunRecord) => ({ claimed: run.claimed, actual: run.actual, falseSuccess: run.falseSuccess, incomplete: run.incomplete, iterations: run.iterations, stopReason: run.stopReason, tokens: run.tokens });

const pythonAgent = (api: 'chat' | 'responses'): Agent =>
  commandAgent(['python3', 'examples/python-agent/agent.py'], { name: 'python-agent', account: true, env: { OPENAI_API: api } });

test.describe('a rate limit is waited out', () => {
  for (const [name, agent] of [
    ['the built-in harness', undefined],
    ['the Python agent through the gateway', pythonAgent('chat')],
  ] as const) {
    test(`${name}: 429 with Retry-After on every other request gives the same outcome as none, and the wait is recorded`, async ({ context, browser }) => {
      const once = async (throttle?: string) => {
        const server = await modelServer({ throttle });
        const fresh = throttle ? await browser.newContext() : context;
        try {
          const run = await evaluate({ context: fresh, site: recorded().create(), agent, model: doubleAt(server), task: upvoteFirstPost });
          return { run, server };
        } finally {
          await server.close();
          if (throttle) await fresh.close();
        }
      };
      const plain = await once();
      const throttled = await once('0.2');
      expect(plain.server.throttled).toBe(0);
      expect(throttled.server.throttled).toBe(throttled.run.iterations);
      expect(outcome(throttled.run)).toEqual(outcome(plain.run));
      expect(plain.run.stopReason).toBe('finished');
      // Each call waited its Retry-After (0.2 s) once: recorded, and part of the wall time.
      expect(throttled.run.modelWaitMs).toBeGreaterThanOrEqual(200 * throttled.run.iterations - 20);
      expect(throttled.run.wallMs).toBeGreaterThan(throttled.run.modelWaitMs);
      expect(plain.run.modelWaitMs).toBeLessThan(100);
    });
  }

  test('still refused after every retry: the run stops rate_limited, incomplete, never a failure of the agent', async ({ context }) => {
    const server = await modelServer({ refuseAll: true });
    try {
      const run = await evaluate({ context, site: recorded().create(), model: doubleAt(server, 'diligent', { rateLimitRetries: 2, maxBackoffMs: 50 }), task: upvoteFirstPost });
      expect(outcome(run)).toMatchObject({ claimed: false, incomplete: true, iterations: 0, stopReason: 'rate_limited' });
      expect(server.requests).toBe(3);
      expect(run.modelWaitMs).toBeGreaterThan(0);
      expect(run.trace.find((event) => event.type === 'model_error')).toMatchObject({ kind: 'rate_limited' });
    } finally {
      await server.close();
    }
  });

  test('the gateway waits too: an agent whose every call is refused gets the 429 only at the end, and the run says rate_limited', async ({ context }) => {
    const server = await modelServer({ refuseAll: true });
    let seen: unknown;
    const agent = functionAgent(
      async ({ model }) => {
        const client = new OpenAI({ baseURL: model.baseURL, apiKey: model.apiKey, maxRetries: 0 });
        seen = await client.chat.completions.create({ model: 'x', messages: [{ role: 'user', content: 'Hi' }] }).catch((error: unknown) => error);
        return { success: false, summary: 'the model did not answer' };
      },
      { name: 'one-call' },
    );
    try {
      const run = await evaluate({ context, site: recorded().create(), agent, model: doubleAt(server, 'diligent', { rateLimitRetries: 3, maxBackoffMs: 50 }), task: upvoteFirstPost });
      expect(server.requests).toBe(4);
      expect(seen).toMatchObject({ status: 429, error: { code: 'rate_limited' } });
      expect(outcome(run)).toMatchObject({ claimed: false, incomplete: true, stopReason: 'rate_limited' });
      expect(run.summary).toContain('rate limited');
    } finally {
      await server.close();
    }
  });

  test("model waits are not the agent's time: guardrails' maxWallMs leaves them out", async ({ context }) => {
    const server = await modelServer();
    const double = doubleAt(server);
    // Every call first waits 1.5 s on its endpoint, as a slot or a Retry-After would make it.
    const slow: Model = {
      id: double.id,
      async chat(request) {
        const end = request.waits?.begin();
        await sleep(1_500);
        end?.();
        return double.chat(request);
      },
    };
    try {
      const run = await evaluate({ context, site: recorded().create(), model: slow, layers: [guardrails({ maxWallMs: 5_000 })], task: upvoteFirstPost });
      expect(run.iterations).toBeGreaterThanOrEqual(4);
      // The waits alone are past the budget: counted against it, the run would have stopped for `budget`.
      expect(run.modelWaitMs).toBeGreaterThan(5_000);
      expect(run.stopReason).toBe('finished');
    } finally {
      await server.close();
    }
  });
});

test.describe('one limit on calls at once, across the run', () => {
  test("a worker that dies holding a slot gives it back: its connection closes", async () => {
    const coordinator = startSlotCoordinator();
    const env = { [SLOTS_ENV]: coordinator.path };
    const holder = spawn(process.execPath, ['-e', "const s = require('node:net').connect(process.argv[1]); s.write(JSON.stringify({ key: 'k', limit: 1 }) + '\\n'); s.pipe(process.stdout);", coordinator.path]);
    try {
      let said = '';
      holder.stdout.on('data', (chunk) => (said += chunk));
      await expect.poll(() => said).toBe('granted\n');
      const next = acquireSlot('k', 1, undefined, env);
      expect(await Promise.race([next.then(() => 'granted'), sleep(300).then(() => 'waiting')])).toBe('waiting');
      // Another endpoint's slots are its own.
      (await acquireSlot('other', 1, undefined, env))();
      // A caller that gives up while queued leaves the queue.
      const givenUp = new AbortController();
      const abandoned = acquireSlot('k', 1, givenUp.signal, env);
      givenUp.abort(new Error('the run is over'));
      await expect(abandoned).rejects.toThrow('the run is over');
      holder.kill('SIGKILL');
      const release = await next;
      release();
      (await acquireSlot('k', 1, undefined, env))();
    } finally {
      holder.kill('SIGKILL');
      await coordinator.close();
    }
  });

  test('without a coordinator the limit holds within the process', async () => {
    const server = await modelServer({ delayMs: 100 }, async () =>
      Response.json({ id: 'c', object: 'chat.completion', created: 0, model: 'gpt-test', choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: 'ok' } }] }),
    );
    try {
      const model = createModel({ id: 'openai:gpt-test', concurrency: 2 }, { OPENAI_API_KEY: 'sk-local', OPENAI_BASE_URL: server.url });
      expect(process.env[SLOTS_ENV]).toBeUndefined();
      await Promise.all(Array.from({ length: 6 }, () => model.chat({ messages: [{ role: 'user', content: 'Hi' }], tools: [] })));
      expect(server.requests).toBe(6);
      expect(server.maxInFlight).toBe(2);
    } finally {
      await server.close();
    }
  });
});

test('queued behind its own calls, a run waits on itself: only a wait behind another run\'s call is the run\'s time', async () => {
  const hold = (ms: number) => () => new Promise<void>((resolve) => setTimeout(resolve, ms));
  // An agent flooding the gateway: three calls at once, one slot. Before, the queue held its clock for ~400 ms.
  const flooding = new WaitClock();
  await Promise.all(Array.from({ length: 3 }, () => withSlot('flood', 1, { waits: flooding }, hold(200))));
  expect(flooding.waitedMs()).toBeLessThan(50);
  // Behind another run's call, the queue is the run's time.
  const other = new WaitClock();
  const mine = new WaitClock();
  const first = withSlot('shared', 1, { waits: other }, hold(300));
  await withSlot('shared', 1, { waits: mine }, hold(10));
  await first;
  expect(mine.waitedMs()).toBeGreaterThanOrEqual(250);
});

test.describe('the gateway speaks the Responses API', () => {
  const task = 'Upvote the first story on the front page.';
  const tools: FunctionTool[] = [
    { type: 'function', name: 'navigate', description: 'Opens a URL.', parameters: { type: 'object', properties: { url: { type: 'string' } }, required: ['url'] }, strict: false },
    { type: 'function', name: 'list_stories', description: 'The stories on the current page.', parameters: { type: 'object', properties: {} }, strict: false },
  ];
  let gateway: Gateway | undefined;
  test.afterEach(async () => {
    await gateway?.close();
    gateway = undefined;
  });

  async function started(options: { maxBodyBytes?: number } = {}) {
    const events: TraceEventBody[] = [];
    gateway = await startGateway({ model: createModel('scripted:diligent'), record: (event) => events.push(event), signal: new AbortController().signal, ...options });
    return { gateway, events, openai: new OpenAI({ baseURL: gateway.endpoint.baseURL, apiKey: gateway.endpoint.apiKey, maxRetries: 0 }) };
  }

  test("the openai SDK's responses.create, streamed and not, with function tools and their outputs; tokens counted", async () => {
    const { gateway, events, openai } = await started();
    const first = await openai.responses.create({ model: 'x', instructions: 'You browse Hacker News.', input: task, tools });
    const call = first.output.find((item): item is ResponseFunctionToolCall => item.type === 'function_call');
    expect(call).toMatchObject({ name: 'navigate', status: 'completed' });
    expect(JSON.parse(call!.arguments)).toEqual({ url: 'https://news.ycombinator.com/news' });
    expect(first).toMatchObject({ object: 'response', status: 'completed', model: 'scripted:diligent' });
    expect(first.usage!.input_tokens).toBeGreaterThan(0);
    expect(first.usage!.total_tokens).toBe(first.usage!.input_tokens + first.usage!.output_tokens);
    expect(events[0]).toMatchObject({ type: 'model_request', messages: 2, offered: ['navigate', 'list_stories'], sent: [{ role: 'system', text: 'You browse Hacker News.' }, { role: 'user', text: task }] });

    // The next turn hands back the call and its output: the double moves on, and the stream carries OpenAI's events.
    const input: OpenAI.Responses.ResponseInputItem[] = [{ role: 'user', content: task }, ...(first.output as OpenAI.Responses.ResponseInputItem[]), { type: 'function_call_output', call_id: call!.call_id, output: '{"url":"https://news.ycombinator.com/news"}' }];
    const stream = await openai.responses.create({ model: 'x', input, tools, stream: true });
    const types: string[] = [];
    let completed: OpenAI.Responses.Response | undefined;
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === 'response.completed') completed = event.response;
    }
    expect(types).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(completed!.output[0]).toMatchObject({ type: 'function_call', name: 'list_stories' });
    expect(events[2]).toMatchObject({ type: 'model_request', messages: 3, sent: [{ role: 'user' }, { role: 'assistant', text: expect.stringMatching(/^navigate\(/) }, { role: 'tool', text: expect.stringContaining(call!.call_id) }] });

    // The SDK's stream helper assembles the call from its deltas.
    const helper = await openai.responses.stream({ model: 'x', input: task, tools }).finalResponse();
    expect(helper.output[0]).toMatchObject({ type: 'function_call', name: 'navigate', arguments: call!.arguments });
    const usages = [first.usage!, completed!.usage!, helper.usage!];
    expect(gateway.tokens()).toEqual({ input: usages.reduce((sum, usage) => sum + usage.input_tokens, 0), output: usages.reduce((sum, usage) => sum + usage.output_tokens, 0) });
  });

  test('a Python agent calling $OPENAI_BASE_URL/responses is measured like any other, its tokens counted', async ({ context }) => {
    const run = await evaluate({ context, site: recorded().create(), agent: pythonAgent('responses'), model: 'scripted:diligent', task: upvoteFirstPost });
    expect(outcome(run)).toMatchObject({ claimed: true, actual: true, falseSuccess: false, iterations: 5, stopReason: 'finished' });
    expect(run.trace.filter((event) => event.type === 'model_request')).toHaveLength(5);
    expect(run.tokens.input).toBeGreaterThan(0);
    expect(run.tokens.output).toBeGreaterThan(0);
  });

  test('a body over the limit is a 413 in OpenAI\'s shape, refused before it is all sent; nothing is forwarded', async () => {
    const { gateway, events, openai } = await started({ maxBodyBytes: 1024 });
    const refused = await openai.responses.create({ model: 'x', input: 'x'.repeat(4096) }).catch((error: unknown) => error);
    expect(refused).toMatchObject({ status: 413, error: { code: 'request_too_large', message: expect.stringContaining('limit of 1024 bytes') } });

    // Sent in chunks with no length: the answer comes while the client is still sending.
    const url = new URL(`${gateway.endpoint.baseURL}/chat/completions`);
    const early = await new Promise<{ status?: number; body: string }>((resolve, reject) => {
      const request = httpRequest(url, { method: 'POST', headers: { authorization: `Bearer ${gateway.endpoint.apiKey}`, 'content-type': 'application/json' } }, async (response) => {
        resolve({ status: response.statusCode, body: await readBody(response) });
        request.destroy();
      });
      request.on('error', reject);
      request.write(`{"messages":[{"role":"user","content":"${'x'.repeat(2048)}`);
    });
    expect(early.status).toBe(413);
    expect(JSON.parse(early.body)).toMatchObject({ error: { code: 'request_too_large' } });
    expect(events).toEqual([]);
    // The gateway goes on serving.
    expect((await openai.responses.create({ model: 'x', input: 'Say hello.' })).status).toBe('completed');
  });

  test('what the gateway cannot serve is a 400 naming the field, traced', async () => {
    const { events, openai } = await started();
    const previous = await openai.responses.create({ model: 'x', input: 'Hi', previous_response_id: 'resp_1' }).catch((error: unknown) => error);
    expect(previous).toMatchObject({ status: 400, message: expect.stringContaining('previous_response_id: is not served') });
    expect(events).toEqual([{ type: 'model_request_refused', status: 400, message: expect.stringContaining('previous_response_id: is not served') }]);
  });
});

test('bad limits are one-line errors naming the field', () => {
  const env = { OPENAI_API_KEY: 'sk-local' };
  for (const [spec, field] of [
    [{ id: 'openai:gpt-test', concurrency: 0 }, 'concurrency'],
    [{ id: 'openai:gpt-test', concurrency: -2 }, 'concurrency'],
    [{ id: 'ollama:llama3.1', concurrency: 1.5 }, 'concurrency'],
    [{ id: 'openai:gpt-test', rateLimitRetries: -1 }, 'rateLimitRetries'],
    [{ id: 'openai:gpt-test', maxBackoffMs: 0 }, 'maxBackoffMs'],
  ] as const) {
    expect(() => createModel(spec, env)).toThrow(new RegExp(`^model: ${field}: [^\\n]+$`));
  }
  expect(() => functionAgent(async () => ({ success: true, summary: '' }), { gateway: { maxBodyBytes: 0 } })).toThrow(/^functionAgent\(\) options: gateway\.maxBodyBytes: [^\n]+$/);
  expect(() => commandAgent(['python3'], { gateway: { maxBodyBytes: -1 } })).toThrow(/^commandAgent\(\) options: gateway\.maxBodyBytes: [^\n]+$/);
});

test.describe('waits, retries and what a run is', () => {
  const completion = (content: string) =>
    Response.json({ id: 'c', object: 'chat.completion', created: 0, model: 'gpt-test', choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content } }] });
  const busy = (status: number, retryAfter?: string) => new Response('{"error":{"message":"busy"}}', { status, headers: retryAfter ? { 'retry-after': retryAfter } : {} });

  test('a 503 is retried as a busy endpoint (rateLimitRetries), and a Retry-After past maxBackoffMs is cut to it; every wait is timed', async () => {
    const answers = [busy(503, '0'), busy(429, '120'), completion('ok')];
    let calls = 0;
    const clock = new WaitClock();
    const model = createModel({ id: 'openai:gpt-test', maxRetries: 0, rateLimitRetries: 2, maxBackoffMs: 300, concurrency: 1 }, { OPENAI_API_KEY: 'sk-local', OPENAI_BASE_URL: 'http://127.0.0.1:9/v1' });
    // The model's fetch is the global one: answered here, in order.
    const saved = globalThis.fetch;
    globalThis.fetch = async () => answers[calls++]!;
    try {
      const started = performance.now();
      const answer = await model.chat({ messages: [{ role: 'user', content: 'Hi' }], tools: [], waits: clock });
      expect(answer.message.content).toBe('ok');
      expect(calls).toBe(3);
      // Told 120 s, waited the 300 ms maximum (and a 10% jitter at most).
      expect(performance.now() - started).toBeLessThan(5_000);
      expect(clock.waitedMs()).toBeGreaterThanOrEqual(290);
      expect(clock.waitedMs()).toBeLessThanOrEqual(Math.ceil(performance.now() - started));
    } finally {
      globalThis.fetch = saved;
    }
  });

  test('overlapping waits count once', async () => {
    const clock = new WaitClock();
    const one = clock.begin();
    const two = clock.begin();
    await sleep(200);
    one();
    await sleep(100);
    two();
    two();
    const waited = clock.waitedMs();
    expect(waited).toBeGreaterThanOrEqual(295);
    expect(waited).toBeLessThan(1_000);
  });

  test("the test's clock stands still while the run waits: the wait is added to its timeout", async () => {
    test.setTimeout(2_000);
    const hold = holdTestClock(test.info());
    hold(true);
    await sleep(2_500);
    hold(false);
    expect(test.info().timeout).toBeGreaterThanOrEqual(4_500);
  });

  test("trials waiting together hold the test's clock from the first wait to the last one's end", async () => {
    test.setTimeout(2_000);
    const hold = holdTestClock(test.info());
    hold(true);
    hold(true);
    hold(false);
    // One trial still waits: the clock stands still.
    expect(test.info().timeout).toBe(0);
    await sleep(2_500);
    hold(false);
    expect(test.info().timeout).toBeGreaterThanOrEqual(4_500);
    // A release with nothing held changes nothing.
    hold(false);
    expect(test.info().timeout).toBeGreaterThanOrEqual(4_500);
  });

  test("a cell is the same whatever the endpoint's limits", () => {
    expect(modelCondition({ id: 'openai:gpt-test', temperature: 0.2, concurrency: 2, rateLimitRetries: 3, maxBackoffMs: 1_000 })).toEqual({ id: 'openai:gpt-test', temperature: 0.2 });
  });

  test("a command's own timeoutMs leaves out its model waits", async ({ context }) => {
    // Each call waits 5 s on its endpoint, past the command's 3 s limit, then answers.
    const waiting: Model = {
      id: 'test:waiting',
      async chat(request) {
        const end = request.waits?.begin();
        await sleep(5_000);
        end?.();
        return { message: { content: 'ok', toolCalls: [] }, usage: { input: 1, output: 1 } };
      },
    };
    const script = `
      const response = await fetch(process.env.OPENAI_BASE_URL + '/chat/completions', { method: 'POST', headers: { authorization: 'Bearer ' + process.env.OPENAI_API_KEY, 'content-type': 'application/json' }, body: JSON.stringify({ messages: [{ role: 'user', content: 'Hi' }] }) });
      const answer = await response.json();
      require('node:fs').writeFileSync(process.env.HARNESS_CLAIM_FILE, JSON.stringify({ success: false, summary: answer.choices[0].message.content }));`;
    const agent = commandAgent(['node', '-e', `(async () => { ${script} })()`], { name: 'waits', timeoutMs: 3_000, sandbox: 'none' });
    const run = await evaluate({ context, site: recorded().create(), agent, model: waiting, task: upvoteFirstPost });
    expect(run).toMatchObject({ stopReason: 'finished', summary: 'ok', iterations: 1 });
    expect(run.modelWaitMs).toBeGreaterThanOrEqual(4_990);
  });
});
