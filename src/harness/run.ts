import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Postcondition } from '../core/task.ts';
import { InputError } from '../input.ts';
import type { Model, ModelWaits } from '../core/model.ts';
import { RunContext, type Credentials, type SiteView, type TaskId } from './context.ts';
import type { BrowserSession, Carried, AgentResult, SessionOptions } from '../core/agent.ts';
import type { AttemptOutcome, LayerValue } from './layer.ts';
import { abortReason, RunAborted } from './limits.ts';
import { runAttempt, type LoopOptions } from './loop.ts';

export type { BrowserSession, AgentResult, SessionOptions } from '../core/agent.ts';

export const DEFAULT_SYSTEM_PROMPT =
  'You are a browser agent. Use the tools to carry out the task in the browser. ' +
  'When the task is done, or cannot be done, call finish(success, summary); set success=true only if the task is done. ' +
  'When the task asks a question, give the answer in finish\'s answer.';

/** What `runHarness` takes (the fixtures' options, which a spec sets, are `HarnessOptions`). */
export interface RunHarnessOptions {
  task: string;
  model: Model;
  /** The stack, as values: each run creates its own instance of every layer. */
  layers?: readonly LayerValue[];
  /** The run's folder for files its layers write (durable's file, checkpoints); by default `harness-eval` in the system's temporary folder. */
  outputDir?: string;
  /** Opens the page for an attempt: the first may be the test's own, later ones fresh contexts. */
  openSession(attempt: number, options?: SessionOptions): Promise<BrowserSession>;
  credentials?: Credentials;
  /** The site the run acts on: layers read its origin, its action classifier and its sign-in. */
  site?: SiteView;
  /** Further values that must never appear in the trace (API keys; a function: read each time, for values made during the run). */
  secrets?: readonly string[] | (() => readonly string[]);
  systemPrompt?: string;
  /** Absolute cap on iterations per attempt, whatever the layers. */
  maxIterations?: LoopOptions['maxIterations'];
  onIteration?: LoopOptions['onIteration'];
  /** Aborted when the run's time is up (the test's timeout): the run ends with stopReason `timeout`, as a result. */
  signal?: AbortSignal;
  /** The most one tool call may take (default DEFAULT_TOOL_TIMEOUT_MS); `guardrails` and a tool's own limit may narrow it. */
  toolTimeoutMs?: number;
  /** The caller's state that outlives a process with the run (`durable` saves it and gives it back). */
  carried?: Carried;
  /** The task's postconditions, bound to the run's start (read each time): what `verify` and `stop-on-success` check. */
  postconditions?: () => readonly Postcondition[];
  /** The task's name and revision, for layers that key files by task (`subroutines`). */
  taskId?: TaskId;
  /** The run's clock of model waits, shared with the caller (the evaluation records it). */
  modelWaits?: ModelWaits;
}

export async function runHarness(options: RunHarnessOptions): Promise<AgentResult> {
  const outputDir = options.outputDir ?? join(tmpdir(), 'harness-eval');
  const layers = (options.layers ?? []).map((layer) => layer({ outputDir }));
  const run = new RunContext(
    options.task,
    options.model,
    options.systemPrompt ?? DEFAULT_SYSTEM_PROMPT,
    options.credentials,
    options.secrets ?? [],
    { site: options.site, signal: options.signal, toolTimeoutMs: options.toolTimeoutMs, carried: options.carried, postconditions: options.postconditions, taskId: options.taskId, modelWaits: options.modelWaits },
  );
  run.record({ type: 'run_start', task: options.task, model: options.model.id, layers: layers.map((layer) => layer.name) });

  const attempt = async (): Promise<AttemptOutcome> => {
    run.checkAborted();
    const number = run.attempt + 1;
    const sessions = [await options.openSession(number)];
    // A session reopened mid-attempt (`run.reopen()`), closed with the attempt's first.
    const openFresh = async () => {
      const session = await options.openSession(number, { fresh: true });
      sessions.push(session);
      return session.page;
    };
    try {
      await run.beginAttempt(sessions[0]!.page, layers, openFresh);
      return await runAttempt(run, layers, { maxIterations: options.maxIterations, onIteration: options.onIteration });
    } finally {
      await run.endAttempt();
      for (const session of sessions) await session.close();
    }
  };
  const wrapped = layers.reduceRight<() => Promise<AttemptOutcome>>(
    (next, layer) => (layer.aroundAttempt ? () => layer.aroundAttempt!(run, next) : next),
    attempt,
  );

  let outcome: AttemptOutcome;
  try {
    outcome = await wrapped();
  } catch (error) {
    // Bad input (a corrupt checkpoint) is the user's to fix, not a run to count: it fails the test.
    if (error instanceof InputError) throw error;
    if (error instanceof RunAborted || options.signal?.aborted) {
      // Cut short (the test's time is up): the run so far is the result, never an exception.
      run.stop('timeout', options.signal?.aborted ? `the run was cut short: ${abortReason(options.signal)}` : (error as Error).message);
      outcome = { stopReason: 'timeout' };
    } else {
      // A harness or browser failure: recorded as the run's end, never thrown at the caller's test.
      // A closed browser says so, rather than in the words of whatever call failed on it.
      outcome = { stopReason: 'error', error: run.browserClosed ?? (error instanceof Error ? error.message.split('\n')[0]! : String(error)) };
    }
  }
  const claimed = outcome.stopReason === 'finished' && outcome.claim?.success === true;
  run.record({ type: 'run_end', claimed, stopReason: outcome.stopReason, iterations: run.iterations });
  return run.redact({
    task: options.task,
    model: options.model.id,
    layers: layers.map((layer) => layer.name),
    claimed,
    summary: outcome.claim?.summary ?? outcome.error ?? run.stopped?.detail ?? '',
    stopReason: outcome.stopReason,
    iterations: run.iterations,
    attempts: run.attempt,
    tokens: { ...run.tokens },
    wallMs: Date.now() - run.startedAt,
    trace: [...run.trace.events],
    ...(outcome.stopReason === 'finished' && outcome.claim?.answer !== undefined && { answer: outcome.claim.answer }),
  });
}
