import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { upvoteFirstPost } from '../src/sites/hn/suite.ts';
import { defineLayer, type LayerValue } from '../src/harness/layer.ts';
import { transcript } from '../src/harness/transcript.ts';
import { durable, guardrails, verify, type LayerSpec } from '../src/layers/index.ts';
import { layersCondition } from '../src/playwright/condition.ts';
import { evaluate } from '../src/eval/evaluate.ts';
import { attachRun, HARNESS_RUN_ATTACHMENT } from '../src/playwright/fixtures.ts';
import { runRecordSchema, type AttachedRunRecord } from '../src/report/types.ts';
import { recordedHn } from '../src/sites/hn/site.ts';
import * as api from '../src/index.ts';
import { collect, playwright, readSummary, workspace } from './playwright-child.ts';
import { expect, attachedRunRecord, test } from './support.ts';

/** Counts its run's model calls, each a custom event: a layer with state of its own. */
const callCounter = defineLayer({
  name: 'call-counter',
  create() {
    let calls = 0;
    return {
      beforeModel(run) {
        calls += 1;
        run.record({ type: 'custom', layer: 'call-counter', name: 'model-call', data: { calls } });
      },
    };
  },
});

const evaluateStack = (context: Parameters<typeof evaluate>[0]['context'], layers: readonly LayerSpec[], model = 'scripted:diligent') =>
  evaluate({ context, site: recordedHn(), model, layers, task: upvoteFirstPost, outputDir: test.info().outputPath('run') });

test.describe('a layer is one condition however it is written', () => {
  const written: Array<[string, LayerSpec[]]> = [
    ['named', ['guardrails', 'verify']],
    ['as pairs', [['guardrails', { maxIterations: 15 }], ['verify', {}]]],
    ['as values', [guardrails(), verify()]],
    ['as values with the defaults spelt out', [guardrails({ maxIterations: 15, maxMessages: 50, compaction: 'half' }), verify({})]],
  ];
  for (const [how, layers] of written) {
    test(how, () => {
      expect(layersCondition(layers)).toEqual([
        { name: 'guardrails', options: { maxIterations: 15, maxMessages: 50, compaction: 'half' } },
        { name: 'verify', options: {} },
      ]);
    });
  }
});

test('the main entry is small (at most 40 runtime names); every built-in layer and extension point is under its subpath', async () => {
  expect(Object.keys(api).length, Object.keys(api).join(', ')).toBeLessThanOrEqual(40);
  for (const name of ['test', 'expect', 'matrix', 'defineTask', 'defineLayer', 'defineTool', 'layerStacks', 'functionAgent', 'commandAgent', 'acpAgent', 'evaluate', 'hn', 'attachRun', 'ToolError'] as const) expect(api[name], name).toBeDefined();
  const layers = await import('../src/layers/index.ts');
  const exported = Object.keys(layers.layerFactories).map((name) => {
    const factory = (layers as Record<string, unknown>)[name.replace(/-(\w)/g, (_, letter: string) => letter.toUpperCase())] as () => LayerValue;
    return factory().name;
  });
  expect(exported).toEqual(Object.keys(layers.layerFactories));
  expect(exported).toHaveLength(21);
  for (const name of ['ApprovalStore', 'argsHash', 'saveSubroutine', 'resolveLayers'] as const) expect(layers[name], name).toBeDefined();
  const harness = await import('../src/harness/index.ts');
  for (const name of ['runHarness', 'traceEventSchema', 'customEventSchema', 'transcript', 'defineTool'] as const) expect(harness[name], name).toBeDefined();
  const models = await import('../src/models/index.ts');
  for (const name of ['createModel', 'openCassette', 'readCassette'] as const) expect(models[name], name).toBeDefined();
  const sites = await import('../src/sites/index.ts');
  for (const name of ['routeSite', 'serveSite', 'requestsInFlight', 'sessionCookies', 'idleBoundMs'] as const) expect(sites[name], name).toBeDefined();
  const reporter = await import('../src/playwright/reporter.ts');
  expect(reporter.runRecordSchema).toBeDefined();
});

test('every run gets its own instance: the same durable value resumes in each of two runs', async ({ context }, testInfo) => {
  const file = testInfo.outputPath('durable.json');
  const saved = { version: 1, task: upvoteFirstPost.prompt, model: 'scripted:diligent', url: 'about:blank', cookies: [], run: { attempt: 1, iterations: 3, attemptIterations: 3, tokens: { input: 900, output: 60 }, messages: [], trace: [] } };
  const layer = durable({ file });
  for (const run of [1, 2]) {
    writeFileSync(file, JSON.stringify(saved));
    const result = await evaluateStack(context, [layer]);
    expect(result.trace.find((event) => event.type === 'harness_resume'), `run ${run}`).toMatchObject({ fromStep: 3 });
  }
});

test("a user's stateful layer starts afresh in every run", async ({ context }) => {
  const layers = [callCounter()];
  for (const run of [1, 2]) {
    const result = await evaluateStack(context, layers);
    const counted = result.trace.flatMap((event) => (event.type === 'custom' ? [event.data?.calls] : []));
    expect(counted.slice(0, 2), `run ${run}`).toEqual([1, 2]);
  }
});

test('durable named alone saves to durable.json in the run\'s folder, and removes it when the run ends', async ({ context }) => {
  const file = test.info().outputPath('run', 'durable.json');
  const seen: boolean[] = [];
  const spy = defineLayer({ name: 'spy', create: () => ({ afterTools: () => void seen.push(existsSync(file)) }) });
  const result = await evaluateStack(context, ['durable', spy()]);
  expect(result.stopReason).toBe('finished');
  expect(seen.length).toBeGreaterThan(0);
  expect(seen.every(Boolean)).toBe(true);
  expect(existsSync(file)).toBe(false);
});

test('a hooks object, shared by every run it is in, is refused in one line naming it', () => {
  const shared = { name: 'shared', beforeModel: () => {} };
  expect(() => layersCondition(['verify', shared as unknown as LayerValue])).toThrow(
    /^layers\[1\]: "shared" is not a layer value: write it with defineLayer\(\{ name, create \}\), which gives each run its own instance$/,
  );
});

test("a layer's own events are recorded, redacted like the others and shown in the transcript", async ({ context }) => {
  const site = recordedHn();
  const spy = defineLayer({
    name: 'spy',
    create: () => ({ afterTools: (run) => run.record({ type: 'custom', layer: 'spy', name: 'saw', data: { url: run.page.url(), typed: run.credentials!.password } }) }),
  });
  const result = await evaluate({ context, site, model: 'scripted:diligent', layers: [spy()], task: upvoteFirstPost });
  const seen = result.trace.filter((event) => event.type === 'custom');
  expect(seen[0]).toMatchObject({ layer: 'spy', name: 'saw', data: { url: 'https://news.ycombinator.com/news', typed: '[secret]' } });
  expect(JSON.stringify(result)).not.toContain(site.account.password);
  expect(transcript(result.trace)).toContain('spy: saw {"url":"https://news.ycombinator.com/news","typed":"[secret]"}');
});

test('a custom event whose data is not JSON fails the run in one line naming the field', async ({ context }) => {
  const bad = defineLayer({
    name: 'bad',
    create: () => ({ beforeModel: (run) => run.record({ type: 'custom', layer: 'bad', name: 'oops', data: { callback: (() => 1) as never } }) }),
  });
  const error = await evaluateStack(context, [bad()]).then(() => undefined, (caught: unknown) => caught as Error);
  expect(error?.name).toBe('InputError');
  expect(error?.message).toMatch(/^custom event of layer bad: data\.callback: /);
  expect(error?.message.split('\n')).toHaveLength(1);
});

test('bad options of a defined layer fail in one line naming the field', () => {
  const limited = defineLayer({ name: 'limited', options: z.object({ most: z.number().int().positive() }).strict(), create: () => ({}) });
  expect(() => limited({ most: -1 })).toThrow(/^layer limited: most: Too small/);
});

test.describe('attachRun', () => {
  test('attaches a valid run for the reporter', async ({}, testInfo) => {
    const run = attachedRunRecord();
    await attachRun(testInfo, run);
    const attachment = testInfo.attachments.find((entry) => entry.name === HARNESS_RUN_ATTACHMENT)!;
    expect(runRecordSchema.parse(JSON.parse(attachment.body!.toString()))).toEqual(run);
  });

  test('refuses a record that is not a run, in one line naming the field', async ({}, testInfo) => {
    const { claimed: _, ...noClaim } = attachedRunRecord();
    const error = await attachRun(testInfo, noClaim as AttachedRunRecord).then(() => undefined, (caught: unknown) => caught as Error);
    expect(error?.message).toMatch(/^attachRun: harness-run\.json: claimed: /);
    expect(testInfo.attachments.some((entry) => entry.name === HARNESS_RUN_ATTACHMENT)).toBe(false);
  });
});

test.describe('in a Playwright run of its own', () => {
  test.describe.configure({ timeout: 240_000 });
  let results: Array<{ title: string; result: any }>;
  let reports: string;
  const runOf = (title: string, index = 0) => {
    const results_ = results.filter((entry) => entry.title === title);
    const attachment = results_[index]!.result.attachments.find((entry: { name: string }) => entry.name === HARNESS_RUN_ATTACHMENT);
    return JSON.parse(Buffer.from(attachment.body, 'base64').toString()) as AttachedRunRecord & { trace: Array<{ type: string; data?: { calls: number } }> };
  };

  test.beforeAll(async () => {
    test.setTimeout(240_000);
    const { env } = workspace('harness-eval-extend-');
    const child = await playwright(['test', '-c', 'tests/fixtures/extend/playwright.config.ts'], env);
    expect(child.code, child.stdout).toBe(0);
    results = collect(JSON.parse(readFileSync(env.JSON_OUT, 'utf8')));
    reports = env.REPORT_DIR;
  });

  test('a stack of two values runs, and records the condition of the same stack by name', () => {
    const [asValues, byName] = results.filter((entry) => entry.title === 'retry and verify').map((_, index) => runOf('retry and verify', index));
    expect(asValues!.layers).toBe('retry+verify');
    expect(asValues!.condition.layers).toEqual([
      { name: 'retry', options: { attempts: 3 } },
      { name: 'verify', options: {} },
    ]);
    expect(byName!.condition).toEqual(asValues!.condition);
    expect(byName!.layers).toBe(asValues!.layers);
  });

  test("docs/layers.md's example: a stateful layer is fresh in each of two tests in one worker; its tool and events work", () => {
    for (const trial of [1, 2]) {
      const run = runOf(`trial ${trial}: the counter starts afresh`);
      expect(run).toMatchObject({ claimed: true, actual: true, layers: 'login+verify+retry+call-counter' });
      expect(run.trace.filter((event) => event.type === 'custom').map((event) => event.data!.calls)).toEqual(Array.from({ length: run.iterations }, (_, index) => index + 1));
    }
  });

  test("the reporter counts a user's attached run beside the harness's", () => {
    const summary = readSummary(reports);
    expect(summary.recorded).toBe(5);
    expect(summary.cells.find((cell) => cell.agent === 'my-agent')).toMatchObject({ runs: 1, successes: 1 });
    expect(summary.cells.find((cell) => cell.layers === 'retry+verify')).toMatchObject({ runs: 2 });
  });

  test("docs/layers.md's extending example is the code that runs here", () => {
    const example = readFileSync(join(import.meta.dirname, 'fixtures/extend/extend.run.ts'), 'utf8');
    expect(readFileSync(join(import.meta.dirname, '../docs/layers.md'), 'utf8')).toContain(`\`\`\`ts\n${example}\`\`\``);
  });
});
