import type { Agent, AgentResult, AgentRun } from '../core/agent.ts';
import type { Model, Usage } from '../core/model.ts';
import { addUsage } from './types.ts';

/** A cap on what one run's model calls may cost (`maxRunCost`). */
export interface SpendCap {
  /** USD one run may spend. */
  maxUsd: number;
  /** USD of these tokens at the run's model's price. */
  costOf(tokens: Usage): number;
}

/**
 * What one run's model calls have cost, against its cap: every answer's usage, and what a call cut
 * short is counted as (the gateway's estimate). A call is refused once the cap is reached; the run
 * then ends `limit`.
 */
export class RunSpend {
  // An unknown count adds nothing (tokensCost's rule): the gateway estimates what it can.
  private tokens: Usage = { input: 0, output: 0 };
  /** The limit in words, once a call was refused for it. */
  private refusedFor: string | undefined;

  constructor(readonly cap: SpendCap) {}

  add(usage: Usage): void {
    this.tokens = addUsage(this.tokens, { input: usage.input ?? 0, output: usage.output ?? 0, ...(usage.cachedInput !== undefined && { cachedInput: usage.cachedInput }) });
  }

  spentUsd(): number {
    return this.cap.costOf(this.tokens);
  }

  /** Asked before each call: the limit's name (`run cost ($0.5)`) once the cap is reached, which refuses the call; undefined below it. */
  check(): string | undefined {
    if (this.spentUsd() < this.cap.maxUsd) return undefined;
    return (this.refusedFor ??= `run cost ($${this.cap.maxUsd})`);
  }

  /** The limit a call was refused for, if one was. */
  refused(): string | undefined {
    return this.refusedFor;
  }
}

/** A call refused because its run has spent its `maxRunCost`. */
export class SpendLimitReached extends Error {
  override name = 'SpendLimitReached';
}

const spends = new WeakMap<Model, RunSpend>();

/** `model` with every call counted against `spend`, and refused once it is spent. */
export function spendCapped(model: Model, spend: RunSpend): Model {
  const capped: Model = {
    id: model.id,
    async chat(request) {
      const over = spend.check();
      if (over) throw new SpendLimitReached(`the run's cost limit is reached: ${over} (maxRunCost)`);
      const response = await model.chat(request);
      spend.add(response.usage);
      return response;
    },
  };
  spends.set(capped, spend);
  return capped;
}

/** The spend a capped model counts against (the gateway adds the calls it cut short to it), if it is capped. */
export function runSpendOf(model: Model): RunSpend | undefined {
  return spends.get(model);
}

/**
 * `agent` with each run's model calls capped at `cap` (`maxRunCost`), whatever the agent: the
 * built-in harness calls the capped model, a foreign agent's gateway forwards to it. A run whose
 * call was refused ends `limit`, the limit named in its escapes.
 */
export function withRunCost(agent: Agent, cap: SpendCap): Agent {
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
