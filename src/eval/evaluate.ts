import { taskAt } from './tasks.ts';
import { tmpdir } from 'node:os';
import { mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { BrowserContext } from '@playwright/test';
import type { RunHarnessOptions } from '../harness/run.ts';
import type { Agent, AgentResult, BrowserSession, Containment, SessionOptions } from '../core/agent.ts';
import { RUN_RECORD_VERSION, type Excluded, type RunRecord } from '../core/run.ts';
import { builtInHarness } from '../harness/agent.ts';
import type { StopReason } from '../core/trace.ts';
import { InputError } from '../input.ts';
import { ownFolder, reapFolders } from '../leftovers.ts';
import type { Model, ModelWaits } from '../core/model.ts';
import { WaitClock } from '../models/waits.ts';
import { openCassette, type CassetteOptions } from '../models/cassette.ts';
import { createModel, modelSecrets, type ModelSpec } from '../models/registry.ts';
import type { LayerSpec } from '../layers/index.ts';
import { SiteDown, type Site, type SiteIdle } from '../core/site.ts';
import { AgentActivity } from './activity.ts';
import { checkLayersApply } from './agent.ts';
import { judge, unjudgeable, wentDown, type Judgement } from './oracle.ts';
import type { Task } from '../core/task.ts';
import { BrowserReach, browserContainment } from '../reach.ts';

/** Why a run was cut short from outside: the test's time ran out, or the test failed while its agent worked. */
export type CutShort = Extract<StopReason, 'timeout' | 'error'>;

/** Why a run's signal aborts: a CutShort, or `interrupted` (the runner stopped the test: Ctrl-C, --max-failures, the global timeout). */
export type AbortCause = CutShort | 'interrupted';

/** A run stopped by the runner says nothing of its agent: what it did so far is no outcome. */
export const INTERRUPTED_DETAIL = 'the runner stopped the test while its run went on (Ctrl-C, --max-failures or the global timeout)';

/** Stop reasons that say the run failed; with no agent work (AgentActivity) before, the failure was not the agent's. */
const FAILED: readonly StopReason[] = ['error', 'model_error'];

/**
 * How long an aborted run gets to return, by default, before it is recorded from what is known:
 * the harness ends promptly on abort, but a model call that ignores the signal could hold it for ever.
 */
export const ABORT_GRACE_MS = 5_000;

export interface EvaluateOptions {
  /** The test's own browser context: the first attempt runs in it, so Playwright's trace shows it. */
  context: BrowserContext;
  site: Site;
  /** What runs the task: by default harness-eval's own harness with `layers`. */
  agent?: Agent;
  model: ModelSpec | Model;
  /** The built-in harness's layers; another agent takes none. */
  layers?: readonly LayerSpec[];
  task: Task;
  maxIterations?: RunHarnessOptions['maxIterations'];
  onIteration?: RunHarnessOptions['onIteration'];
  /** Record the model's traffic (openai:, ollama:) as a cassette, or replay it; a replay miss fails with a ReplayMissError. */
  modelCache?: Omit<CassetteOptions, 'model' | 'secrets'>;
  /** Called once the run begins (inputs checked, start snapshot taken), with how the agent is contained: from here on, the run is recorded however it ends. */
  onStart?: (containment: Containment) => Promise<void>;
  /** Aborted (with an AbortCause as its reason) when the test's time is up, it failed or it was interrupted: the run ends incomplete, judged on what it left (an interrupted one is excluded). */
  signal?: AbortSignal;
  /** How long the run gets to return once aborted (default ABORT_GRACE_MS). */
  abortGraceMs?: number;
  /** The run's folder for its layers' and agent's files (under Playwright, in the test's output folder); by default a temporary one, removed when the run ends. */
  outputDir?: RunHarnessOptions['outputDir'];
  /** Attaches an agent's files (a command's stdout) to the test; by default they are dropped. */
  attach?: (name: string, body: string | Buffer, contentType: string) => Promise<void>;
  /** The run's clock of model waits (the fixture's holds the test's timeout meanwhile); by default the run's own. */
  modelWaits?: ModelWaits;
}

/** An agent that does not say how it is contained is not. */
const NOT_SAID: Containment = { contained: false, reason: 'not contained: the agent does not say how it is contained' };

/** How a not-applicable task's skip reason begins: the reporter lists those tests apart. */
export const NOT_APPLICABLE = 'not applicable: ';

/**
 * The task does not apply to the site as the run would start (its capture has no comments, no user
 * page): no run is made, and none is counted. The fixture skips its test with this message.
 */
export class TaskNotApplicable extends Error {
  constructor(
    readonly task: string,
    readonly site: string,
    readonly reason: string,
  ) {
    super(`${NOT_APPLICABLE}${task} on ${site}: ${reason}`);
    this.name = 'TaskNotApplicable';
  }
}

/**
 * One run of an agent, judged: the site's ground truth before, the run, the ground truth after,
 * and the oracle's verdict. Bad model or layer names fail here, before any page opens. Once the
 * run has begun it always returns a record: a run cut short (aborted, or an exception) is
 * incomplete, judged on the state it left if the site still answers. A run that says nothing of
 * its agent is `excluded` (see `exclusion`). A task that does not apply to the site as it starts
 * throws TaskNotApplicable before the run begins.
 */
export async function evaluate(options: EvaluateOptions): Promise<RunRecord> {
  // The site is put back (the live site unvotes what the run voted) however the run ends, also when it never began: its factory may have started an app.
  try {
    if (options.outputDir !== undefined) return await evaluateIn(options, options.outputDir);
    // A folder of the run's own: a command agent writes in it, and must never share it with another run. No one else has its path: it goes with the run,
    // and a process killed during the run leaves it to the next process's first such run to remove.
    void reapFolders([tmpdir()]);
    const outputDir = await mkdtemp(join(tmpdir(), ownFolder('run')));
    try {
      return await evaluateIn(options, outputDir);
    } finally {
      await rm(outputDir, { recursive: true, force: true }).catch(() => undefined);
    }
  } finally {
    await options.site.dispose?.();
  }
}

async function evaluateIn(options: EvaluateOptions, outputDir: string): Promise<RunRecord> {
  const { context, site, model, layers = [], maxIterations, onIteration, modelCache, onStart, signal, abortGraceMs = ABORT_GRACE_MS, modelWaits = new WaitClock() } = options;
  const agent = options.agent ?? builtInHarness(layers);
  checkLayersApply(agent, layers);
  await agent.prepare?.();
  // Asked before anything starts: an agent that cannot run here as asked (no sandbox where one is required) records no run.
  const containment = agent.containment?.(site, await browserContainment(context.browser())) ?? NOT_SAID;
  // Opened for any model; only openai: and ollama: models send their traffic through it.
  const secrets = modelSecrets();
  const cassette = modelCache && openCassette({ ...modelCache, model: typeof model === 'string' ? model : model.id, secrets: [...secrets, site.account.password] });
  const resolvedModel = typeof model === 'object' && 'chat' in model ? model : createModel(model, process.env, cassette);
  const activity = new AgentActivity();
  // Every context the run uses reaches the site and nothing else; guarded before the site is attached, so the site's route is asked first.
  const reach = new BrowserReach(site.origin);
  await reach.guard(context);
  // The guard is taken off however the run ends (evaluate puts the site back).
  try {
    await site.attach(context);
    // A resumed run (durable) is judged from the site as it was when the run first began.
    let start = await site.snapshot();
    const notApplicable = options.task.whyNotApplicable?.(start);
    if (notApplicable !== undefined) throw new TaskNotApplicable(options.task.name, site.name, notApplicable);
    // The task as it reads on this start (taskAt): its agent and its oracle see the same one, and a
    // resumed run reads it on its first start again.
    let task = taskAt(options.task, start);
    // A postcondition the site cannot see the ground truth of would be judged on nothing: refused, as not applicable.
    const unseen = unjudgeable(task.postconditions, start);
    if (unseen !== undefined) throw new TaskNotApplicable(options.task.name, site.name, unseen);
    const carried = {
      save: () => start,
      restore: (saved: unknown) => {
        start = saved as typeof start;
        task = taskAt(options.task, start);
      },
    };

    const openSession = async (attempt: number, session: SessionOptions = {}): Promise<BrowserSession> => {
      if (attempt === 1 && !session.fresh) {
        const page = await context.newPage();
        return { page, close: async () => {} };
      }
      // Later attempts, and a session reopened after a crash, start clean: a fresh context with no cookies, on the same site state.
      const fresh = await context.browser()!.newContext({ acceptDownloads: false, serviceWorkers: 'block' });
      await reach.guard(fresh);
      await site.attach(fresh);
      activity.pages(fresh);
      return { page: await fresh.newPage(), close: () => fresh.close() };
    };

    // A run that never returned is known only from outside: its counts are unknown, not zero.
    const startedAt = Date.now();
    const cutShort = (stopReason: CutShort, summary: string): AgentResult => ({
      task: task.prompt,
      model: resolvedModel.id,
      layers: [...(agent.layers ?? [])],
      claimed: false,
      summary,
      stopReason,
      iterations: 0,
      attempts: 1,
      tokens: { input: null, output: null },
      wallMs: Date.now() - startedAt,
      trace: [],
    });

    await onStart?.(containment);
    let result: AgentResult;
    /** Why the run was stopped from outside, when it was, before it returned. */
    let stoppedBy: AbortCause | undefined;
    const unwatch = activity.pages(context);
    try {
      const running = agent.run({
        task,
        get postconditions() {
          return task.postconditions;
        },
        site: activity.site(site),
        context,
        openSession,
        model: activity.model(resolvedModel),
        modelWaits,
        // Read each time: the site's sessions are issued during the run.
        get secrets() {
          return runSecrets(site, secrets);
        },
        signal,
        outputDir,
        maxIterations,
        onIteration,
        carried,
        attach: options.attach ?? (async () => {}),
      });
      result = await returnedOrCutShort(running, signal, abortGraceMs, () =>
        cutShort(cutShortBy(signal!), `the run was cut short (${abortCause(signal!)}) and did not return within ${abortGraceMs} ms of being stopped`),
      );
    } catch (error) {
      // Bad input (a corrupt checkpoint) is the user's to fix, not a run to count: it fails the test.
      if (error instanceof InputError) throw error;
      result = cutShort('error', `the run failed: ${error instanceof Error ? error.message : String(error)}`);
    } finally {
      unwatch();
      if (signal?.aborted) stoppedBy = abortCause(signal);
    }
    // Aborted by the test's end: the stop reason is why the test ended (the harness only knows it was stopped).
    if (signal?.aborted && result.stopReason === 'timeout') result = { ...result, stopReason: cutShortBy(signal) };
    // A stale or corrupt cassette is not the model's failure: the test fails instead of reporting a run.
    if (cassette?.failure) throw cassette.failure;
    // Paused for approval, or stopped by the endpoint's rate limit, is neither a success nor a failure: incomplete, with its reason.
    const incomplete = (['timeout', 'error', 'awaiting_approval', 'rate_limited', 'limit'] as StopReason[]).includes(result.stopReason);

    let judgement: Judgement | undefined;
    let siteIdle: SiteIdle | undefined;
    let unjudged = '';
    try {
      // Judged once the site has answered every request the run started (a vote still on its way counts).
      siteIdle = await site.idle();
      const end = await site.snapshot();
      judgement = await judge(task.postconditions, { start, end, diff: site.diff(start, end), user: site.account.username, answer: result.answer });
    } catch (error) {
      // Gone once the agent was at work or claimed (its app exited): judged as not done, the going a side effect; it may be the agent's doing.
      if (error instanceof SiteDown && (activity.work !== undefined || result.claimed)) judgement = wentDown(site.name, error.message);
      // The site no longer answers (the browser or its worker is going): the run is kept, unjudged.
      else unjudged = `the site could not be judged after the run: ${error instanceof Error ? error.message : String(error)}`;
    }
    const excluded = exclusion(stoppedBy, result, activity, unjudged);
    // What the agent tried against its containment, and what its browser was refused.
    const escapes = reach.escapes(result.escapes);
    return {
      ...result,
      schemaVersion: RUN_RECORD_VERSION,
      agent: agent.name,
      stopReason: judgement || incomplete ? result.stopReason : 'error',
      summary: [result.summary, unjudged].filter(Boolean).join('; '),
      site: site.name,
      actual: judgement?.actual ?? false,
      falseSuccess: judgement !== undefined && result.claimed && !judgement.actual,
      falseFailure: judgement !== undefined && judgement.actual && !result.claimed,
      sideEffects: judgement?.sideEffects ?? [],
      incomplete: incomplete || !judgement,
      judged: judgement !== undefined,
      verdicts: judgement?.verdicts ?? [],
      ...unverifiedIn(result),
      siteIdle,
      contained: containment.contained,
      containment: containment.reason,
      ...(escapes && { escapes }),
      modelWaitMs: modelWaits.waitedMs(),
      ...(excluded && { excluded }),
    };
  } finally {
    await reach.release();
  }
}

/** What never leaves a run: the API keys, the site's password, and the sessions the site has issued so far. */
export function runSecrets(site: Site, keys: readonly string[] = modelSecrets()): string[] {
  return [...keys, site.account.password, ...(site.secrets?.() ?? [])];
}

/** What `verify` passed on unchecked, when the claim it passed stood: each postcondition once. */
function unverifiedIn({ claimed, trace }: AgentResult): Pick<RunRecord, 'unverified'> {
  const unverified = [...new Set(trace.flatMap((event) => (event.type === 'harness_unverified' ? event.postconditions : [])))];
  return claimed && unverified.length > 0 ? { unverified } : {};
}

/**
 * Why the run says nothing of its agent, if it does not: the runner stopped it (`interrupted`);
 * the site could not be judged after it; the model gateway refused a request of a model's route it
 * could not translate (400) and the run claimed no success: the gateway's gap cut the agent off from
 * its model, so its failure says nothing of it, while a claimed success is judged (a refusal made no
 * claim true, and a liar must not hide behind a request it knows is refused); or it failed before the
 * agent did any work, seen from outside (AgentActivity): an agent that fails after acting is judged
 * like any other. An escape attempt (a canary it printed, a file it left that could not be copied, a
 * process it left) is the agent acting too: nothing it can cause takes its run out of the counts.
 */
function exclusion(stoppedBy: AbortCause | undefined, result: AgentResult, activity: AgentActivity, unjudged: string): Excluded | undefined {
  if (stoppedBy === 'interrupted') return { reason: 'interrupted', detail: INTERRUPTED_DETAIL };
  if (unjudged) return { reason: 'error', detail: unjudged };
  const refused = result.trace.find((event) => event.type === 'model_request_refused' && event.status === 400) as Extract<AgentResult['trace'][number], { type: 'model_request_refused' }> | undefined;
  if (refused && !result.claimed) return { reason: 'error', detail: `the model gateway refused a request (${refused.status}): ${refused.message}` };
  const attempted = (result.escapes?.attempts?.length ?? 0) > 0 || (result.escapes?.processesLeft ?? 0) > 0;
  if (FAILED.includes(result.stopReason) && activity.work === undefined && !attempted) {
    return { reason: 'error', detail: `the run ended in ${result.stopReason} before the agent did any work (no model call answered, no request to the site): ${result.summary}` };
  }
  return undefined;
}

/** Why the signal aborted, as the fixture says it (a timeout when it says nothing). */
function abortCause(signal: AbortSignal): AbortCause {
  return signal.reason === 'error' || signal.reason === 'interrupted' ? signal.reason : 'timeout';
}

/** The stop reason of a run the signal stopped: an interrupted one ended in `error` (its record says why, in `excluded`). */
function cutShortBy(signal: AbortSignal): CutShort {
  return abortCause(signal) === 'timeout' ? 'timeout' : 'error';
}

/** The run's result; once the signal aborts, the run gets `graceMs` to return before `cutShort` stands in for it. */
function returnedOrCutShort(run: Promise<AgentResult>, signal: AbortSignal | undefined, graceMs: number, cutShort: () => AgentResult): Promise<AgentResult> {
  if (!signal) return run;
  return new Promise((resolve, reject) => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const giveUp = () => {
      timer = setTimeout(() => resolve(cutShort()), graceMs);
    };
    const settle = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', giveUp);
    };
    if (signal.aborted) giveUp();
    else signal.addEventListener('abort', giveUp, { once: true });
    run.then(
      (result) => (settle(), resolve(result)),
      (error: unknown) => (settle(), reject(error)),
    );
  });
}
