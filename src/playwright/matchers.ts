import { counted } from '../report/format.ts';
import { cut, TEXT_CHARS } from '../report/caps.ts';
import { expect as base } from '@playwright/test';
import type { TraceEvent } from '../core/trace.ts';
import type { RunRecord } from '../core/run.ts';

/**
 * Matchers on a judged run. Each failure message says what the harness claimed, what the oracle
 * found, and the trace event to look at.
 */
export const expect = base.extend({
  toSucceed(run: RunRecord) {
    return verdict(this, run, run.actual, 'toSucceed', 'expected the run to succeed (the oracle finds the task done)');
  },
  toHaveNoFalseSuccess(run: RunRecord) {
    return verdict(this, run, !run.falseSuccess, 'toHaveNoFalseSuccess', 'expected no false success (a claimed success the oracle does not confirm)');
  },
  toFinishWithin(run: RunRecord, limit: { iterations: number }) {
    const pass = run.stopReason === 'finished' && run.iterations <= limit.iterations;
    return verdict(this, run, pass, 'toFinishWithin', `expected the run to finish within ${counted(limit.iterations, 'iteration')}`);
  },
});

interface MatcherState {
  isNot: boolean;
}

function verdict(state: MatcherState, run: RunRecord, pass: boolean, name: string, expectation: string) {
  const asked = state.isNot ? expectation.replace('expected', 'expected not') : expectation;
  // An errored or interrupted run says nothing of the agent: no expectation of it holds, negated or not.
  if (run.excluded) return { pass: state.isNot, name, message: () => [asked, `  excluded: ${run.excluded!.reason} — ${cut(run.excluded!.detail, TEXT_CHARS)}`, ...explain(run)].join('\n') };
  return { pass, name, message: () => [asked, ...explain(run)].join('\n') };
}

export function explain(run: RunRecord): string[] {
  // Cut as the report cuts them: a flooding claim must not become a 60 MB failure message.
  const claim = `${run.claimed ? 'success' : 'failure'} — "${cut(run.summary, TEXT_CHARS)}"`;
  const oracle = run.verdicts.map((verdict) => `${verdict.holds ? 'holds' : 'does not hold'}: ${cut(verdict.detail, TEXT_CHARS)}`).join('; ') || 'no postconditions';
  const key = keyEvent(run.trace);
  return [
    `  claimed: ${claim}`,
    `  stopped: ${run.stopReason} after ${run.iterations} iteration${run.iterations === 1 ? '' : 's'} (${run.attempts} attempt${run.attempts === 1 ? '' : 's'})`,
    `  oracle:  ${run.actual ? 'actual' : 'not actual'} — ${oracle}`,
    key ? `  trace:   #${key.seq} ${key.type} (attempt ${key.attempt}, iteration ${key.iteration}) ${describe(key)}` : '  trace:   empty',
  ];
}

/** The event that decided the outcome: a stop, a model error, a verification, or the claim itself. */
function keyEvent(trace: readonly TraceEvent[]): TraceEvent | undefined {
  const decisive = ['harness_guardrail_stop', 'model_error', 'harness_verification'];
  return (
    trace.findLast((event) => decisive.includes(event.type)) ??
    trace.findLast((event) => event.type === 'tool_call' && event.name === 'finish') ??
    trace.at(-1)
  );
}

function describe(event: TraceEvent): string {
  switch (event.type) {
    case 'harness_guardrail_stop':
      return `${event.reason}: ${event.detail}`;
    case 'model_error':
      return `${event.kind}: ${event.message}`;
    case 'harness_verification':
      return `${event.ok ? 'confirmed' : 'rejected'}: ${event.detail}`;
    case 'tool_call':
      return `${event.name}(${event.arguments})`;
    default:
      return '';
  }
}
