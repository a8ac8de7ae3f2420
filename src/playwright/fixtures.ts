import { dirname } from 'node:path';
import { test as base, type TestInfo } from '@playwright/test';
import type { Postcondition } from '../eval/postconditions.ts';
import type { Task } from '../eval/tasks.ts';
import type { LayerSpec } from '../layers/index.ts';
import { resolveModelCache, type ModelCacheOptions } from '../models/cassette.ts';
import { modelId, modelUnavailable, type ModelSpec } from '../models/registry.ts';
import type { ReportedRun } from '../report/types.ts';
import { recorded, type SiteFactory } from '../sites/hn/site.ts';
import { InputError } from '../input.ts';
import { recordInAllure } from './allure.ts';
import { evaluateHarness, type RunRecord } from './evaluate.ts';

/** What a spec asks of a run: a task (or a prompt with its postconditions), and an iteration cap. */
export type RunRequest = (Task | { task: string; postconditions: Postcondition[]; name?: string }) & { maxIterations?: number };

export interface Harness {
  run(request: RunRequest): Promise<RunRecord>;
}

export interface HarnessOptions {
  model: ModelSpec;
  layers: readonly LayerSpec[];
  /** The layer stack's name in reports; by default the layer names joined with `+`, or `bare`. */
  layerStack: string | undefined;
  site: SiteFactory;
  /** Attach a screenshot of the agent's page after every iteration. */
  harnessScreenshots: boolean;
  /**
   * Record openai:/ollama: traffic as cassettes or replay it: `{ mode: 'record' | 'replay' | 'off', dir }`
   * (default off, `fixtures/cassettes` beside the config file). HARNESS_MODEL_CACHE overrides the mode.
   */
  modelCache: ModelCacheOptions;
}

export const HARNESS_RUN_ATTACHMENT = 'harness-run.json';
/** Attached when a run starts: a run whose worker dies before it ends is still counted, as incomplete. */
export const HARNESS_RUN_START_ATTACHMENT = 'harness-run-start.json';

/**
 * Playwright's test with a harness: `model`, `layers` and `site` are options (set by `test.use`
 * or a project's `use`), and `harness.run()` runs the agent in Playwright's own `context`, so
 * `--trace on` records what the agent did. Each iteration is a step; the run is attached.
 */
export const test = base.extend<HarnessOptions & { harness: Harness }>({
  model: ['scripted:diligent', { option: true }],
  layers: [[], { option: true }],
  layerStack: [undefined, { option: true }],
  site: [recorded(), { option: true }],
  harnessScreenshots: [false, { option: true }],
  modelCache: [{}, { option: true }],
  harness: async ({ model, layers, layerStack, site, harnessScreenshots, modelCache, context }, use, testInfo) => {
    if (!Array.isArray(layers)) {
      throw new InputError(
        `layers: expected a list of layers, got ${JSON.stringify(layers)}. Playwright reads a two-item list whose second item is an object as [value, options]: write test.use({ layers: [[...your layers], { scope: 'test' }] }).`,
      );
    }
    // Relative to the config file's folder, as Playwright's own paths are.
    const cache = resolveModelCache(modelCache, testInfo.config.configFile ? dirname(testInfo.config.configFile) : process.cwd());
    const unavailable = modelUnavailable(model, process.env, cache.mode);
    testInfo.skip(unavailable !== undefined, unavailable);
    const siteUnavailable = site.unavailable?.();
    testInfo.skip(siteUnavailable !== undefined, siteUnavailable);
    const stack = layerStack ?? stackName(layers);
    let runs = 0;
    await use({
      async run(request) {
        const task = toTask(request);
        runs += 1;
        const record = await evaluateHarness({
          context,
          site: site.create(),
          model,
          layers,
          task,
          maxIterations: request.maxIterations,
          modelCache: { ...cache, run: cassetteRunName(testInfo, runs), repeatIndex: testInfo.repeatEachIndex },
          onIteration: (title, actions) =>
            base.step(title, async () => {
              await actions();
              const page = context.pages().at(-1);
              if (harnessScreenshots && page) await testInfo.attach(`${title}.png`, { body: await page.screenshot(), contentType: 'image/png' });
            }),
        });
        const reported: ReportedRun & Omit<RunRecord, keyof ReportedRun> & { prompt: string; layerNames: string[] } = {
          ...record,
          prompt: task.prompt,
          layerNames: record.layers,
          task: task.name,
          model: modelId(model),
          layers: stack,
          site: site.name,
          condition: { model, layers: stack, site: site.name },
          unsupportedClaim: record.trace.some((event) => event.type === 'harness_evidence' && !event.ok),
          test: { id: testInfo.testId, title: testInfo.titlePath.slice(1).join(' › '), project: testInfo.project.name, repeatEachIndex: testInfo.repeatEachIndex, retry: testInfo.retry, run: runs },
        };
        await testInfo.attach(HARNESS_RUN_ATTACHMENT, { body: JSON.stringify(reported), contentType: 'application/json' });
        await recordInAllure(testInfo, reported);
        return record;
      },
    });
  },
});

export function stackName(layers: readonly LayerSpec[]): string {
  if (layers.length === 0) return 'bare';
  return layers.map((layer) => (typeof layer === 'string' ? layer : Array.isArray(layer) ? layer[0] : (layer as { name: string }).name)).join('+');
}

/** The test (its project is the matrix cell) and, past the first, the run's number in it: what tells its cassette from others'. */
function cassetteRunName(testInfo: TestInfo, run: number): string {
  return [testInfo.project.name, ...testInfo.titlePath].filter(Boolean).join(' › ') + (run > 1 ? ` #${run}` : '');
}

function toTask(request: RunRequest): Task {
  if ('prompt' in request) return request;
  const name = request.name ?? request.task.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '').slice(0, 60);
  return { name, prompt: request.task, postconditions: request.postconditions };
}
