import { counted } from '../report/format.ts';
import { ModelError } from '../models/types.ts';
import type { ToolCall } from '../core/model.ts';
import type { CallOrigin, RunContext, RunView } from './context.ts';
import type { Claim } from '../tools/browser.ts';
import type { AttemptOutcome, Layer } from './layer.ts';
import { parseJsonObject } from '../text.ts';
import { HARD_MAX_ITERATIONS, RunAborted } from './limits.ts';

export { HARD_MAX_ITERATIONS } from './limits.ts';
import { modelRequest } from './trace.ts';

/**
 * One attempt of the agent loop: layers before the model call, the model, the tool calls (each in
 * the trace), layers after the tools, until the model finishes or something stops the run.
 */
export interface LoopOptions {
  /** The absolute cap for an attempt (default HARD_MAX_ITERATIONS). */
  maxIterations?: number;
  /** Wraps each iteration's actions, once the model has said what they are (a Playwright step). */
  onIteration?: (title: string, actions: () => Promise<void>) => Promise<void>;
}

export async function runAttempt(run: RunContext, layers: readonly Layer[], options: LoopOptions = {}): Promise<AttemptOutcome> {
  const maxIterations = options.maxIterations ?? HARD_MAX_ITERATIONS;
  const onIteration = options.onIteration ?? ((_title, actions) => actions());
  for (;;) {
    run.checkAborted();
    if (run.attemptIterations >= maxIterations) run.stop('max_iterations', `hard limit of ${counted(maxIterations, 'iteration')}`);
    // Layer hooks give way to the run's signal too (a verify load, a resume's navigation).
    for (const layer of layers) if (!run.stopped) await run.unlessAborted(layer.beforeModel?.(run));
    const blocked = await stopped(run, layers);
    if (blocked) return blocked;
    // A claim a layer made before the model's call (a replayed subroutine's finish) ends the attempt without one.
    const early = run.claim;
    if (early) return finished(run, layers, early);

    const tools = run.tools.schemas();
    run.record(modelRequest(run.messages, tools, run.secrets));
    const started = performance.now();
    let response;
    try {
      // The model call gives way to the run's signal: an abandoned call is never awaited.
      response = await run.unlessAborted(run.model.chat({ messages: run.messages, tools, signal: run.signal, waits: run.modelWaits }));
    } catch (error) {
      if (error instanceof RunAborted || run.signal?.aborted) throw error instanceof RunAborted ? error : new RunAborted('the run was cut short during a model call');
      const kind = error instanceof ModelError ? error.kind : 'unexpected';
      const message = error instanceof Error ? error.message : String(error);
      run.record({ type: 'model_error', kind, message });
      // Still refused after every retry: the endpoint's limit, not the agent's failure.
      return { stopReason: kind === 'rate_limited' ? 'rate_limited' : 'model_error', error: message };
    }
    run.iterations += 1;
    run.attemptIterations += 1;
    const { content, toolCalls } = response.message;
    const { input, output } = response.usage;
    run.record({ type: 'model_response', content, toolCalls, usage: { input, output }, ms: Math.round(performance.now() - started) });
    run.countTokens(response.usage);
    run.push({ role: 'assistant', content, ...(toolCalls.length > 0 && { toolCalls }) });
    for (const layer of layers) if (!run.stopped) await run.unlessAborted(layer.afterModel?.(run, response));
    const halted = await stopped(run, layers);
    if (halted) return halted;

    if (toolCalls.length === 0) {
      run.tell('loop', 'Use a tool to act, or call finish(success, summary) when the task is done or cannot be done.');
      continue;
    }
    await onIteration(`iteration ${run.iterations}: ${describeCalls(toolCalls)}`, async () => {
      // A stop (a closed browser, a failed program under onError `stop`) ends the turn: no further call runs.
      for (const call of toolCalls) if (!run.stopped) await executeCall(run, call);
      for (const layer of layers) if (!run.stopped) await run.unlessAborted(layer.afterTools?.(run));
    });

    const claim = run.claim;
    if (claim) return finished(run, layers, claim);
    const ended = await stopped(run, layers);
    if (ended) return ended;
  }
}

/** The attempt's end on the claim made (by the model, or by a layer for the harness), as the layers' `onFinish` answer it. */
async function finished(run: RunContext, layers: readonly Layer[], made: Claim): Promise<AttemptOutcome> {
  let claim = made;
  for (const layer of layers) if (layer.onFinish) claim = await run.unlessAborted(layer.onFinish(run, claim));
  return { stopReason: 'finished', claim };
}

/** The outcome of a run a layer has stopped (a getter TypeScript cannot narrow twice); a paused run is first handed to the layers' `onPause` (durable saves it). */
async function stopped(run: RunContext, layers: readonly Layer[]): Promise<AttemptOutcome | undefined> {
  const stop = run.stopped;
  if (stop?.reason === 'awaiting_approval') for (const layer of layers) await run.unlessAborted(layer.onPause?.(run));
  return stop && { stopReason: stop.reason };
}

/**
 * Runs one tool call (the model's, or one a resumed run finishes for it); its outcome, good or bad,
 * goes to the model. A call held back for approval gets no answer yet: it gets its real one when
 * the run resumes.
 */
export async function executeCall(run: RunView, call: ToolCall, by: CallOrigin = 'model'): Promise<void> {
  const outcome = await run.callTool(call, { by });
  if (!outcome.ok && outcome.kind === 'awaiting_approval') return;
  const observation = outcome.ok ? outcome.output : { error: outcome.error };
  run.push({ role: 'tool', toolCallId: call.id, name: call.name, content: JSON.stringify(observation) });
}

/** "click #save", "navigate https://…": what an iteration did, for step titles. */
export function describeCalls(calls: readonly ToolCall[]): string {
  return calls
    .map((call) => {
      const args = parseJsonObject(call.arguments);
      if (!args) return `${call.name} (invalid arguments)`;
      const main = args.selector ?? args.url ?? (call.name === 'finish' ? (args.success ? 'success' : 'failure') : undefined);
      return main === undefined ? call.name : `${call.name} ${String(main)}`;
    })
    .join(', ');
}
