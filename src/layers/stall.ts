import { createHash } from 'node:crypto';
import { z } from 'zod';
import { approvalStoreOptions, askStore, type ApprovalStoreOptions } from '../harness/approvals.ts';
import type { RunView } from '../harness/context.ts';
import { defineLayer } from '../harness/layer.ts';
import type { TraceEventOf } from '../core/trace.ts';

export const stallOptions = z
  .object({
    threshold: z.number().int().min(2).default(2),
    /** An approval store: the second stall asks a person whether the run may go on, instead of stopping it. */
    store: approvalStoreOptions.optional(),
  })
  .strict();

const WARNING = 'You are repeating yourself: try another approach.';
const CONTINUE_NOTE = 'You were stuck; a person let the run go on: try another approach.';

/**
 * A model that gives the same turn again (same text, same calls with the same arguments) is stuck,
 * and would spend the iteration budget getting nowhere. The first time a turn has been seen
 * `threshold` times in an attempt the model is warned; the next repeat stops the run as `stalled`,
 * or, with a `store`, files a request there ("the model is stuck: continue?") and pauses the run:
 * approved, the run goes on with a note to the model; denied, it stops as `stalled`.
 * Everything is counted from the trace, so a resumed run counts on where it stopped.
 */
export const stall = defineLayer({
  name: 'stall',
  options: stallOptions,
  create({ threshold, store }) {
    return {
      afterModel(run) {
        const turns = responsesOfAttempt(run).map(fingerprint);
        const repeats = turns.filter((turn) => turn === turns.at(-1)).length;
        if (repeats < threshold) return;
        if (!warningOf(run)) return void run.record({ type: 'harness_stall', repeats, action: 'warned' });
        if (!store) return stopStalled(run, repeats);
        escalate(run, store, repeats, turns.at(-1)!);
      },
      beforeModel(run) {
        // Told here, before the next model call, not in afterModel: a message between a tool call
        // and its result is refused by providers (the OpenAI API answers 400).
        if (warningOf(run)?.iteration === run.iterations) run.tell('stall', WARNING);
        tellContinued(run);
      },
    };
  },
});

function escalate(run: RunView, store: ApprovalStoreOptions, repeats: number, turn: string): void {
  const ask = { kind: 'continue', action: 'continue', resource: 'run', argsHash: turn, reason: `the model gave the same turn ${repeats} times, after a warning: may it go on?` } as const;
  const verdict = askStore(run, store, ask);
  run.record({ type: 'harness_stall', repeats, action: verdict === 'paused' ? 'escalated' : verdict === 'approved' ? 'continued' : 'stopped' });
  if (verdict === 'denied') run.stop('stalled', `the model gave the same turn ${repeats} times, and going on was denied`);
}

function stopStalled(run: RunView, repeats: number): void {
  run.record({ type: 'harness_stall', repeats, action: 'stopped' });
  run.stop('stalled', `the model gave the same turn ${repeats} times, after a warning`);
}

/** A resumed run's stuck turn, asked about again (durable): whether the run goes on. */
export function stallContinues(run: RunView, request: TraceEventOf<'harness_approval_request'>): boolean {
  const repeats = run.trace.of('harness_stall').at(-1)?.repeats ?? 0;
  const expiresInMs = Date.parse(request.expiresAt) - Date.parse(request.requestedAt);
  escalate(run, { dir: request.store, scope: request.scope, expiresInMs }, repeats, request.argsHash);
  return !run.stopped;
}

/** Once after a person let a stuck run go on: the model is told, before its next call. */
export function tellContinued(run: RunView): void {
  const last = run.trace.of('harness_stall').at(-1);
  if (last?.action !== 'continued') return;
  if (run.trace.of('harness_note').some((note) => note.seq > last.seq && note.message === CONTINUE_NOTE)) return;
  run.tell('stall', CONTINUE_NOTE);
}

function responsesOfAttempt(run: RunView): TraceEventOf<'model_response'>[] {
  return run.trace.of('model_response').filter((event) => event.attempt === run.attempt);
}

function warningOf(run: RunView): TraceEventOf<'harness_stall'> | undefined {
  return run.trace.of('harness_stall').find((event) => event.attempt === run.attempt && event.action === 'warned');
}

/** A turn's text and calls, without the call ids, which differ on every turn. */
function fingerprint({ content, toolCalls }: TraceEventOf<'model_response'>): string {
  const turn = JSON.stringify([content, toolCalls.map((call) => [call.name, call.arguments])]);
  return createHash('sha256').update(turn).digest('hex');
}
