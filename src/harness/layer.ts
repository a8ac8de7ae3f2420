import type { ChatResponse, ToolCall } from '../models/types.ts';
import type { Claim } from '../tools/browser.ts';
import type { Tool, ToolOutcome } from '../tools/registry.ts';
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
  /** At the start of each attempt: the tools offered to the model, to add to (a `more` tool) or narrow (a read-only profile). */
  tools?(run: RunContext, tools: readonly Tool[]): readonly Tool[];
  /** Before each model call: trim context, enforce budgets (may stop the run). */
  beforeModel?(run: RunContext): void | Promise<void>;
  /** After each model answer, before its tool calls run: notice repetition (may stop the run). */
  afterModel?(run: RunContext, response: ChatResponse): void | Promise<void>;
  /** Around each tool call, outermost layer first: deny it, wait for approval, settle the page, reshape the output. */
  aroundTool?(run: RunContext, call: ToolCall, next: () => Promise<ToolOutcome>): Promise<ToolOutcome>;
  /** After the tool calls of a turn: react to where the browser is (a login wall). */
  afterTools?(run: RunContext): void | Promise<void>;
  /** When the model claims an outcome: answers the claim the harness will report. */
  onFinish?(run: RunContext, claim: Claim): Claim | Promise<Claim>;
  aroundAttempt?(run: RunContext, attempt: () => Promise<AttemptOutcome>): Promise<AttemptOutcome>;
}
