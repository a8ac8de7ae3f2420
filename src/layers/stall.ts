import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { RunContext } from '../harness/context.ts';
import { defineLayer } from '../harness/layer.ts';
import type { TraceEventOf } from '../harness/trace.ts';

export const stallOptions = z.object({ threshold: z.number().int().min(2).default(2) }).strict();

const WARNING = 'You are repeating yourself: try another approach.';

/**
 * A model that gives the same turn again (same text, same calls with the same arguments) is stuck,
 * and would spend the iteration budget getting nowhere. The first time a turn has been seen
 * `threshold` times in an attempt the model is warned; the next repeat stops the run as `stalled`.
 * Everything is counted from the trace, so a resumed run counts on where it stopped.
 */
export const stall = defineLayer({
  name: 'stall',
  options: stallOptions,
  create({ threshold }) {
    return {
      afterModel(run) {
        const turns = responsesOfAttempt(run).map(fingerprint);
        const repeats = turns.filter((turn) => turn === turns.at(-1)).length;
        if (repeats < threshold) return;
        if (warningOf(run)) {
          run.record({ type: 'harness_stall', repeats, action: 'stopped' });
          return run.stop('stalled', `the model gave the same turn ${repeats} times, after a warning`);
        }
        run.record({ type: 'harness_stall', repeats, action: 'warned' });
      },
      beforeModel(run) {
        // Told here, before the next model call, not in afterModel: a message between a tool call
        // and its result is refused by providers (the OpenAI API answers 400).
        if (warningOf(run)?.iteration === run.iterations) run.tell('stall', WARNING);
      },
    };
  },
});

function responsesOfAttempt(run: RunContext): TraceEventOf<'model_response'>[] {
  return run.trace.of('model_response').filter((event) => event.attempt === run.attempt);
}

function warningOf(run: RunContext): TraceEventOf<'harness_stall'> | undefined {
  return run.trace.of('harness_stall').find((event) => event.attempt === run.attempt && event.action === 'warned');
}

/** A turn's text and calls, without the call ids, which differ on every turn. */
function fingerprint({ content, toolCalls }: TraceEventOf<'model_response'>): string {
  const turn = JSON.stringify([content, toolCalls.map((call) => [call.name, call.arguments])]);
  return createHash('sha256').update(turn).digest('hex');
}
