import type { Claim } from '../tools/browser.ts';
import type { RunContext } from './context.ts';
import type { StopReason } from './trace.ts';

export interface AttemptOutcome {
  stopReason: StopReason;
  claim?: Claim;
  error?: string;
}

/**
 * A named unit of harness behaviour, plugged into the loop through hooks. Layers run in the order
 * of the stack; `aroundAttempt` wraps the whole attempt (the outermost layer first).
 */
export interface Layer {
  readonly name: string;
  /** Before each model call: trim context, enforce budgets (may stop the run). */
  beforeModel?(run: RunContext): void | Promise<void>;
  /** After the tool calls of a turn: react to where the browser is (a login wall). */
  afterTools?(run: RunContext): void | Promise<void>;
  /** When the model claims an outcome: answers the claim the harness will report. */
  onFinish?(run: RunContext, claim: Claim): Claim | Promise<Claim>;
  aroundAttempt?(run: RunContext, attempt: () => Promise<AttemptOutcome>): Promise<AttemptOutcome>;
}
