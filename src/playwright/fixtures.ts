import { dirname } from 'node:path';
import { z } from 'zod';
import { test as base, type BrowserContext, type TestInfo } from '@playwright/test';
import { checkLayersApply } from '../eval/agent.ts';
import type { Agent } from '../core/agent.ts';
import type { Postcondition, Task, TaskInput } from '../core/task.ts';
import { defineTask, taskCondition } from '../eval/tasks.ts';
import { isLayerValue } from '../harness/layer.ts';
import type { LayerSpec } from '../layers/index.ts';
import { resolveModelCache, type ModelCacheOptions } from '../models/cassette.ts';
import { modelId, modelSecrets, modelUnavailable, type ModelSpec } from '../models/registry.ts';
import { withSpendCap } from '../models/spend.ts';
import { WaitClock } from '../models/waits.ts';
import { capRunText } from '../report/caps.ts';
import { runRecordSchema, type PlannedRun, type AttachedRunRecord, type AttachedRunRecordInput, type RunRecord } from '../core/run.ts';
import { redact } from '../harness/trace.ts';
import type { TraceEvent } from '../core/trace.ts';
import { observationTokens } from '../harness/tokens.ts';
import { recorded, type SiteFactory } from '../sites/hn/site.ts';
import { InputError, parseInput } from '../input.ts';
import { recordInAllure } from './allure.ts';
import { followsReference } from './doubles.ts';
import { rehearseOnce } from '../doubles/index.ts';
import { agentFor, DEFAULT_SURFACE, surfaceStackName, type Surface } from '../harness/surface.ts';
import { agentCondition, layersCondition, modelCondition, modelNameInUse, NO_LAYERS, portablePaths, stackNameInUse } from './condition.ts';
import { budgetSpent, parseCostOptions, priced, runCost, runLedger } from './cost.ts';
import { checkedOnce } from './config-errors.ts';
import { checkUseKeys, testFixtures } from './use-keys.ts';
import { givenBackNote, runJournal } from './resume.ts';
import { withBrowserLoss } from './shared-browser.ts';
import { plainCells } from './plain-cells.ts';
import { inOrder } from '../queue.ts';
import type { PriceTable } from '../report/types.ts';
import { ABORT_GRACE_MS, evaluate, NOT_APPLICABLE, runSecrets, TaskNotApplicable, type AbortCause } from '../eval/evaluate.ts';

export { stackName } from './condition.ts';

/** What a spec asks of a run: a task (or a prompt with its postconditions), and an iteration cap. */
export type RunRequest = (TaskInput | { task: string; postconditions: Postcondition[]; name?: string }) & { maxIterations?: number };

export interface Harness {
  /** One run of the task in the test's browser context; runs of one test go one after another. */
  run(request: RunRequest): Promise<RunRecord>;
  /**
   * `count` trials of the task at once, each in a browser context of its own (of the test's
   * browser, with the test's context options), recorded as that many runs of this test: while
   * they wait on their model, a worker keeps them all in flight (docs/nightly.md#sizing-a-nightly-run).
   */
  trials(request: RunRequest, count: number): Promise<RunRecord[]>;
}

/** Set by `matrix()` on its project: its name and its cells'. */
export interface MatrixProject {
  project: string;
  cells: readonly string[];
}

/** Why a test runs outside its project's matrix (a spec that declares no cells, or another matrix's), or undefined when it runs in one of its cells. */
export function outsideMatrix(matrix: MatrixProject | undefined, cell: string | undefined): string | undefined {
  if (!matrix || (cell !== undefined && matrix.cells.includes(cell))) return undefined;
  const declare = "declare its tests with harness-eval's test, which declares them in every cell (docs/nightly.md)";
  return cell === undefined
    ? `matrix(): this test of project "${matrix.project}" runs in none of its cells, so it would measure the default model, not the matrix's: ${declare}`
    : `matrix(): cell "${cell}" is not one of project "${matrix.project}"'s cells (${matrix.cells.join(', ')}): the spec's cells() and the config's matrix() are given other options`;
}

export interface HarnessOptions {
  /**
   * What runs the task: by default harness-eval's own harness with `layers`; or `functionAgent(fn)`,
   * `commandAgent(argv)`, a control (`nopAgent()`, `liarAgent()`, `referenceAgent()`).
   */
  agent: Agent | undefined;
  model: ModelSpec;
  /** The model's name in reports; by default its id (`matrix()` sets a `models` record's key). */
  modelName: string | undefined;
  layers: readonly LayerSpec[];
  /** The layer stack's name in reports; by default the layer names joined with `+`, or `bare`. */
  layerStack: string | undefined;
  /**
   * How the built-in harness's model reaches the browser: `'cdp'` (default), harness-eval's own
   * browser tools; `'mcp'`, Playwright MCP's (docs/surfaces.md). Its runs never pool with another surface's.
   */
  surface: Surface;
  site: SiteFactory;
  /** Attach a screenshot of the agent's page after every iteration. */
  harnessScreenshots: boolean;
  /**
   * Record openai:/ollama: traffic as cassettes or replay it: `{ mode: 'record' | 'replay' | 'off', dir }`
   * (default off, `fixtures/cassettes` beside the config file). HARNESS_MODEL_CACHE overrides the mode.
   */
  modelCache: ModelCacheOptions;
  /**
   * USD per million tokens by model id (`{ 'openai:gpt-4o-mini': { input: 0.15, cachedInput: 0.075, output: 0.6 } }`):
   * each run of a listed model records its `cost`.
   */
  prices: PriceTable | undefined;
  /**
   * A budget in USD for the whole run of Playwright, across its workers. Every model call holds its
   * worst case against it before it goes out: a call that would pass it is refused, and its run ends
   * `limit` (incomplete). Once it could not hold a call as large as one it held, no further run
   * starts; each such test is skipped as not run, "budget spent". Needs `prices` for every model that runs.
   */
  maxCost: number | undefined;
  /**
   * A cap in USD on each run, held before every model call (the gateway's and the built-in
   * harness's): a call whose worst case (its prompt, its output allowance) would pass it is refused,
   * and the run ends `limit` (incomplete). A call the agent abandons still counts. Needs `prices` for the model.
   */
  maxRunCost: number | undefined;
  /** The matrix cell the test runs in: set by a `cells()` cell's `use`. */
  cell: string | undefined;
  /** Set by `matrix()` on its project: a test of it runs in one of these cells. */
  matrix: MatrixProject | undefined;
}

/** Fails a test whose runs errored before their agent did anything: in one line per run, no stack (the record says the rest). */
export class RunErrored extends Error {
  override name = 'RunErrored';

  constructor(runs: readonly string[]) {
    super(`the run errored before its agent did anything, so it is left out of every rate: ${runs.join('; ')}`);
    Object.defineProperty(this, 'stack', { get: () => `${this.name}: ${this.message}`, configurable: true });
  }
}

export const HARNESS_RUN_ATTACHMENT = 'harness-run.json';
/** Attached when a run starts: a run whose worker dies before it ends is still counted, as incomplete. */
export const HARNESS_RUN_START_ATTACHMENT = 'harness-run-start.json';
/**
 * Attached when a run that started threw instead of returning a record (bad input met only once it
 * had started: a corrupt checkpoint or approval store, a program gone): the reporter takes its
 * start back, so the run is not counted, not even as incomplete. The test fails with the error.
 */
export const HARNESS_RUN_VOID_ATTACHMENT = 'harness-run-void.json';

/**
 * Attached by `harness.trials()` before its trials start: the run numbers they will have. A trial
 * the test never got to start (its worker died) is a planned run missing, never one dropped.
 */
export const HARNESS_RUN_PLAN_ATTACHMENT = 'harness-run-plan.json';

/** A command agent's stderr (redacted, capped), as it attaches it; the fixture attaches it just before its run's record, which the reporter pairs it with. */
export const AGENT_STDERR = 'agent-stderr.txt';

/**
 * Playwright's test with a harness: `model`, `layers` and `site` are options (set by `test.use`
 * or a project's `use`), and `harness.run()` runs the agent in Playwright's own `context`, so
 * `--trace on` records what the agent did. Each iteration is a step; the run is attached.
 */
export const test = plainCells(base.extend<HarnessOptions & { harness: Harness }>({
  agent: [undefined, { option: true }],
  model: ['scripted:diligent', { option: true }],
  modelName: [undefined, { option: true }],
  layers: [[], { option: true }],
  layerStack: [undefined, { option: true }],
  surface: [DEFAULT_SURFACE, { option: true }],
  site: [recorded(), { option: true }],
  harnessScreenshots: [false, { option: true }],
  modelCache: [{}, { option: true }],
  prices: [undefined, { option: true }],
  maxCost: [undefined, { option: true }],
  maxRunCost: [undefined, { option: true }],
  cell: [undefined, { option: true }],
  matrix: [undefined, { option: true }],
  // The test's context is a run's browser: it downloads nothing (a download a page starts is refused, reach.ts) and runs no service worker, whose requests no route would see.
  // Still options (a value overrides Playwright's own default and keeps it one): `test.use()` sets them.
  acceptDownloads: false,
  serviceWorkers: 'block',
  harness: async ({ cell, matrix, agent: agentOption, model, modelName, layers, layerStack, surface, site, harnessScreenshots, modelCache, prices: pricesOption, maxCost: maxCostOption, maxRunCost: maxRunCostOption, context, browser }, use, testInfo) => {
    const configDir = testInfo.config.configFile ? dirname(testInfo.config.configFile) : testInfo.config.rootDir;
    // The options are the same for every test of a cell: what is wrong with them fails one test, in one line (config-errors.ts).
    const { cache, prices, maxCost, maxRunCost } = await checkedOnce(testInfo, async () => {
      // A misspelt option first: what follows would read the default in its place.
      const fixtures = await testFixtures(testInfo);
      if (fixtures) checkUseKeys(fixtures, testInfo.project.use, configDir);
      const outside = outsideMatrix(matrix, cell);
      if (outside) throw new InputError(outside);
      if (!Array.isArray(layers)) {
        throw new InputError(
          `layers: expected a list of layers, got ${isLayerValue(layers) ? `the layer ${layers.name}` : JSON.stringify(layers)}. Playwright reads a list whose second item is an object (a ['name', options] pair) as [value, options]: write the layers as values (guardrails({ maxIterations: 8 })), or test.use({ layers: [[...your layers], { scope: 'test' }] }).`,
        );
      }
      // Relative to the config file's folder, as Playwright's own paths are.
      return { cache: resolveModelCache(modelCache, configDir), ...parseCostOptions({ prices: pricesOption, maxCost: maxCostOption, maxRunCost: maxRunCostOption }) };
    });
    const unavailable = modelUnavailable(model, process.env, cache.mode);
    testInfo.skip(unavailable !== undefined, unavailable);
    const siteUnavailable = site.unavailable?.();
    testInfo.skip(siteUnavailable !== undefined, siteUnavailable);
    const costOf = (tokens: Parameters<typeof runCost>[2]) => runCost(prices, modelId(model), tokens) ?? 0;
    const { agent, ledger, journal } = await checkedOnce(testInfo, async () => {
      if (maxCost !== undefined && !priced(prices, modelId(model))) throw new InputError(`maxCost: ${modelId(model)} has no price in prices (a budget counts every run's cost)`);
      if (maxRunCost !== undefined && !priced(prices, modelId(model))) throw new InputError(`maxRunCost: ${modelId(model)} has no price in prices (the cap counts each call's cost)`);
      const chosen = agentFor({ agent: agentOption, surface, layers });
      const ledger = maxCost === undefined ? undefined : runLedger();
      // Each call of a run is held against its caps before it goes out; the spec's maxTokens bounds what a call can output.
      const cap = { maxUsd: maxRunCost, budget: ledger?.budget(maxCost!), maxOutput: typeof model === 'string' ? undefined : model.maxTokens, costOf };
      const agent = maxRunCost === undefined && ledger === undefined ? chosen : withSpendCap(chosen, cap);
      checkLayersApply(agent, layers);
      // A program that is not there: named once here, not in every test that uses the agent.
      await agent.prepare?.();
      return { agent, ledger, journal: runJournal() };
    });
    const stackLayers = agent.layers ? layersCondition(layers) : undefined;
    // Paths relative to the config's folder: runs made in another clone pool into the same cells.
    const condition = portablePaths({ agent: agentCondition(agent), model: modelCondition(model), layers: stackLayers ?? null, site: site.condition }, configDir);
    // A run says the revision of the task it ran: two revisions never pool into one cell.
    const conditionOf = (task: Task) => ({ ...condition, task: taskCondition(task) });
    const stack = stackLayers ? surfaceStackName(stackNameInUse(stackLayers, layerStack, testInfo.project.use as Partial<HarnessOptions>), surface) : NO_LAYERS;
    let runs = 0;
    /** The test's clock stands still while any of its runs waits on its model's endpoint. */
    const testClock = holdTestClock(testInfo);
    /** The attachments the reporter reads in order (a run's start, its stderr and record, a plan) go one at a time: concurrent trials never interleave a pair. */
    const serial = inOrder();
    /** Runs still going: when the test ends under them (a timeout, an exception), they are stopped and recorded here. */
    const inFlight = new Map<AbortController, Promise<unknown>>();
    /** Runs that ended in an error before their agent did anything: the test fails for them, whatever it asserted. */
    const errored: string[] = [];

    /** Not started, not failed: the reporter counts the test as not run, outside every rate. */
    const skipWhenBudgetSpent = () => {
      const spent = ledger && budgetSpent(ledger.spent(), maxCost!);
      if (spent) testInfo.skip(true, spent);
    };

    /** Run `number` of this test, in `runContext`; `budgeted`: the budget was checked for it already (trials check it once for all). */
    const runIn = async (runContext: BrowserContext, { task, maxIterations }: ReturnType<typeof toTask>, number: number, budgeted = false): Promise<RunRecord> => {
      // No secret leaves in a record: a model's options may carry a key (a site's condition holds no password).
      const planned: PlannedRun = redact(
        {
          task: task.name,
          agent: agent.name,
          model: modelNameInUse(model, modelName, testInfo.project.use as Partial<HarnessOptions>),
          layers: stack,
          site: site.name,
          condition: conditionOf(task),
          test: { id: testInfo.testId, title: testInfo.titlePath.slice(1).join(' › '), project: testInfo.project.name, repeatEachIndex: testInfo.repeatEachIndex, retry: testInfo.retry, run: number },
        },
        modelSecrets(),
      );
      // Resumed: a run recorded by an earlier invocation is given back as it was, not run again (resume.ts).
      const earlier = journal?.recorded(planned);
      if (earlier) {
        testInfo.annotations.push(givenBackNote(number));
        await serial(() => attachRun(testInfo, earlier.attached));
        return earlier.returned;
      }
      // After the journal: a run given back costs nothing now.
      if (!budgeted) skipWhenBudgetSpent();
      // Only a run that goes ahead makes its site (create() may start an app); evaluate disposes of it however the run ends.
      const instance = await site.create();
      // A double that follows the task's reference on any site has it rehearsed first (src/doubles/).
      if (followsReference(modelId(model), instance.origin)) await rehearseOnce(task, site, browser);
      const controller = new AbortController();
      let started = false;
      // A command agent's stderr is attached with its run's record, not before: the reporter pairs the two by their order.
      let stderr: { body: Buffer | string; contentType: string } | undefined;
      const running = evaluate({
        context: runContext,
        site: instance,
        agent,
        model,
        task,
        maxIterations,
        modelCache: { ...cache, run: cassetteRunName(testInfo, number), repeatIndex: testInfo.repeatEachIndex },
        signal: controller.signal,
        abortGraceMs: abortGrace(testInfo),
        outputDir: testInfo.outputPath(`run-${number}`),
        attach: async (name, body, contentType) => {
          if (name === AGENT_STDERR) stderr = { body, contentType };
          else await testInfo.attach(name, { body, contentType });
        },
        modelWaits: new WaitClock(testClock),
        // How the agent is contained is known before it starts: a run whose worker dies still says it.
        onStart: ({ contained, reason }) => ((started = true), serial(() => testInfo.attach(HARNESS_RUN_START_ATTACHMENT, { body: JSON.stringify({ ...planned, contained, containment: reason }), contentType: 'application/json' }))),
        onIteration: (title, actions) =>
          base.step(title, async () => {
            await actions();
            const page = runContext.pages().at(-1);
            if (harnessScreenshots && page) await testInfo.attach(`${title}.png`, { body: await page.screenshot(), contentType: 'image/png' });
          }),
      }).then(async (evaluated) => {
        // A browser that died under the run (a crash of the shared one) says nothing of the agent.
        const record = await withBrowserLoss(evaluated, runContext);
        // The ledger has the run's cost already: each call settled its hold there.
        const cost = runCost(prices, modelId(model), record.tokens);
        const reported: AttachedRunRecord & Omit<RunRecord, keyof AttachedRunRecord> & { prompt: string; layerNames: string[] } = redact(
          {
            ...record,
            ...planned,
            // The prompt as the run read it (a template names what its start had).
            prompt: record.task,
            layerNames: record.layers,
            unsupportedClaim: record.trace.some((event) => event.type === 'harness_evidence' && !event.ok),
            observationTokens: await observationTokens(record.trace),
            ...(cost !== undefined && { cost }),
          },
          // The sessions the site issued during the run are known now.
          runSecrets(instance),
        );
        await serial(async () => {
          if (stderr) await testInfo.attach(AGENT_STDERR, stderr);
          await attachRun(testInfo, reported);
        });
        journal?.keep(capRunText(reported), { task: record.task, agent: record.agent, model: record.model, layers: record.layers, site: record.site });
        if (record.excluded?.reason === 'error') errored.push(`run ${planned.test.run}: ${record.excluded.detail}`);
        return record;
      });
      inFlight.set(controller, running);
      try {
        return await running;
      } catch (error) {
        // Bad input met once the run had started: its start is taken back. (Anything else that threw, a live site that could not be put back, stays counted as incomplete.)
        if (started && error instanceof InputError) await serial(() => testInfo.attach(HARNESS_RUN_VOID_ATTACHMENT, { body: JSON.stringify(planned), contentType: 'application/json' }));
        // Neither a success nor a failure: the test is skipped with the reason, and no run is counted.
        // Named by the cell's site (a capture's name), not the kit's instance it was made from.
        if (error instanceof TaskNotApplicable) testInfo.skip(true, `${NOT_APPLICABLE}${error.task} on ${site.name}: ${error.reason}`);
        throw error;
      } finally {
        inFlight.delete(controller);
      }
    };

    // Runs this test started that have not settled: going before they are in flight (their site is made, their task rehearsed, first).
    let going = 0;
    const settling = async <T>(work: () => Promise<T>): Promise<T> => {
      going++;
      try {
        return await work();
      } finally {
        going--;
      }
    };

    const run = async (request: RunRequest): Promise<RunRecord> => {
      const task = toTask(request);
      // Runs share the test's browser context (its pages, cookies and trace): two at once would act on each other's pages.
      if (going > 0) throw new InputError(`harness.run(): run ${runs} of this test is still going: runs share the test's browser context, so await each run before starting the next`);
      return settling(() => runIn(context, task, ++runs));
    };

    const trials = async (request: RunRequest, count: number): Promise<RunRecord[]> => {
      parseInput(z.number().int().positive(), count, 'harness.trials() count');
      const task = toTask(request);
      if (going > 0) throw new InputError(`harness.trials(): run ${runs} of this test is still going: await it before starting trials`);
      skipWhenBudgetSpent();
      return settling(() => trialsOf(task, count));
    };

    const trialsOf = async (task: ReturnType<typeof toTask>, count: number): Promise<RunRecord[]> => {
      const numbers = Array.from({ length: count }, () => ++runs);
      // Planned before any starts: a trial the test never got to (its worker died) is missing, never dropped.
      await serial(() => testInfo.attach(HARNESS_RUN_PLAN_ATTACHMENT, { body: JSON.stringify({ runs: numbers }), contentType: 'application/json' }));
      return Promise.all(
        numbers.map(async (number) => {
          // The test's context options and trace apply to every context made in the test (Playwright's own fixtures see to it).
          const own = await browser.newContext();
          try {
            return await runIn(own, task, number, true);
          } finally {
            await own.close().catch(() => undefined);
          }
        }),
      );
    };

    await use({ run, trials });

    // The test ended while runs went on (it timed out, threw, or the runner stopped it): Playwright
    // gives this teardown a time slot of its own (see abortGrace), so each run is stopped, judged and attached.
    const reason: AbortCause = testInfo.status === 'timedOut' ? 'timeout' : testInfo.status === 'interrupted' ? 'interrupted' : 'error';
    for (const controller of inFlight.keys()) controller.abort(reason);
    await Promise.allSettled(inFlight.values());
    // A run that errored before its agent did anything is no outcome of the agent's: never a green test.
    if (errored.length > 0 && testInfo.status === 'passed') throw new RunErrored(errored);
  },
}));

/**
 * Attaches a run to its test, for the reporter to count: the one way runs are reported, the
 * fixture's and a user's who runs an agent by other means. The record is checked against
 * `runRecordSchema` first (an InputError names each bad field); with a `trace`, Allure gets its
 * transcript. Its free text is cut first (src/report/caps.ts), so a flooding agent's claim never
 * reaches the runner whole. Secrets must be out of it already: the fixture redacts its own.
 */
export async function attachRun(testInfo: TestInfo, record: AttachedRunRecordInput & { trace?: TraceEvent[] }): Promise<void> {
  const capped = capRunText(record);
  parseInput(runRecordSchema, capped, `attachRun: ${HARNESS_RUN_ATTACHMENT}`);
  await testInfo.attach(HARNESS_RUN_ATTACHMENT, { body: JSON.stringify(capped), contentType: 'application/json' });
  if (capped.trace) await recordInAllure(testInfo, { ...capped, trace: capped.trace });
}

/**
 * Once the test function ends (passed, failed or timed out), Playwright gives after-hooks and
 * fixture teardown together a fresh slot of the longer of the project's and the test's timeouts
 * (0: none; measured with Playwright 1.65): an aborted run gets a quarter of it to return, at most
 * ABORT_GRACE_MS, leaving the rest to judge the site and attach the run.
 */
function abortGrace(testInfo: TestInfo): number {
  const slot = Math.max(testInfo.project.timeout, testInfo.timeout);
  return slot === 0 ? ABORT_GRACE_MS : Math.min(ABORT_GRACE_MS, slot / 4);
}

/**
 * While the run waits on its model's endpoint (a slot, a rate limit), the test's clock stands
 * still: its timeout is lifted, then given back lengthened by the wait. That time is the
 * endpoint's; a run never times out because other workers held the slots.
 */
export function holdTestClock(testInfo: TestInfo): (waiting: boolean) => void {
  // Held while any of the test's runs waits (trials wait together): from the first wait to the last's end.
  let holders = 0;
  let held: { timeout: number; since: number } | undefined;
  return (waiting) => {
    if (waiting) {
      if (holders++ > 0) return;
      held = { timeout: testInfo.timeout, since: performance.now() };
      if (held.timeout > 0) testInfo.setTimeout(0);
    } else if (holders > 0 && --holders === 0 && held) {
      if (held.timeout > 0) testInfo.setTimeout(held.timeout + Math.round(performance.now() - held.since));
      held = undefined;
    }
  };
}


/** The test (its project is the matrix cell) and, past the first, the run's number in it: what tells its cassette from others'. */
function cassetteRunName(testInfo: TestInfo, run: number): string {
  return [testInfo.project.name, ...testInfo.titlePath].filter(Boolean).join(' › ') + (run > 1 ? ` #${run}` : '');
}

const maxIterationsSchema = z.number().int().positive().optional();
/** A request written as a prompt and its postconditions (the task's own fields are checked by defineTask). */
const promptRequestSchema = z.object({ task: z.string().min(1), postconditions: z.array(z.unknown()), name: z.string().optional(), maxIterations: maxIterationsSchema }).strict();

/** The request as a checked task and iteration cap: a prompt with its postconditions is revision 1, untagged. Bad input is one InputError naming the field. */
function toTask(request: RunRequest): { task: Task; maxIterations?: number } {
  if (typeof request !== 'object' || request === null || Array.isArray(request)) {
    throw new InputError(`harness.run(): expected a task (defineTask) or { task, postconditions }, got ${request === null ? 'null' : Array.isArray(request) ? 'a list' : typeof request}`);
  }
  if ('prompt' in request) {
    const { maxIterations, ...task } = request;
    return { task: defineTask(task), ...parseInput(z.object({ maxIterations: maxIterationsSchema }), { maxIterations }, 'harness.run()') };
  }
  const checked = parseInput(promptRequestSchema, request, 'harness.run()');
  const name = checked.name ?? (checked.task.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '').slice(0, 60).replace(/-$/, '') || 'task');
  return { task: defineTask({ name, prompt: checked.task, postconditions: checked.postconditions as Postcondition[] }), maxIterations: checked.maxIterations };
}
