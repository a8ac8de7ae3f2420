import { test } from '@playwright/test';
import { cells, hn, layerPlan, matrix, matrixWorkers, type Agent } from '../src/index.ts';
import { WORKERS_METADATA } from '../src/playwright/matrix.ts';
import { renderMarkdown } from '../src/report/files.ts';
import { summarize } from '../src/report/summarize.ts';
import { evaluate } from '../src/eval/evaluate.ts';
import { doubleNames } from '../src/models/scripted/endpoint.ts';
import { upvoteFirstPost } from '../src/sites/hn/suite.ts';
import { recordedHn } from '../src/sites/hn/site.ts';
import { playwright } from './playwright-child.ts';
import { expect } from './support.ts';

test('cells: a cell per model × layer stack, named, with the options in use', () => {
  const cellList = cells({
    models: ['scripted:overclaimer', { id: 'openai:gpt-4o-mini', temperature: 0 }],
    layers: { bare: [], verified: ['guardrails', 'verify'] },
  });
  expect(cellList.map((cell) => cell.name)).toEqual([
    'scripted:overclaimer · bare',
    'scripted:overclaimer · verified',
    'openai:gpt-4o-mini · bare',
    'openai:gpt-4o-mini · verified',
  ]);
  expect(cellList[1]).toMatchObject({ use: { model: 'scripted:overclaimer', layers: ['guardrails', 'verify'], layerStack: 'verified' } });
  expect(cellList[3]!.use!.model).toEqual({ id: 'openai:gpt-4o-mini', temperature: 0 });
});

test('layerPlan: nested and leave-one-out stacks, named by their layers, for matrix(); bad input in one line', () => {
  expect(layerPlan('nested', ['guardrails', 'verify', 'login'])).toEqual({ bare: [], guardrails: ['guardrails'], 'guardrails+verify': ['guardrails', 'verify'], 'guardrails+verify+login': ['guardrails', 'verify', 'login'] });
  expect(layerPlan('leave-one-out', ['guardrails', 'verify', 'login'])).toEqual({ 'guardrails+verify+login': ['guardrails', 'verify', 'login'], 'verify+login': ['verify', 'login'], 'guardrails+login': ['guardrails', 'login'], 'guardrails+verify': ['guardrails', 'verify'] });
  const cellList = cells({ models: ['scripted:diligent'], layers: layerPlan('nested', ['verify', ['retry', { attempts: 3 }]]) });
  expect(cellList.map((cell) => cell.name)).toEqual(['scripted:diligent · bare', 'scripted:diligent · verify', 'scripted:diligent · verify+retry']);
  expect(cellList[2]!.use!.layers).toEqual(['verify', ['retry', { attempts: 3 }]]);
  expect(() => layerPlan('pairs' as never, ['verify'])).toThrow(/^layerPlan\(\) kind: .*"nested"\|"leave-one-out"/);
  expect(() => layerPlan('nested', [])).toThrow("layerPlan() layers: (options): Too small: expected array to have >=1 items");
  expect(() => layerPlan('nested', ['verfiy' as never])).toThrow(/verfiy/);
  expect(() => layerPlan('leave-one-out', ['retry', ['retry', { attempts: 5 }]])).toThrow('layerPlan(): two stacks would both be named "retry": give each layer once, or name the stacks yourself');
});

test('cells: unnamed stacks are named by their layers; several sites add a third part', () => {
  const cellList = cells({
    models: ['scripted:diligent'],
    layers: [[], ['verify', ['retry', { attempts: 3 }]]],
    sites: { plain: hn.recorded(), injected: hn.recorded({ faults: { injection: { rank: 2 } } }) },
  });
  expect(cellList.map((cell) => cell.name)).toEqual([
    'scripted:diligent · bare · plain',
    'scripted:diligent · bare · injected',
    'scripted:diligent · verify+retry · plain',
    'scripted:diligent · verify+retry · injected',
  ]);
  expect(cellList[1]!.use!.site!.name).toBe('injected');
  expect((cellList[1]!.use!.site!.create() as ReturnType<typeof recordedHn>).replica.options.faults.injection).toMatchObject({ rank: 2 });
});

test('hn.recorded checks its options when a config names the site', () => {
  expect(() => hn.recorded({ faults: { errorRate: 2 } })).toThrow(/faults\.errorRate/);
});

test('matrix: a bad model, layer or site fails once, as the config loads, in one line naming where it is', () => {
  const layers = { bare: [] };
  expect(() => matrix({ models: ['scripted:diligent', 'scripted:genius'], layers })).toThrow(/^matrix\(\): models\[1\]: model scripted:genius: unknown scripted double "genius" \(accepted: [^)]+\)$/);
  expect(() => matrix({ models: [{ id: 'openai:gpt-4o-mini', temperature: 'hot' as never }], layers })).toThrow(/^matrix\(\): models\[0\]: model: temperature: .+$/);
  expect(() => matrix({ models: ['scripted:diligent'], layers: { verified: ['guardrails', 'telepathy' as never] } })).toThrow(/^matrix\(\): layers\.verified: layers\[1\]: unknown layer "telepathy" \(accepted: [^)]+\)$/);
  expect(() => matrix({ models: ['scripted:diligent'], layers: { retrying: [['retry', { tries: 3 }] as never] } })).toThrow(/^matrix\(\): layers\.retrying: layer retry: \(options\): Unrecognized key: "tries"$/);
  expect(() => matrix({ models: ['scripted:diligent'], layers: { broken: 'verify' as never } })).toThrow(/^matrix\(\): layers\.broken: layers: .+$/);
  expect(() => matrix({ models: ['scripted:diligent'], layers, sites: { plain: { name: 'plain' } as never } })).toThrow(/^matrix\(\): sites\.plain: site: condition: .+; create: .+$/);
});

test('matrix: a config with a bad model stops as it loads, with that one line and no test run', async () => {
  const child = await playwright(['test', '-c', 'tests/fixtures/fixture/bad-matrix.config.ts'], {});
  expect(child.code).not.toBe(0);
  // Every registered double is named, the site kits' included (the list grows with them).
  expect(child.stdout.trim()).toBe(`[InputError: matrix(): models[1]: model scripted:genius: unknown scripted double "genius" (accepted: ${doubleNames().join(', ')})]`);
});

test('matrix: two entries of one name are an error naming both; named, they are two cells', () => {
  const injected = hn.recorded({ faults: { injection: { rank: 2 } } });
  const flaky = hn.recorded({ faults: { errorRate: 0.5 } });
  expect(() => matrix({ models: ['scripted:diligent'], layers: { bare: [] }, sites: [injected, flaky] })).toThrow(
    /^matrix\(\): sites\[0\] and sites\[1\] are both named "hn-recorded-custom" \(\{.*"injection".*\} and \{.*"errorRate":0\.5.*\}\): name each, sites: \{ "hn-recorded-custom-a": …, "hn-recorded-custom-b": … \}$/,
  );
  expect(() => matrix({ models: ['scripted:diligent'], layers: [[['retry', { attempts: 2 }]], [['retry', { attempts: 3 }]]] })).toThrow(/^matrix\(\): layers\[0\] and layers\[1\] are both named "retry"/);
  expect(() => matrix({ models: [{ id: 'openai:gpt-4o-mini', temperature: 0 }, { id: 'openai:gpt-4o-mini', temperature: 1 }], layers: { bare: [] } })).toThrow(/^matrix\(\): models\[0\] and models\[1\] are both named "openai:gpt-4o-mini"/);

  const cellList = cells({
    models: { 'mini-t0': { id: 'openai:gpt-4o-mini', temperature: 0 }, 'mini-t1': { id: 'openai:gpt-4o-mini', temperature: 1 } },
    layers: { bare: [] },
    sites: { injected, flaky },
  });
  expect(cellList.map((cell) => cell.name)).toEqual(['mini-t0 · bare · injected', 'mini-t0 · bare · flaky', 'mini-t1 · bare · injected', 'mini-t1 · bare · flaky']);
  expect(cellList[2]!.use!.model).toEqual({ id: 'openai:gpt-4o-mini', temperature: 1 });
});

test('cells: agents run beside the built-in stacks, one cell per agent × model (× site), without layers; a bad agent is one line', () => {
  const mine: Agent = { name: 'mine', condition: { agent: 'function' }, run: () => Promise.reject(new Error('not run here')) };
  const cellList = cells({ models: ['scripted:diligent', 'scripted:overclaimer'], layers: { bare: [] }, agents: [mine] });
  expect(cellList.map((cell) => cell.name)).toEqual(['scripted:diligent · bare', 'mine · scripted:diligent', 'scripted:overclaimer · bare', 'mine · scripted:overclaimer']);
  expect(cellList[1]!.use).toMatchObject({ agent: mine, model: 'scripted:diligent', layers: [], layerStack: undefined });
  expect(cells({ models: ['scripted:diligent'], agents: { yours: mine } }).map((project) => project.name)).toEqual(['yours · scripted:diligent']);
  expect(() => matrix({ models: ['scripted:diligent'], agents: [{ name: 'half' } as never] })).toThrow(/^matrix\(\): agents\[0\]: agent: condition: .+; run: .+$/);
  expect(() => matrix({ models: ['scripted:diligent'] })).toThrow(/^matrix\(\): give layers/);
});

test('evaluate: layers belong to the built-in harness; another agent given layers is one line, before any page opens', async () => {
  const mine: Agent = { name: 'mine', condition: {}, run: () => Promise.reject(new Error('never started')) };
  const run = evaluate({ context: undefined as never, site: recordedHn(), agent: mine, model: 'scripted:diligent', layers: ['verify'], task: upvoteFirstPost });
  await expect(run).rejects.toThrow(/^layers: only harness-eval's own harness runs layers; the agent mine was given 1 \(set layers: \[\] beside the agent\)$/);
});

test('matrixWorkers: real models set the runs in flight by their endpoints and memory; offline doubles keep the CPU-bound default', () => {
  const env = { OPENAI_API_KEY: 'sk-test', OLLAMA_HOST: 'http://127.0.0.1:11434' };
  const plenty = { freeBytes: 16 * 2 ** 30, runMb: 150 };
  // Doubles only, or real models without their key, or replayed: CPU-bound, Playwright's default.
  expect(matrixWorkers({ models: ['scripted:diligent', 'scripted:overclaimer'] }, env, plenty).workers).toBeUndefined();
  expect(matrixWorkers({ models: ['openai:gpt-4o-mini'] }, {}, plenty).workers).toBeUndefined();
  expect(matrixWorkers({ models: ['openai:gpt-4o-mini'] }, { ...env, HARNESS_MODEL_CACHE: 'replay' }, plenty).workers).toBeUndefined();
  // The sum of the endpoints' concurrency (default 4 each; one model at two temperatures holds one endpoint's slots).
  const real = matrixWorkers({ models: { a: { id: 'openai:gpt-4o-mini', concurrency: 8 }, b: { id: 'openai:gpt-4o-mini', temperature: 1, concurrency: 8 }, c: 'ollama:llama3.1', d: 'scripted:diligent' } }, env, plenty);
  expect(real).toEqual({ workers: 12, metadata: { [WORKERS_METADATA]: "min(the endpoints' concurrency openai:gpt-4o-mini 8 + ollama:llama3.1 4 = 12, 16384 MB free / 150 MB a run = 109) runs in flight" } });
  // Trials a test keeps in flight (harness.trials): fewer workers for as many runs, and each run's share of a worker is smaller.
  expect(matrixWorkers({ models: [{ id: 'openai:gpt-4o-mini', concurrency: 32 }], trials: 8 }, env, { freeBytes: 16 * 2 ** 30 })).toEqual({
    workers: 4,
    metadata: { [WORKERS_METADATA]: "min(the endpoints' concurrency openai:gpt-4o-mini 32 = 32, 16384 MB free / 81 MB a run = 202) runs in flight, 8 trials a test: 4 workers" },
  });
  expect(matrixWorkers({ models: [{ id: 'openai:gpt-4o-mini', concurrency: 32 }] }, env, { freeBytes: 3000 * 2 ** 20 }).workers).toBe(10);
  expect(() => matrixWorkers({ models: ['openai:gpt-4o-mini'], trials: 0 }, env)).toThrow(/^matrixWorkers\(\) trials: /);
  // Memory caps it, at one at least.
  expect(matrixWorkers({ models: [{ id: 'openai:gpt-4o-mini', concurrency: 64 }] }, env, { freeBytes: 1500 * 2 ** 20, runMb: 150 }).workers).toBe(10);
  expect(matrixWorkers({ models: [{ id: 'openai:gpt-4o-mini', concurrency: 64 }] }, env, { freeBytes: 2 ** 20, runMb: 150 }).workers).toBe(1);
  expect(matrixWorkers({ models: [{ id: 'openai:gpt-4o-mini', concurrency: 64 }] }, { ...env, HARNESS_RUN_MEMORY_MB: '500' }, { freeBytes: 1500 * 2 ** 20 }).workers).toBe(3);
});

test("the report's header states the runs in flight and why: matrixWorkers()'s reason, put in the config's metadata", () => {
  const sizing = matrixWorkers({ models: [{ id: 'openai:gpt-4o-mini', concurrency: 8 }] }, { OPENAI_API_KEY: 'sk-test' }, { freeBytes: 16 * 2 ** 30, runMb: 150 });
  const summary = summarize([], { complete: true, workers: { count: sizing.workers!, why: sizing.metadata[WORKERS_METADATA] } });
  expect(renderMarkdown(summary)).toContain("0 runs of 0 planned in 0 cells · 8 workers (min(the endpoints' concurrency openai:gpt-4o-mini 8 = 8, 16384 MB free / 150 MB a run = 109) runs in flight) · ");
  expect(renderMarkdown(summarize([], { complete: true, workers: { count: 1 } }))).toContain('0 runs of 0 planned in 0 cells · 1 worker · ');
  expect(renderMarkdown(summarize([], { complete: true }))).toContain('0 runs of 0 planned in 0 cells · 0 done');
});
