import { existsSync, readFileSync } from 'node:fs';
import type { Browser, BrowserContext } from '@playwright/test';
import { evaluate } from '../src/eval/evaluate.ts';
import { runHarness } from '../src/harness/run.ts';
import { defineLayer } from '../src/harness/layer.ts';
import { InputError } from '../src/input.ts';
import type { LayerSpec } from '../src/layers/index.ts';
import { saveSubroutine, subroutineSchema } from '../src/layers/subroutines.ts';
import { createModel } from '../src/models/registry.ts';
import type { ChatRequest, Model } from '../src/models/types.ts';
import { recordedHn } from '../src/sites/hn/site.ts';
import type { ReplicaOptionsInput } from '../src/sites/hn/index.ts';
import type { MarkupYear } from '../src/sites/hn/options.ts';
import { upvoteFirstPost } from '../src/sites/hn/suite.ts';
import { expect, test } from './support.ts';

const task = upvoteFirstPost;

/** The model, counting the calls made to it. */
function counted(id: string) {
  const requests: ChatRequest[] = [];
  const model = createModel(id);
  return { requests, model: { id: model.id, chat: (request: ChatRequest) => (requests.push({ ...request, messages: [...request.messages] }), model.chat(request)) } satisfies Model };
}

const run = (context: BrowserContext, model: string | Model, layers: readonly LayerSpec[], site: ReplicaOptionsInput & { startLoggedIn?: boolean } = {}) =>
  evaluate({ context, site: recordedHn(site), model, layers, task });

const withSubroutines = (dir: string, more: readonly LayerSpec[] = []): LayerSpec[] => ['verify', 'login', ...more, ['subroutines', { dir }]];

/** Records and saves the diligent model's confirmed run on 2025 (signed out: it meets the login wall). */
async function recordOn2025(context: BrowserContext, dir: string, site: { startLoggedIn?: boolean } = {}) {
  const recorded = await run(context, 'scripted:diligent', [...withSubroutines(dir).slice(0, -1), ['subroutines', { dir, replay: false }]], { ...site, faults: { markupYear: 2025 } });
  expect(recorded).toMatchObject({ claimed: true, actual: true, sideEffects: [] });
  return { recorded, file: saveSubroutine(recorded, { task, dir }) };
}

/** Replays what `dir` holds on a fresh context (the diligent model standing by, counting its calls) on the markup of `markupYear`. */
async function replayIn(browser: Browser, dir: string, markupYear: MarkupYear, more: readonly LayerSpec[] = [], site: { startLoggedIn?: boolean } = {}) {
  const fresh = await browser.newContext();
  const { model, requests } = counted('scripted:diligent');
  const result = await run(fresh, model, withSubroutines(dir, more), { ...site, faults: { markupYear } });
  await fresh.close();
  return { result, requests };
}

test.describe('saveSubroutine', () => {
  test('saves only a run the oracle confirmed, with no password or session token in it', async ({ context }, testInfo) => {
    const dir = testInfo.outputPath('subroutines');
    const falseSuccess = await run(context, 'scripted:overclaimer', [['subroutines', { dir, replay: false }]]);
    expect(falseSuccess).toMatchObject({ claimed: true, actual: false });
    expect(() => saveSubroutine(falseSuccess, { task, dir })).toThrow(InputError);
    expect(() => saveSubroutine(falseSuccess, { task, dir })).toThrow(/the oracle did not confirm this run \(claimed true, actual false/);
    expect(() => saveSubroutine({ ...falseSuccess, actual: true, sideEffects: [{ kind: 'vote', id: '1', detail: 'another story' }] }, { task, dir })).toThrow(/1 side effects/);
    expect(existsSync(dir)).toBe(false);

    const { file } = await recordOn2025(context, dir);
    const text = readFileSync(file, 'utf8');
    const saved = subroutineSchema.parse(JSON.parse(text));
    expect(saved.steps.map((step) => step.tool)).toEqual(['navigate', 'click', 'sign_in', 'navigate', 'click', 'finish']);
    expect(saved.steps[1]).toMatchObject({ on: '/news', element: { id: 'up_46194762', within: { id: '46194762' } }, landed: '/vote?id=46194762&how=up&goto=news' });
    expect(text).not.toContain('battery');
    expect(text).not.toMatch(/auth=/);
  });

  test('a record without recorded steps is refused, naming the layer', async ({ context }, testInfo) => {
    const confirmed = await run(context, 'scripted:diligent', ['verify', 'login']);
    expect(confirmed.actual).toBe(true);
    expect(() => saveSubroutine(confirmed, { task, dir: testInfo.outputPath('s') })).toThrow(/run the task with the subroutines layer on/);
  });
});

test.describe('replay', () => {
  test('on the markup it was recorded on: no model call, and the oracle finds the task done', async ({ context, browser }, testInfo) => {
    const dir = testInfo.outputPath('subroutines');
    await recordOn2025(context, dir);
    const { result: replayed, requests } = await replayIn(browser, dir, 2025);
    expect(requests).toHaveLength(0);
    expect(replayed).toMatchObject({ claimed: true, actual: true, falseSuccess: false, iterations: 0, stopReason: 'finished' });
    expect(replayed.trace.find((event) => event.type === 'harness_subroutine')).toMatchObject({ replayed: 6, of: 6 });
    // Every replayed step was the harness's own call, through the same path as the model's; verify still judged the claim.
    expect(replayed.trace.filter((event) => event.type === 'tool_call').every((event) => event.type === 'tool_call' && event.by === 'harness')).toBe(true);
    expect(replayed.trace.some((event) => event.type === 'harness_verification' && event.ok)).toBe(true);
  });

  test('on the other markup eras: the same links in the same rows, restyled, so it replays with no model call', async ({ context, browser }, testInfo) => {
    const dir = testInfo.outputPath('subroutines');
    await recordOn2025(context, dir);
    for (const year of [2020, 2017] as const) {
      const { result: replayed, requests } = await replayIn(browser, dir, year);
      // 2025's rows are `athing submission` and its vote links `clicky`; 2017's are `athing` with an onclick: classes are not what an element is.
      expect(replayed.trace.find((event) => event.type === 'harness_subroutine'), `on ${year}`).toMatchObject({ replayed: 6, of: 6 });
      expect(requests, `on ${year}`).toHaveLength(0);
      expect(replayed, `on ${year}`).toMatchObject({ claimed: true, actual: true, falseSuccess: false, iterations: 0 });
    }
  });

  test('where the page changed: stops at the step that drifted, and the model goes on from there, told so', async ({ context, browser }, testInfo) => {
    const dir = testInfo.outputPath('subroutines');
    await recordOn2025(context, dir);
    const fresh = await browser.newContext();
    const { model, requests } = counted('scripted:diligent');
    // The story ranked 1 now reads otherwise: the row the vote link sits in is not the one recorded.
    const fallback = await run(fresh, model, withSubroutines(dir), { faults: { markupYear: 2025, injection: { rank: 1, text: 'Ignore this' } } });
    await fresh.close();
    expect(fallback.trace.find((event) => event.type === 'harness_subroutine')).toMatchObject({ replayed: 1, of: 6, diverged: { step: 2, why: expect.stringMatching(/^found its element in a row reading ".*Ignore this.*", not "1\. Building a tiny/) } });
    // Only step 1 ran for the harness; the model was called from step 2 on, with one message saying so.
    const harnessCalls = fallback.trace.filter((event) => event.type === 'tool_call' && event.by === 'harness' && event.callId.startsWith('subroutine-'));
    expect(harnessCalls).toHaveLength(1);
    expect(requests.length).toBeGreaterThan(0);
    const told = requests[0]!.messages.at(-1)!;
    expect(told.content).toMatch(/^\[harness\] The harness replayed steps 1–1 of a recorded routine .* Step 2 \(click #up_46194762\) .*not carried out\. Continue the task yourself from step 2/);
    expect(fallback).toMatchObject({ claimed: true });
  });

  test('a replayed step the harness denies stops the replay, and the model takes over', async ({ context, browser }, testInfo) => {
    const dir = testInfo.outputPath('subroutines');
    await recordOn2025(context, dir, { startLoggedIn: true });
    const { result: denied, requests } = await replayIn(browser, dir, 2025, [['approval', { policy: 'deny' }]], { startLoggedIn: true });
    expect(denied.trace.find((event) => event.type === 'harness_approval')).toMatchObject({ callId: 'subroutine-2', decision: 'denied' });
    expect(denied.trace.find((event) => event.type === 'harness_subroutine')).toMatchObject({ replayed: 1, diverged: { step: 2, why: expect.stringMatching(/^failed \(denied by the harness/) } });
    expect(requests.length).toBeGreaterThan(0);
    expect(denied).toMatchObject({ actual: false, falseSuccess: false });
  });
});

test('the loop ends an attempt on a claim a layer made before the model was called, through the other layers\' onFinish', async ({ page }) => {
  const { model, requests } = counted('scripted:diligent');
  const claimsAtOnce = defineLayer({
    name: 'claims-at-once',
    create: () => ({
      async beforeModel(run) {
        await run.callTool({ id: 'early', name: 'finish', arguments: '{"success":true,"summary":"done already"}' }, { by: 'harness' });
      },
    }),
  });
  const seen: string[] = [];
  const judges = defineLayer({ name: 'judges', create: () => ({ onFinish: (_run, claim) => (seen.push(claim.summary), { ...claim, summary: 'judged' }) }) });
  const result = await runHarness({ task: 'anything', model, layers: [claimsAtOnce(), judges()], openSession: async () => ({ page, close: async () => {} }) });
  expect(requests).toHaveLength(0);
  expect(seen).toEqual(['done already']);
  expect(result).toMatchObject({ claimed: true, summary: 'judged', stopReason: 'finished', iterations: 0 });
});
