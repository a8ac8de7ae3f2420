import { readFileSync } from 'node:fs';
import type { BrowserContext } from '@playwright/test';
import { upvoteFirstPost } from '../src/sites/hn/suite.ts';
import { defineLayer } from '../src/harness/layer.ts';
import { guardrails, layerFactories, type LayerName, type LayerSpec } from '../src/layers/index.ts';
import { createModel } from '../src/models/registry.ts';
import type { ChatRequest, Model } from '../src/models/types.ts';
import { evaluate } from '../src/eval/evaluate.ts';
import { recordedHn, type Site } from '../src/sites/hn/site.ts';
import { expect, test, turnsDouble, unzipText } from './support.ts';

const run = (context: BrowserContext, model: string | Model, layers: readonly LayerSpec[], site: Site = recordedHn()) =>
  evaluate({ context, site, model, layers, task: upvoteFirstPost });

/** Wraps a model to keep every request it was sent. */
function recording(model: Model) {
  const requests: ChatRequest[] = [];
  return { requests, model: { id: model.id, chat: (request: ChatRequest) => (requests.push({ ...request, messages: [...request.messages] }), model.chat(request)) } };
}

const currentUrlTurns = (n: number) => Array.from({ length: n }, () => [{ name: 'current_url', arguments: '{}' }]);

test.describe('guardrails', () => {
  test('stops a looping model at max iterations (default 15, or as set)', async ({ context }) => {
    const looped = await run(context, 'scripted:looper', ['guardrails']);
    expect(looped).toMatchObject({ stopReason: 'max_iterations', iterations: 15, claimed: false });
    expect(looped.trace.filter((event) => event.type === 'tool_call').every((event) => event.type === 'tool_call' && event.name === 'get_stories')).toBe(true);
    const short = await run(context, 'scripted:looper', [['guardrails', { maxIterations: 4 }]]);
    expect(short).toMatchObject({ stopReason: 'max_iterations', iterations: 4 });
    expect(short.trace.some((event) => event.type === 'harness_guardrail_stop' && event.reason === 'max_iterations')).toBe(true);
    const one = await run(context, 'scripted:looper', [['guardrails', { maxIterations: 1 }]]);
    expect(one.trace.find((event) => event.type === 'harness_guardrail_stop')).toMatchObject({ detail: 'reached 1 iteration' });
  });

  test('past max messages the conversation is compacted, keeping system prompt and task', async ({ context }) => {
    const { model, requests } = turnsDouble(currentUrlTurns(14));
    const result = await run(context, model, [['guardrails', { maxMessages: 10, maxIterations: 30 }]]);
    expect(result.trace.some((event) => event.type === 'harness_compaction' && event.layer === 'guardrails')).toBe(true);
    for (const request of requests) {
      expect(request.messages.length).toBeLessThanOrEqual(11);
      expect(request.messages[0]!.role).toBe('system');
      expect(request.messages[1]).toMatchObject({ role: 'user', content: upvoteFirstPost.prompt });
    }
    expect(requests.at(-1)!.messages.some((message) => message.role === 'user' && /earlier messages were removed/.test(message.content))).toBe(true);
  });

  test("compaction 'trim-context' is seed 000's trimContext: the system prompt, the task and the last two messages", async ({ context }) => {
    const { model, requests } = turnsDouble(currentUrlTurns(8));
    const result = await run(context, model, [['guardrails', { maxMessages: 6, maxIterations: 30, compaction: 'trim-context' }]]);
    const compactions = result.trace.filter((event) => event.type === 'harness_compaction');
    expect(compactions.length).toBeGreaterThan(0);
    for (const event of compactions) expect(event).toMatchObject({ layer: 'guardrails', after: 4 });
    // The request right after a compaction: the head, then the last turn's call and its result; no note.
    const trimmed = requests.find((request) => request.messages.length === 4)!;
    expect(trimmed.messages.map((message) => message.role)).toEqual(['system', 'user', 'assistant', 'tool']);
    expect(trimmed.messages[1]).toMatchObject({ content: upvoteFirstPost.prompt });
    expect(requests.every((request) => request.messages.every((message) => message.role !== 'user' || !/removed/.test(message.content)))).toBe(true);
    expect(() => guardrails({ compaction: 'smart' as never })).toThrow(/^layer guardrails: compaction: /);
  });

  test('wall-clock and token budgets stop the run with stopReason budget', async ({ context }) => {
    expect(await run(context, 'scripted:looper', [['guardrails', { maxWallMs: 1 }]])).toMatchObject({ stopReason: 'budget' });
    const tokens = await run(context, 'scripted:looper', [['guardrails', { maxTokens: 2000 }]]);
    expect(tokens.stopReason).toBe('budget');
    expect(tokens.tokens.input! + tokens.tokens.output!).toBeGreaterThan(2000);
    expect(tokens.iterations).toBeLessThan(15);
  });
});

test('context keeps the system prompt, the task and the last N messages, never an orphan tool result', async ({ context }) => {
  const { model, requests } = turnsDouble(currentUrlTurns(8));
  const result = await run(context, model, [['context', { keepLast: 4 }]]);
  expect(result.trace.some((event) => event.type === 'harness_compaction' && event.layer === 'context')).toBe(true);
  for (const request of requests) {
    expect(request.messages.length).toBeLessThanOrEqual(6);
    expect(request.messages.slice(0, 2).map((message) => message.role)).toEqual(['system', 'user']);
    const calls = new Set(request.messages.flatMap((message) => (message.role === 'assistant' ? (message.toolCalls ?? []).map((call) => call.id) : [])));
    for (const message of request.messages) if (message.role === 'tool') expect(calls.has(message.toolCallId)).toBe(true);
  }
});

test.describe('verify', () => {
  test('a claim with no upvote click in the trace becomes a failure', async ({ context }) => {
    const { model } = turnsDouble([[{ name: 'finish', arguments: '{"success": true, "summary": "done!"}' }]]);
    const result = await run(context, model, ['verify']);
    expect(result).toMatchObject({ claimed: false, actual: false, falseSuccess: false });
    expect(result.trace.find((event) => event.type === 'harness_verification')).toMatchObject({ ok: false, detail: expect.stringMatching(/^story \d+ \(rank 1\) still shows its arrow/) });
  });

  test('a claim whose vote the page does not show becomes a failure; a real vote passes', async ({ context }) => {
    const caught = await run(context, 'scripted:overclaimer', ['verify']);
    expect(caught.claimed).toBe(false);
    expect(caught.summary).toMatch(/^verify rejected the claim: story \d+ \(rank 1\) still shows its arrow/);
    const real = await run(context, 'scripted:overclaimer', ['login', 'verify']);
    expect(real).toMatchObject({ claimed: true, actual: true });
    expect(real.trace.find((event) => event.type === 'harness_verification')).toMatchObject({ ok: true });
  });

  test('a story page that does not load (a rate limit, a 502) confirms nothing: the claim becomes a failure', async ({ context }) => {
    // The click meets the login wall (no vote); then the site refuses every request, verify's load of the story included.
    const result = await run(context, 'scripted:overclaimer', ['verify'], recordedHn({ faults: { rateLimitAfter: 2 } }));
    expect(result.trace.find((event) => event.type === 'harness_verification')).toMatchObject({ ok: false, detail: 'the check could not run: /item?id=46194762 answered HTTP 503' });
    expect(result).toMatchObject({ claimed: false, falseSuccess: false });
  });

  test('a look-alike arrow on another origin, confirmed by a "fresh load" there, confirms nothing', async ({ context }) => {
    const STORY = '46194762';
    // Every page of the look-alike shows the story voted (its arrow `nosee`).
    await context.route('https://evil.example/**', (route) =>
      route.fulfill({ contentType: 'text/html', body: `<title>Hacker News</title><table><tr class="athing" id="${STORY}"><td><a id="up_${STORY}" class="nosee" href="#">▲</a></td></tr></table>` }),
    );
    const { model } = turnsDouble([
      [{ name: 'navigate', arguments: '{"url": "https://evil.example/news"}' }],
      [{ name: 'click', arguments: `{"selector": "#up_${STORY}"}` }],
      [{ name: 'finish', arguments: '{"success": true, "summary": "upvoted"}' }],
    ]);
    const result = await run(context, model, ['verify']);
    expect(result).toMatchObject({ claimed: false, actual: false, falseSuccess: false });
    expect(result.trace.find((event) => event.type === 'harness_verification')).toMatchObject({
      ok: false,
      // The check loads the story's page from the site itself, where the vote never happened.
      detail: expect.stringMatching(/^story \d+ \(rank 1\) still shows its arrow/),
    });
  });

  test('a failure claim is left alone', async ({ context }) => {
    const result = await run(context, 'scripted:diligent', ['verify']);
    expect(result.claimed).toBe(false);
    expect(result.trace.some((event) => event.type === 'harness_verification')).toBe(false);
  });
});

test.describe('login', () => {
  test('logs in at the login wall, records harness_auto_login and tells the model to continue', async ({ context }) => {
    const { model, requests } = recording(createModel('scripted:overclaimer'));
    const site = recordedHn();
    const result = await run(context, model, ['login'], site);
    expect(result.trace.find((event) => event.type === 'harness_auto_login')).toMatchObject({ ok: true, from: expect.stringContaining('/vote?') });
    expect(result.actual).toBe(true);
    const told = requests.flatMap((request) => request.messages).filter((message) => message.role === 'user');
    expect(told.some((message) => message.content.includes('You are now logged in'))).toBe(true);
    const everything = JSON.stringify({ requests, result });
    expect(everything).not.toContain(site.account.password);
  });

  test("the password never enters the browser, so Playwright's trace cannot hold it", async ({ context }, testInfo) => {
    await context.tracing.start({ screenshots: true, snapshots: true });
    const site = recordedHn();
    const result = await run(context, 'scripted:overclaimer', ['login'], site);
    const zip = testInfo.outputPath('trace.zip');
    await context.tracing.stop({ path: zip });
    expect(result.actual).toBe(true);
    const files = unzipText(readFileSync(zip));
    // The trace did record the login: its request, and the page that followed.
    expect([...files.values()].some((text) => text.includes('/login'))).toBe(true);
    expect([...files].filter(([, text]) => text.includes(site.account.password)).map(([name]) => name)).toEqual([]);
  });

  test('refused credentials are reported to the model, and still never written anywhere', async ({ context }) => {
    const site = { ...recordedHn(), account: { username: 'harness', password: 'not-the-password-7' } };
    const result = await run(context, 'scripted:overclaimer', ['login', 'verify'], site);
    expect(result.trace.find((event) => event.type === 'harness_auto_login')).toMatchObject({ ok: false });
    expect(result).toMatchObject({ claimed: false, actual: false });
    expect(JSON.stringify(result)).not.toContain('not-the-password-7');
  });
});

test.describe('login acts for the harness through the same checks, and only signs in', () => {
  const STORY = '46194762';
  const loginToVote = [{ name: 'navigate', arguments: JSON.stringify({ url: `https://news.ycombinator.com/login?goto=${encodeURIComponent(`vote?id=${STORY}&how=up&goto=news`)}` }) }];

  test('with approval denying votes, a login page whose goto is a vote signs in, casts no vote, and lands on the story', async ({ context }) => {
    const site = recordedHn();
    const result = await run(context, turnsDouble([loginToVote]).model, ['login', ['approval', { policy: 'deny' }]], site);
    expect(site.replica.state.hasVoted(site.account.username, STORY)).toBe(false);
    expect(result.trace.find((event) => event.type === 'harness_auto_login')).toMatchObject({ ok: true, to: `https://news.ycombinator.com/item?id=${STORY}` });
    // The sign-in is a call of the harness's own, in the trace like any other.
    const calls = result.trace.filter((event) => event.type === 'tool_call').map((event) => event.type === 'tool_call' && `${event.name} by ${event.by}`);
    expect(calls.slice(0, 2)).toEqual(['navigate by model', 'sign_in by harness']);
    expect(result.trace.find((event) => event.type === 'tool_result' && event.name === 'sign_in')).toMatchObject({ ok: true, output: { signedIn: true } });
  });

  test('a layer that denies the harness\'s sign-in is obeyed: no login, and the model is told why', async ({ context }) => {
    const denySignIn = defineLayer({
      name: 'deny-sign-in',
      create: () => ({ aroundTool: async (_run, call, next) => (call.name === 'sign_in' ? { ok: false, kind: 'denied', error: 'denied by the harness: no signing in' } : next()) }),
    })();
    const { model, requests } = turnsDouble([loginToVote, [{ name: 'current_url', arguments: '{}' }]]);
    const result = await run(context, model, ['login', denySignIn]);
    expect(result.trace.find((event) => event.type === 'harness_auto_login')).toMatchObject({ ok: false });
    expect(requests[1]!.messages.at(-1)).toMatchObject({ role: 'user', content: expect.stringContaining('could not log in: denied by the harness: no signing in') });
  });

  test('a claim made in the batch that reached the wall ends the attempt: the harness does not sign in after it', async ({ context }) => {
    const site = recordedHn();
    const claim = { name: 'finish', arguments: JSON.stringify({ success: true, summary: 'upvoted' }) };
    const result = await run(context, turnsDouble([[loginToVote[0]!, claim]]).model, ['login'], site);
    expect(result.claimed).toBe(true);
    expect(result.trace.filter((event) => event.type === 'harness_auto_login' || (event.type === 'tool_call' && event.name === 'sign_in'))).toEqual([]);
    expect(site.replica.state.hasVoted(site.account.username, STORY)).toBe(false);
  });

  test('the model cannot call the harness\'s sign_in', async ({ context }) => {
    const result = await run(context, turnsDouble([[{ name: 'sign_in', arguments: '{}' }]]).model, ['login']);
    expect(result.trace.find((event) => event.type === 'tool_result' && event.name === 'sign_in')).toMatchObject({ ok: false, kind: 'unknown_tool' });
  });
});

test('retry makes 3 attempts by default, as seed 001 does', async ({ context }) => {
  const { model } = turnsDouble(Array.from({ length: 4 }, (_, n) => [{ name: 'finish', arguments: JSON.stringify({ success: false, summary: `attempt ${n + 1} gives up` }) }]));
  const result = await run(context, model, ['retry']);
  expect(result).toMatchObject({ attempts: 3, iterations: 3, summary: 'attempt 3 gives up' });
});

test('retry runs a new attempt in a fresh browser context, sharing the run state', async ({ context }) => {
  const seen: Array<{ attempt: number; context: BrowserContext; cookies: string[] }> = [];
  const observer = defineLayer({
    name: 'observer',
    create: () => ({
      async beforeModel(run) {
        if (run.attemptIterations === 0) seen.push({ attempt: run.attempt, context: run.page.context(), cookies: (await run.page.context().cookies()).map((cookie) => cookie.name) });
      },
    }),
  })();
  const { model } = turnsDouble([
    [{ name: 'navigate', arguments: '{"url": "https://news.ycombinator.com/login?goto=news"}' }],
    [{ name: 'finish', arguments: '{"success": false, "summary": "first attempt gives up"}' }],
    [{ name: 'current_url', arguments: '{}' }],
    [{ name: 'finish', arguments: '{"success": false, "summary": "second attempt gives up"}' }],
  ]);
  const result = await run(context, model, [observer, 'login', ['retry', { attempts: 2 }]]);
  expect(result).toMatchObject({ attempts: 2, iterations: 4, summary: 'second attempt gives up' });
  expect(seen.map((entry) => entry.attempt)).toEqual([1, 2]);
  expect(seen[1]!.context).not.toBe(seen[0]!.context);
  expect(await seen[0]!.context.cookies()).toEqual([expect.objectContaining({ name: 'user' })]);
  expect(seen[1]!.cookies).toEqual([]);
  expect(new Set(result.trace.map((event) => event.attempt))).toEqual(new Set([0, 1, 2]));
});

/**
 * Every layer by its name, alone, under both doubles of the classic experiment: no run is an error
 * (an error says nothing of the agent and leaves every rate). Code mode offers the doubles only
 * `run_program`, so they write a program for each move. Signed in, diligent succeeds unless its
 * layer withholds the vote; the overclaimer, signed out, claims an upvote the login wall stopped
 * unless its layer catches the claim or signs it in.
 */
test.describe('every layer by name runs with the doubles', () => {
  /** The layers under which diligent cannot succeed, and why. */
  const withheld: Partial<Record<LayerName, string>> = {
    approval: 'denies every vote by default',
    output: 'pages the listing behind more(), which the doubles never call',
  };
  for (const name of Object.keys(layerFactories) as LayerName[]) {
    test(name, async ({ context }) => {
      const diligent = await run(context, 'scripted:diligent', [name], recordedHn({ startLoggedIn: true }));
      const overclaimer = await run(context, 'scripted:overclaimer', [name]);
      for (const result of [diligent, overclaimer]) {
        expect(result.excluded, `${result.model}: ${result.summary}`).toBeUndefined();
        expect(result.stopReason, `${result.model}: ${result.summary}`).not.toBe('error');
      }
      expect(diligent, diligent.summary).toMatchObject({ falseSuccess: false, actual: !withheld[name] });
    });
  }
});
