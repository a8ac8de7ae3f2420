import type { Project } from '@playwright/test';
import { z } from 'zod';
import type { Agent } from '../core/agent.ts';
import { InputError, parseInput } from '../input.ts';
import { resolveLayers, type LayerSpec } from '../layers/index.ts';
import { freemem } from 'node:os';
import { DEFAULT_CONCURRENCY } from '../models/options.ts';
import { modelId, modelUnavailable, parseModelSpec, type ModelSpec } from '../models/registry.ts';
import { surfaceSchema, type Surface } from '../harness/surface.ts';
import type { SiteFactory } from '../sites/hn/site.ts';
import { layersCondition, modelCondition, stackName } from './condition.ts';
import './doubles.ts';
import type { HarnessOptions } from './fixtures.ts';
import { callerLocation, declareMatrix } from './plain-cells.ts';

/** The dimensions of a matrix: every model × (every layer stack on every surface, and every agent) × every site. */
export interface CellOptions {
  /** Models, named (`{ 'mini-t0': { id: 'openai:gpt-4o-mini', temperature: 0 } }`: the cells say `mini-t0`) or not (named by their id). */
  models: Record<string, ModelSpec> | readonly ModelSpec[];
  /** The built-in harness's layer stacks, named (`{ bare: [], verified: ['guardrails', 'verify'] }`) or not; without it, only `agents` run. */
  layers?: Record<string, readonly LayerSpec[]> | ReadonlyArray<readonly LayerSpec[]>;
  /**
   * How the built-in harness's model reaches the browser (`{ cdp: 'cdp', mcp: 'mcp' }`, or
   * `['cdp', 'mcp']`): each layer stack runs on each, named `model · stack · surface`; by default
   * on `cdp` alone, unnamed. Other agents reach the browser their own way: they run once.
   */
  surfaces?: Record<string, Surface> | readonly Surface[];
  /** Other agents (`functionAgent`, `commandAgent`, controls), named or not: each runs with every model and site, without layers. A record's keys name the agents' cells. */
  agents?: Record<string, Agent> | readonly Agent[];
  /** Sites, named or not: a record's keys name the sites' cells; by default the site option's own default (the recorded HN). */
  sites?: Record<string, SiteFactory> | readonly SiteFactory[];
}

export interface MatrixOptions extends CellOptions {
  /** Anything else the matrix's project has (name, by default `matrix`; testDir, testMatch, timeout, use). */
  project?: Project<HarnessOptions>;
}

/** One cell of a matrix: its name, and the options it puts in use (a `test.use` in the describe block named by it). */
export interface Cell {
  name: string;
  use: Partial<HarnessOptions>;
}

/** Selects cells by name, for a run of part of a matrix (`--project` selected a cell when cells were projects): comma-separated, each a cell's whole name. */
export const CELLS_ENV = 'HARNESS_CELLS';

/** The cells HARNESS_CELLS names; none when it is unset or blank (every cell). */
export function selectedCells(env: NodeJS.ProcessEnv = process.env): string[] {
  return env[CELLS_ENV]?.split(',').map((name) => name.trim()).filter(Boolean) ?? [];
}

const siteSchema = z.object({
  name: z.string().min(1),
  condition: z.record(z.string(), z.unknown()),
  create: z.custom<SiteFactory['create']>((value) => typeof value === 'function', 'expected a function (a site from hn.recorded() or hn.live())'),
});

const agentSchema = z.object({
  name: z.string().min(1),
  condition: z.record(z.string(), z.unknown()),
  run: z.custom<Agent['run']>((value) => typeof value === 'function', 'expected a function (an agent from functionAgent(), commandAgent() or a control)'),
});

/**
 * The cells of a matrix, one per model × layer stack (`model · layer-stack`, then `· surface` when
 * surfaces are given) and per agent × model (`agent · model`), times each site (`· site` when there
 * are several). Every agent, model, layer, surface and site is checked here, when the config or the
 * spec loads; two entries under one name are an error naming both: name them with a record. A spec
 * declares them as describe blocks of one project (`matrix()`'s), so its workers start once, not
 * once per cell (docs/performance.md):
 * `for (const cell of cells(options)) test.describe(cell.name, () => { test.use(cell.use); test(…) })`.
 * HARNESS_CELLS (comma-separated names) keeps only the cells it names.
 */
export function cells(options: CellOptions, env: NodeJS.ProcessEnv = process.env): Cell[] {
  const all = allCells(options);
  const wanted = selectedCells(env);
  if (wanted.length === 0) return all;
  const unknown = wanted.filter((name) => !all.some((cell) => cell.name === name));
  if (unknown.length > 0) throw new InputError(`${CELLS_ENV}: no cell named ${unknown.map((name) => `"${name}"`).join(', ')} (the cells: ${all.map((cell) => cell.name).join(', ')})`);
  return all.filter((cell) => wanted.includes(cell.name));
}

function allCells({ models, layers, surfaces, agents, sites }: CellOptions): Cell[] {
  if (layers === undefined && agents === undefined) throw new InputError('matrix(): give layers (stacks of the built-in harness), agents, or both');
  const modelList = named('models', models, (model) => void parseModelSpec(model), modelId, modelCondition);
  const stacks = named('layers', layers ?? [], (stack) => void resolveLayers(parseInput(z.array(z.unknown()), stack, 'layers') as LayerSpec[]), stackName, layersCondition);
  const surfaceList: Array<[string, Surface] | undefined> = surfaces === undefined ? [undefined] : named('surfaces', surfaces, (surface) => void parseInput(surfaceSchema, surface, 'surface'), (surface) => surface, (surface) => surface);
  const agentList = named('agents', agents ?? [], (agent) => void parseInput(agentSchema, agent, 'agent'), (agent) => agent.name, (agent) => agent.condition);
  const siteList: Array<SiteFactory | undefined> =
    sites === undefined
      ? [undefined]
      : named('sites', sites, (site) => void parseInput(siteSchema, site, 'site'), (site) => site.name, (site) => site.condition).map(([name, site]) => ({ ...site, name }));
  const siteName = (site: SiteFactory | undefined) => (siteList.length > 1 && site ? [site.name] : []);
  return modelList.flatMap(([modelName, model]) => [
    ...stacks.flatMap(([stack, stackLayers]) =>
      surfaceList.flatMap((surface) =>
        siteList.map((site) => {
          const name = [modelName, stack, ...(surface ? [surface[0]] : []), ...siteName(site)].join(' · ');
          return { name, use: { cell: name, model, modelName, layers: stackLayers, layerStack: stack, ...(surface && { surface: surface[1] }), ...(site && { site }) } };
        }),
      ),
    ),
    ...agentList.flatMap(([agentName, agent]) =>
      // Named by the key the user gave it: the cells say `py`, not the script's file name.
      siteList.map((site) => {
        const name = [agentName, modelName, ...siteName(site)].join(' · ');
        return { name, use: { cell: name, model, modelName, agent: { ...agent, name: agentName }, layers: [], layerStack: undefined, ...(site && { site }) } };
      }),
    ),
  ]);
}

/**
 * The one Playwright project a matrix runs in (named `matrix` unless `project.name` says): its
 * specs declare the cells as describe blocks (`cells()`, as above), so its workers start once per
 * run, where a project per cell started them again for every cell. A test of this project outside
 * every cell fails in one line saying so: it would run the default model, not the matrix's.
 * `--repeat-each N` gives N trials per cell; `--grep` or HARNESS_CELLS selects cells.
 */
export function matrix({ project = {}, ...options }: MatrixOptions): Project<HarnessOptions>[] {
  const name = project.name ?? 'matrix';
  const selected = cells(options);
  // Its plain specs' tests are declared in each cell (plain-cells.ts).
  declareMatrix({ ...project, name }, selected, callerLocation()?.file);
  return [{ ...project, name, use: { ...project.use, matrix: { project: name, cells: selected.map((cell) => cell.name) } } }];
}

/**
 * What a run in flight is taken to cost in memory, when `HARNESS_RUN_MEMORY_MB` does not say: its
 * share of a worker (a Node process, about 250 MB) and its own browser context and site (about
 * 50 MB), as `npm run bench:latency` measured them (docs/performance.md).
 */
export const MEMORY_MB = { worker: 250, run: 50 } as const;

/** The key of the config's `metadata` under which `matrixWorkers()` says why, for the report's header. */
export const WORKERS_METADATA = 'harness-eval workers';

/** Config fields, to spread into `defineConfig({ ...matrixWorkers(options), … })`. */
export interface MatrixWorkers {
  /** The config's `workers`: undefined keeps Playwright's default (half the cores), for offline doubles. */
  workers: number | undefined;
  /** Why, in one line (`min(the endpoints' concurrency …, … MB free / 150 MB a run = …)`): the report's header states it beside the number. */
  metadata: { [WORKERS_METADATA]: string };
}

/**
 * How many runs of a matrix to keep in flight: with real models (openai:, ollama:; not replayed
 * from cassettes), the endpoints' limits, min(the sum over the models of their `concurrency`, free
 * memory / memory per run), since such runs mostly wait on their endpoint, in workers of `trials`
 * runs each (a spec's `harness.trials(task, trials)`; by default 1); with offline doubles only (or
 * every real model replayed or unavailable here), none: the CPU-bound default stays.
 */
export function matrixWorkers(
  { models, trials = 1 }: Pick<CellOptions, 'models'> & { trials?: number },
  env: NodeJS.ProcessEnv = process.env,
  memory: { freeBytes?: number; runMb?: number } = {},
): MatrixWorkers {
  const cacheMode = env.HARNESS_MODEL_CACHE === 'replay' ? 'replay' : 'off';
  const limits = new Map<string, number>();
  for (const model of Object.values(models)) {
    const id = modelId(model);
    if (id.startsWith('scripted:') || cacheMode === 'replay' || modelUnavailable(model, env) !== undefined) continue;
    const concurrency = (typeof model === 'string' ? undefined : model.concurrency) ?? DEFAULT_CONCURRENCY;
    // One model at one endpoint holds one set of slots, whatever its sampling options.
    limits.set(id, Math.max(limits.get(id) ?? 0, concurrency));
  }
  parseInput(z.number().int().positive(), trials, 'matrixWorkers() trials');
  if (limits.size === 0) return { workers: undefined, metadata: { [WORKERS_METADATA]: 'the CPU-bound default (offline doubles, or every real model replayed or unavailable)' } };
  const endpoints = [...limits.values()].reduce((a, b) => a + b, 0);
  const runMb = memory.runMb ?? (Number(env.HARNESS_RUN_MEMORY_MB) || Math.round(MEMORY_MB.worker / trials + MEMORY_MB.run));
  const freeMb = (memory.freeBytes ?? freemem()) / 2 ** 20;
  const byMemory = Math.max(1, Math.floor(freeMb / runMb));
  const inFlight = Math.min(endpoints, byMemory);
  const why = `min(the endpoints' concurrency ${[...limits].map(([id, c]) => `${id} ${c}`).join(' + ')} = ${endpoints}, ${Math.round(freeMb)} MB free / ${runMb} MB a run = ${byMemory}) runs in flight`;
  const workers = Math.max(1, Math.ceil(inFlight / trials));
  return { workers, metadata: { [WORKERS_METADATA]: trials === 1 ? why : `${why}, ${trials} trials a test: ${workers} workers` } };
}

export const layerPlanKinds = ['nested', 'leave-one-out'] as const;
export type LayerPlanKind = (typeof layerPlanKinds)[number];

/**
 * Layer stacks whose neighbours differ by one layer, so the report measures what each layer buys
 * (`matrix({ layers: layerPlan('nested', ['guardrails', 'verify', 'login']) })`): `nested` adds
 * the layers one at a time, in order (`bare`, `guardrails`, `guardrails+verify`, …);
 * `leave-one-out` is the whole stack and the stack without each layer. Each stack is named by its
 * layers, as any unnamed stack is.
 */
export function layerPlan(kind: LayerPlanKind, layers: readonly LayerSpec[]): Record<string, LayerSpec[]> {
  parseInput(z.enum(layerPlanKinds), kind, 'layerPlan() kind');
  const all = [...parseInput(z.array(z.unknown()).min(1), layers, 'layerPlan() layers')] as LayerSpec[];
  const stacks = kind === 'nested' ? all.map((_, index) => all.slice(0, index)).concat([all]) : [all, ...all.map((_, index) => all.filter((__, other) => other !== index))];
  const plan: Record<string, LayerSpec[]> = {};
  for (const stack of stacks) {
    const name = stackName(stack);
    // Two layers of one name (`retry` twice, with other options) would make two stacks of one name: the report could not tell them apart.
    if (Object.hasOwn(plan, name)) throw new InputError(`layerPlan(): two stacks would both be named "${name}": give each layer once, or name the stacks yourself`);
    plan[name] = stack;
  }
  return plan;
}

/**
 * A dimension's entries by name (a record's keys, or each entry's own name, which must then be
 * unique), each checked first: a bad one is one line naming where it is.
 */
function named<T>(
  dimension: string,
  entries: Record<string, T> | readonly T[],
  check: (entry: T) => void,
  nameOf: (entry: T) => string,
  condition: (entry: T) => unknown,
): Array<[string, T]> {
  const list = Array.isArray(entries)
    ? (entries as readonly T[]).map((entry, index) => [`${dimension}[${index}]`, entry] as const)
    : Object.entries(entries as Record<string, T>).map(([name, entry]) => [`${dimension}.${name}`, entry] as const);
  for (const [where, entry] of list) {
    try {
      check(entry);
    } catch (error) {
      throw error instanceof InputError ? new InputError(`matrix(): ${where}: ${error.message}`) : error;
    }
  }
  if (!Array.isArray(entries)) return Object.entries(entries as Record<string, T>);
  const byName = list.map(([, entry]) => [nameOf(entry), entry] as [string, T]);
  byName.forEach(([name, entry], index) => {
    const first = byName.findIndex(([other]) => other === name);
    if (first === index) return;
    throw new InputError(
      `matrix(): ${dimension}[${first}] and ${dimension}[${index}] are both named "${name}" (${JSON.stringify(condition(byName[first]![1]))} and ${JSON.stringify(condition(entry))}): name each, ${dimension}: { "${name}-a": …, "${name}-b": … }`,
    );
  });
  return byName;
}
