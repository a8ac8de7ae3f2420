import type { Agent, AgentResult, AgentRun } from '../core/agent.ts';
import type { ChatRequest, Model, Usage } from '../core/model.ts';
import { messageCounter, promptBound, promptTokens } from '../harness/tokens.ts';
import { imageTokens } from './images.ts';
import { addUsage } from './types.ts';

/**
 * The spend caps of a run's model calls: its own (`maxRunCost`) and the budget every run shares
 * (`maxCost`). A cap is held, not only checked: before a call goes out, its worst case is held
 * against each cap, and a call that would pass one is refused; once its usage is known, the hold
 * is settled to it. Calls at once can then never pass a cap together.
 */

/** Output tokens a call holds when it states no allowance (or a smaller one): more than an agent's turn (a tool call, a claim) takes. */
export const DEFAULT_OUTPUT_ALLOWANCE = 4_096;

/** A budget shared with other runs (`maxCost`): each call holds its worst case there too. */
export interface SharedBudget {
  /** The limit's name: `budget ($5)`. */
  readonly detail: string;
  /** Holds `usd` for one call: how to settle it at what the call cost, or undefined when the budget cannot hold it (the call is refused). */
  hold(usd: number): ((usd: number) => void) | undefined;
}

/** The caps on one run's model calls: its own, the shared budget, or both. */
export interface SpendCap {
  /** USD one run may spend (`maxRunCost`). */
  maxUsd?: number;
  /** The budget of every run (`maxCost`). */
  budget?: SharedBudget;
  /** The model spec's `maxTokens`: its provider is asked for no more output, so that is what a call holds. */
  maxOutput?: number;
  /** USD of these tokens at the run's model's price. */
  costOf(tokens: Usage): number;
}

/** A call's worst case, in tokens. */
export interface WorstCase {
  input: number;
  output: number;
}

/** A call let through, its worst case held: settled once, to its usage. */
export interface Hold {
  settle(usage: Usage): void;
}

/**
 * The output tokens a call holds: the model spec's `maxTokens` when it has one (its provider is
 * asked for no more), else the request's own allowance (`max_tokens`…) or the default, whichever
 * is more: the gateway passes no allowance on, so a smaller one bounds nothing.
 */
export function outputAllowance(requested: number | undefined, maxOutput: number | undefined): number {
  return maxOutput ?? Math.max(requested ?? 0, DEFAULT_OUTPUT_ALLOWANCE);
}

/** A call's worst case: its prompt at one token a byte, each image at the most `modelId`'s provider charges for one (2048×768, high detail), and `allowance` out. */
export function worstCase(modelId: string, { messages, tools }: Pick<ChatRequest, 'messages' | 'tools'>, allowance: number): WorstCase {
  return { input: promptBound(messages, tools, imageTokens(modelId, 2048, 768, 'high')), output: allowance };
}

/** A call refused because it would take its run past a spend cap: its limit's name (`run cost ($0.5)`) and option. */
export class SpendLimitReached extends Error {
  override name = 'SpendLimitReached';

  constructor(
    readonly detail: string,
    readonly option: 'maxRunCost' | 'maxCost',
  ) {
    super(`the run's cost limit is reached: ${detail} (${option})`);
  }
}

/**
 * What one run's model calls have cost and hold, against its caps. A call is refused when its
 * worst case would take the run past one; the run is then over (it ends `limit`), and every later
 * call is refused too.
 */
export class RunSpend {
  /** The usage of the calls settled. */
  private tokens: Usage = { input: 0, output: 0 };
  /** USD the calls in flight hold. */
  private held = 0;
  /** The cap a call was refused for, once one was. */
  private refusal: Pick<SpendLimitReached, 'detail' | 'option'> | undefined;

  constructor(readonly cap: SpendCap) {}

  /** USD of the calls settled. */
  spentUsd(): number {
    return this.cap.costOf(this.tokens);
  }

  /** Holds a call's worst case against the caps; throws SpendLimitReached when it would pass one. */
  reserve(worst: WorstCase): Hold {
    const usd = this.cap.costOf(worst);
    const { maxUsd, budget } = this.cap;
    if (!this.refusal && maxUsd !== undefined && this.spentUsd() + this.held + usd > maxUsd) this.refusal = { detail: `run cost ($${maxUsd})`, option: 'maxRunCost' };
    const settleBudget = this.refusal || !budget ? undefined : budget.hold(usd);
    if (!this.refusal && budget && !settleBudget) this.refusal = { detail: budget.detail, option: 'maxCost' };
    if (this.refusal) throw new SpendLimitReached(this.refusal.detail, this.refusal.option);
    this.held += usd;
    let settled = false;
    return {
      settle: (usage) => {
        if (settled) return;
        settled = true;
        this.held -= usd;
        // A count the provider did not give is charged as held: the caps stay bounds.
        const charged = { input: usage.input ?? worst.input, output: usage.output ?? worst.output, ...(usage.cachedInput !== undefined && { cachedInput: usage.cachedInput }) };
        this.tokens = addUsage(this.tokens, charged);
        settleBudget?.(this.cap.costOf(charged));
      },
    };
  }

  /** The limit a call was refused for (`run cost ($0.5)`), if one was. */
  refused(): string | undefined {
    return this.refusal?.detail;
  }
}

const caps = new WeakMap<Model, { spend: RunSpend; model: Model }>();

/**
 * `model` with every call held against `spend`: refused (SpendLimitReached) when its worst case
 * would pass a cap, else settled to its usage; a call cut short to its prompt (the provider has
 * it), a failed one to nothing.
 */
export function spendCapped(model: Model, spend: RunSpend): Model {
  const capped: Model = {
    id: model.id,
    async chat(request) {
      const hold = spend.reserve(worstCase(model.id, request, outputAllowance(undefined, spend.cap.maxOutput)));
      try {
        const response = await model.chat(request);
        hold.settle(response.usage);
        return response;
      } catch (error) {
        hold.settle(request.signal?.aborted ? { input: promptTokens(request.messages, await messageCounter(model.id)), output: 0 } : { input: 0, output: 0 });
        throw error;
      }
    },
  };
  caps.set(capped, { spend, model });
  return capped;
}

/** The spend a capped model holds its calls against, and the model it caps: the gateway holds each call itself, before it records it. */
export function cappedOf(model: Model): { spend: RunSpend; model: Model } | undefined {
  return caps.get(model);
}

/**
 * `agent` with each run's model calls capped (`maxRunCost`, `maxCost`), whatever the agent: the
 * built-in harness calls the capped model, a foreign agent's gateway forwards to it. A run whose
 * call was refused ends `limit`, the limit named in its escapes.
 */
export function withSpendCap(agent: Agent, cap: SpendCap): Agent {
  const run = async (given: AgentRun): Promise<AgentResult> => {
    const spend = new RunSpend(cap);
    // Its getters (secrets, postconditions) stay getters: they are read anew during the run.
    const capped = Object.defineProperties({}, { ...Object.getOwnPropertyDescriptors(given), model: { value: spendCapped(given.model, spend), enumerable: true } }) as AgentRun;
    const result = await agent.run(capped);
    const detail = spend.refused();
    if (detail === undefined) return result;
    const attempts = result.escapes?.attempts ?? [];
    const named = attempts.some((attempt) => attempt.kind === 'limit' && attempt.detail === detail);
    return {
      ...result,
      stopReason: 'limit',
      escapes: { processesLeft: result.escapes?.processesLeft ?? 0, attempts: named ? attempts : [...attempts, { kind: 'limit', detail }] },
    };
  };
  // The agent's own properties (a condition that is a getter included), its run capped.
  return Object.defineProperties({}, { ...Object.getOwnPropertyDescriptors(agent), run: { value: run, enumerable: true } }) as Agent;
}
