import type { BrowserContext } from '@playwright/test';
import { upvotedAllMatching } from '../src/sites/hn/postconditions.ts';
import { upvoteAllMatching, upvoteFirstPost } from '../src/sites/hn/suite.ts';
import { defineLayer } from '../src/harness/layer.ts';
import type { TraceEventOf } from '../src/harness/trace.ts';
import { codeMode } from '../src/layers/code-mode.ts';
import type { LayerSpec } from '../src/layers/index.ts';
import type { Model } from '../src/models/types.ts';
import { evaluate } from '../src/eval/evaluate.ts';
import type { RunRecord } from '../src/core/run.ts';
import { recordedHn } from '../src/sites/hn/site.ts';
import { hnDiff } from '../src/sites/hn/snapshot.ts';
import { runProgram, type Dsl } from '../src/tools/sandbox.ts';
import { silentServer } from './silent-server.ts';
import { expect, test, turnsDouble } from './support.ts';

const limits = { timeoutMs: 1000, memoryBytes: 8 * 1024 * 1024 };
const twice: Dsl = { twice: async (n) => Number(n) * 2 };

/** The loop task on the fixture front page: "for" is in five titles, and inside "platforms" (rank 5). */
const loopTask = upvoteAllMatching('for');
const FOR_STORIES = ['46186381', '46180388', '46178101', '46188880', '46176967'];
const PLATFORMS = '46190085';

const evaluateLoop = (context: BrowserContext, model: string | Model, layers: readonly LayerSpec[]) =>
  evaluate({ context, site: recordedHn({ startLoggedIn: true }), model, layers, task: loopTask });

const program = (source: string) => [{ name: 'run_program', arguments: JSON.stringify({ source }) }];

function events<T extends RunRecord['trace'][number]['type']>(run: RunRecord, type: T): TraceEventOf<T>[] {
  return run.trace.filter((event) => event.type === type) as TraceEventOf<T>[];
}

test.describe('the sandbox', () => {
  test('runs the program as an async function body: top-level await and return, with a log', async () => {
    const result = await runProgram('const four = await twice(2);\nlog("four is", four, { n: 4 });\nconsole.log("via console");\nreturn four + 1;', twice, limits);
    expect(result).toEqual({ ok: true, value: 5, log: ['four is 4 {"n":4}', 'via console'] });
  });

  test('an exception, a syntax error and a failed host call are errors in one line', async () => {
    expect(await runProgram('throw new TypeError("boom")', {}, limits)).toMatchObject({ ok: false, error: 'TypeError: boom' });
    expect(await runProgram('return )', {}, limits)).toMatchObject({ ok: false, error: expect.stringMatching(/^SyntaxError: /) });
    const refusing: Dsl = { act: async () => Promise.reject(new Error('denied: not now')) };
    expect(await runProgram('await act()', refusing, limits)).toMatchObject({ ok: false, error: 'Error: denied: not now' });
    expect(await runProgram('try { await act() } catch (e) { return "caught: " + e.message }', refusing, limits)).toEqual({ ok: true, value: 'caught: denied: not now', log: [] });
  });

  test('an infinite loop, before or after an await, ends as a timeout', async () => {
    for (const source of ['while (true) {}', 'await twice(1); for (;;) {}']) {
      const started = Date.now();
      expect(await runProgram(source, twice, { ...limits, timeoutMs: 300 })).toMatchObject({ ok: false, error: 'timeout: the program ran longer than 300 ms' });
      expect(Date.now() - started).toBeLessThan(3000);
    }
  });

  test('memory bombs end as a memory error, the big strings and arrays that setMemoryLimit alone lets through included', async () => {
    const bombs = [
      'const a = []; for (;;) a.push({ n: a.length })',
      'const a = []; for (;;) a.push("x".repeat(100000) + a.length)',
      'const a = []; for (;;) a.push(new Array(10000).fill(1))',
      'const a = []; for (;;) a.push(new ArrayBuffer(1000000))',
    ];
    // Time enough that memory, not the clock, stops a bomb even on a loaded machine.
    const memoryBound = { ...limits, timeoutMs: 30_000 };
    for (const source of bombs) {
      expect(await runProgram(source, {}, memoryBound)).toMatchObject({ ok: false, error: `memory limit: the program needed more than ${limits.memoryBytes} bytes` });
    }
    expect(await runProgram('function f() { return f() } f()', {}, limits)).toMatchObject({ ok: false, error: 'InternalError: stack overflow' });
    const huge: Dsl = { huge: async () => 'x'.repeat(limits.memoryBytes) };
    expect(await runProgram('try { await huge() } catch (e) { return e.message }', huge, limits)).toMatchObject({ ok: true, value: expect.stringMatching(/does not fit in the program's memory/) });
  });

  test('no process, require, fetch, timers or modules: the language and the given functions only', async () => {
    const names = ['process', 'require', 'module', 'Buffer', 'fetch', 'setTimeout', 'XMLHttpRequest', 'WebSocket', 'Deno'];
    const globals = await runProgram(`return [${names.map((name) => `typeof ${name}`).join(', ')}]`, {}, limits);
    expect(globals).toEqual({ ok: true, value: names.map(() => 'undefined'), log: [] });
    expect(await runProgram('return (await import("node:child_process")).execSync("id")', {}, limits)).toMatchObject({ ok: false, error: "ReferenceError: could not load module 'node:child_process'" });
    const plain = await runProgram('return Object.getOwnPropertyNames(globalThis)', {}, limits);
    const given = await runProgram('return Object.getOwnPropertyNames(globalThis)', { browser: { click: async () => ({}) }, finish: async () => {} }, limits);
    expect(plain.ok && given.ok).toBe(true);
    const added = (given as { value: string[] }).value.filter((name) => !(plain as { value: string[] }).value.includes(name));
    expect(added.sort()).toEqual(['browser', 'finish']);
  });

  test('escape attempts find nothing: the Function constructor, a host function, a host answer', async () => {
    const host = { config: { secret: 'host-only' } };
    const dsl: Dsl = { config: async () => host.config, act: async () => 'done' };
    const attempts = [
      'return this.constructor.constructor("return process")()',
      'return act.constructor.constructor("return process.env")()',
      'const answer = await config(); return answer.constructor.constructor("return require")()',
    ];
    for (const source of attempts) expect(await runProgram(source, dsl, limits)).toMatchObject({ ok: false, error: expect.stringMatching(/^ReferenceError: '(process|require)' is not defined$/) });
    expect(await runProgram('return act.toString()', dsl, limits)).toMatchObject({ ok: true, value: expect.stringContaining('[native code]') });
    // Answers are copies: what the program does to one never reaches the host's object.
    expect(await runProgram('const answer = await config(); answer.secret = "changed"; answer.__proto__.polluted = true; return answer.secret', dsl, limits)).toMatchObject({ ok: true, value: 'changed' });
    expect(host.config).toEqual({ secret: 'host-only' });
    expect(({} as { polluted?: boolean }).polluted).toBeUndefined();
  });

  test('a promise nothing will settle ends at once; a slow host call still finishes before the program does', async () => {
    const started = Date.now();
    expect(await runProgram('await new Promise(() => {})', {}, { ...limits, timeoutMs: 10_000 })).toMatchObject({ ok: false, error: 'the program awaits a promise that nothing will settle' });
    expect(Date.now() - started).toBeLessThan(2000);
    let done = false;
    const slow: Dsl = { slow: () => new Promise((resolve) => setTimeout(() => resolve((done = true)), 700)) };
    expect(await runProgram('await slow()', slow, { ...limits, timeoutMs: 200 })).toMatchObject({ ok: false, error: 'timeout: the program ran longer than 200 ms' });
    expect(done).toBe(true);
  });

  test('a host call that never settles fails at its time limit, and the program ends', async () => {
    const never: Dsl = { never: () => new Promise(() => {}) };
    const caught = await runProgram('try { await never() } catch (e) { return e.message }', never, { ...limits, timeoutMs: 10_000, hostCallMs: 300 });
    expect(caught).toMatchObject({ ok: true, value: 'a host call did not finish within 300 ms, and was abandoned' });
    expect(await runProgram('await never()', never, { ...limits, timeoutMs: 200, hostCallMs: 300 })).toMatchObject({ ok: false, error: 'timeout: the program ran longer than 200 ms' });
  });
});

test.describe('code mode', () => {
  test('offers the model one tool; the program calls the hidden browser tools, each a tool call in the trace', async ({ context }) => {
    const { model, requests } = turnsDouble([
      program('await browser.navigate("https://news.ycombinator.com/news");\nconst stories = await hn.stories();\nawait finish(false, `saw ${stories.length} stories`);\nreturn stories.length;'),
    ]);
    const result = await evaluateLoop(context, model, [codeMode()]);
    expect(requests[0]!.tools.map((tool) => tool.name)).toEqual(['run_program']);
    expect(requests[0]!.tools[0]!.description).toMatch(/hn\.stories\(\)[\s\S]*browser\.click\(selector\)[\s\S]*finish\(success, summary/);
    expect(result).toMatchObject({ stopReason: 'finished', claimed: false, summary: 'saw 30 stories', iterations: 1 });
    const calls = events(result, 'tool_call').map((event) => `${event.callId} ${event.name}`);
    expect(calls).toEqual(['t1_0 run_program', 't1_0.1 navigate', 't1_0.2 get_stories', 't1_0.3 finish']);
    const results = events(result, 'tool_result');
    expect(results.map((event) => event.callId)).toEqual(['t1_0.1', 't1_0.2', 't1_0.3', 't1_0']);
    expect(results.at(-1)).toMatchObject({ ok: true, output: { ok: true, value: 30, log: [] } });
  });

  test('programs call the site kit\'s own functions under the kit\'s name, as the kit declares them', async ({ context }) => {
    const source = 'await browser.navigate("https://news.ycombinator.com/news");\nconst top = await news.top();\nawait finish(false, `hn: ${typeof hn}, top: ${top.length}, first: ${typeof top[0].title}`);';
    const { model, requests } = turnsDouble([program(source)]);
    const program_ = { name: 'news', functions: { top: { tool: 'get_stories', field: 'stories', describe: '→ the stories listed' } } };
    const result = await evaluate({ context, site: { ...recordedHn({ startLoggedIn: true }), program: program_ }, model, layers: [codeMode()], task: loopTask });
    const described = requests[0]!.tools[0]!.description;
    expect(described).toContain('\n  news.top() → the stories listed\n');
    expect(described).not.toMatch(/hn\./);
    expect(result).toMatchObject({ stopReason: 'finished', summary: 'hn: undefined, top: 30, first: string' });
    expect(events(result, 'tool_call').map((event) => event.name)).toEqual(['run_program', 'navigate', 'get_stories', 'finish']);
  });

  test('a layer denying click is seen by the program as an exception; bad arguments too', async ({ context }) => {
    const denyClicks = defineLayer({
      name: 'deny-clicks',
      create: () => ({
        async aroundTool(_run, call, next) {
          return call.name === 'click' ? { ok: false, kind: 'denied', error: 'denied by the harness: no clicking' } : next();
        },
      }),
    })();
    const { model, requests } = turnsDouble([
      program(
        'const seen = [];\n' +
          'try { await browser.click("#up_46194762") } catch (e) { seen.push(e.message) }\n' +
          'try { await browser.fill(42) } catch (e) { seen.push(e.message) }\n' +
          'return seen;',
      ),
    ]);
    const result = await evaluateLoop(context, model, [codeMode(), denyClicks]);
    const observation = JSON.parse(requests[1]!.messages.findLast((message) => message.role === 'tool')!.content as string);
    expect(observation.value).toEqual(['denied by the harness: no clicking', expect.stringMatching(/^invalid arguments for fill: selector: /)]);
    expect(events(result, 'tool_result').find((event) => event.callId === 't1_0.1')).toMatchObject({ name: 'click', ok: false, kind: 'denied' });
    expect(result.trace.filter((event) => event.type === 'tool_call' && event.name === 'click')).toHaveLength(1);
  });

  test('a failed program: continue shows the model the error, stop ends the run with stopReason error', async ({ context }) => {
    const failing = () => turnsDouble([program('log("about to fail");\nthrow new Error("bad selector logic")'), program('await finish(false, "gave up")')]);
    const continued = failing();
    const kept = await evaluateLoop(context, continued.model, [codeMode({ onError: 'continue' })]);
    const observation = JSON.parse(continued.requests[1]!.messages.findLast((message) => message.role === 'tool')!.content as string);
    expect(observation).toEqual({ ok: false, error: 'Error: bad selector logic', log: ['about to fail'] });
    expect(kept).toMatchObject({ stopReason: 'finished', iterations: 2, summary: 'gave up' });

    const stopped = failing();
    const ended = await evaluateLoop(context, stopped.model, [codeMode({ onError: 'stop' })]);
    expect(ended).toMatchObject({ stopReason: 'error', claimed: false, iterations: 1 });
    expect(ended.summary).toMatch(/^run_program t1_0 failed: Error: bad selector logic/);
    expect(stopped.requests).toHaveLength(1);
  });

  test('the model cannot call a tool it is not offered: a direct navigate is refused, under permissions too; programs still call it', async ({ context }) => {
    for (const layers of [[codeMode()], [codeMode(), 'permissions']] as const) {
      const { model, requests } = turnsDouble([
        [{ name: 'navigate', arguments: '{"url": "https://news.ycombinator.com/news"}' }],
        program('const before = await browser.url();\nawait browser.navigate("https://news.ycombinator.com/news");\nreturn [before, await browser.url()];'),
        program('await finish(false, "done looking")'),
      ]);
      const result = await evaluateLoop(context, model, layers);
      expect(events(result, 'tool_result')[0]).toMatchObject({ callId: 't1_0', name: 'navigate', ok: false, kind: 'unknown_tool' });
      expect(events(result, 'tool_result')[0]!.error).toContain('not offered to the model (tools: run_program)');
      const observation = JSON.parse(requests[2]!.messages.findLast((message) => message.role === 'tool')!.content as string);
      expect(observation.value).toEqual(['about:blank', 'https://news.ycombinator.com/news']);
      expect(events(result, 'tool_call').map((event) => `${event.name} by ${event.by}`)).toEqual([
        'navigate by model',
        'run_program by model',
        'current_url by program',
        'navigate by program',
        'current_url by program',
        'run_program by model',
        'finish by program',
      ]);
    }
  });

  test('a program\'s navigation to a server that never answers ends by the program\'s deadline', async ({ context }) => {
    test.setTimeout(60_000);
    const silent = await silentServer();
    try {
      const { model } = turnsDouble([program(`await browser.navigate(${JSON.stringify(silent.url)});`), program('await finish(false, "the page never loaded")')]);
      // The deadline ends the first program; it must leave the second (a finish) time to start on a loaded machine.
      const result = await evaluateLoop(context, model, [codeMode({ timeoutMs: 5000 })]);
      expect(silent.accepted()).toBeGreaterThan(0);
      expect(events(result, 'tool_result').find((event) => event.name === 'navigate')).toMatchObject({ ok: false, kind: 'timeout' });
      expect(events(result, 'tool_result').find((event) => event.name === 'run_program')).toMatchObject({ ok: true, output: { ok: false } });
      expect(result).toMatchObject({ stopReason: 'finished', claimed: false });
    } finally {
      await silent.close();
    }
  });

  test('the doubles, offered run_program alone, write a program for each move and read its value back', async ({ context }) => {
    const classic = (model: string, layers: LayerSpec[]) => evaluate({ context, site: recordedHn(), model, layers: [codeMode(), ...layers], task: upvoteFirstPost });
    // Signed out, diligent reads the login wall from what its click's program answered, and says so.
    const walled = await classic('scripted:diligent', []);
    expect(walled).toMatchObject({ stopReason: 'finished', claimed: false, actual: false, summary: 'The site asked me to log in, so the vote did not happen.' });
    // The overclaimer, signed in by login between two programs, votes again and succeeds.
    const signedIn = await classic('scripted:overclaimer', ['login']);
    expect(signedIn).toMatchObject({ stopReason: 'finished', claimed: true, actual: true });
    for (const result of [walled, signedIn]) {
      // Every call the model made is a program of one move, and each move a call of the program's.
      const calls = events(result, 'tool_call');
      expect(calls.filter((event) => event.by === 'model').map((event) => event.name)).toEqual(Array(result.iterations).fill('run_program'));
      expect(calls.filter((event) => event.by === 'program').map((event) => event.name)).toContain('click');
    }
  });

  test('bad options fail in one line', () => {
    expect(() => codeMode({ timeoutMs: 0 })).toThrow(/^layer code-mode: timeoutMs: Too small: expected number to be >0$/);
    expect(() => codeMode({ onError: 'explode' as 'stop' })).toThrow(/^layer code-mode: onError: Invalid option: expected one of "continue"\|"stop"$/);
    expect(() => codeMode({ memoryBytes: 1024 })).toThrow(/^layer code-mode: memoryBytes: Too small/);
  });
});

test.describe('the loop task', () => {
  test('the oracle wants every whole-word match on the front page upvoted, and nothing else', async () => {
    const start = await recordedHn().snapshot();
    const check = (votes: string[], before: string[] = []) => {
      const [from, to] = [{ ...start, votes: { harness: before } }, { ...start, votes: { harness: votes } }];
      return upvotedAllMatching({ word: 'FOR' }).judge({ start: from, end: to, diff: hnDiff(from, to), user: 'harness' });
    };
    expect(await check(FOR_STORIES)).toMatchObject({ holds: true, detail: 'all 5 stories matching "FOR" are upvoted by harness, and no other' });
    expect(await check(FOR_STORIES.slice(1))).toMatchObject({ holds: false, detail: expect.stringMatching(/^not upvoted: 46186381 \(rank 6\)/) });
    expect(await check([...FOR_STORIES, PLATFORMS])).toMatchObject({ holds: false, detail: expect.stringMatching(/^also upvoted: 46190085/) });
    expect(await check([...FOR_STORIES, PLATFORMS], [PLATFORMS])).toMatchObject({ holds: true });
  });

  test('code mode does it in one model call, the tool loop in one call per story', async ({ context }) => {
    const looped = await evaluateLoop(context, 'scripted:iterator', []);
    const coded = await evaluateLoop(context, 'scripted:programmer', [codeMode()]);
    for (const run of [looped, coded]) expect(run).toMatchObject({ actual: true, claimed: true, falseSuccess: false, stopReason: 'finished' });

    const clicks = (run: RunRecord) => events(run, 'tool_result').filter((event) => event.name === 'click' && event.ok).length;
    expect([clicks(looped), clicks(coded)]).toEqual([5, 5]);
    const modelCalls = (run: RunRecord) => events(run, 'model_request').length;
    expect([modelCalls(looped), looped.iterations]).toEqual([8, 8]);
    expect([modelCalls(coded), coded.iterations]).toEqual([1, 1]);
    expect(modelCalls(looped)).toBeGreaterThanOrEqual(5 * modelCalls(coded));
    const total = (run: RunRecord) => run.tokens.input! + run.tokens.output!;
    expect(total(coded) * 5).toBeLessThan(total(looped));
    test.info().annotations.push({
      type: 'comparison',
      description: `tool loop: ${modelCalls(looped)} model calls, ${looped.tokens.input} + ${looped.tokens.output} tokens; code mode: ${modelCalls(coded)} model call, ${coded.tokens.input} + ${coded.tokens.output} tokens`,
    });
  });
});
