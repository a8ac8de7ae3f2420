import { readFileSync } from 'node:fs';
import { pricedModel, priceOf, tokensCost } from '../report/cost.ts';
import type { PriceTable } from '../report/types.ts';
import type { ExportedRun } from './runs.ts';

/** What both exports say of a run alike: who made it, the model as its provider names it, the reward, what a call cost. */

/** This package's version: the built-in harness's, and the exporter's. */
export const HARNESS_EVAL_VERSION: string = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).version;

/** `openai:gpt-4o-mini` is model `gpt-4o-mini` of provider `openai`; an id without a provider is its own model, of none known. */
export function modelOf(run: ExportedRun): { id: string; provider: string; name: string } {
  const id = pricedModel(run);
  const colon = id.indexOf(':');
  return colon > 0 ? { id, provider: id.slice(0, colon), name: id.slice(colon + 1) } : { id, provider: 'unknown', name: id };
}

/**
 * The oracle's verdict as a reward: 1 when it found the task done, 0 when not, whatever was
 * claimed; null when it could not judge, or the run says nothing of the agent.
 */
export function rewardOf(run: ExportedRun): number | null {
  if (!run.judged || run.excluded) return null;
  return run.actual ? 1 : 0;
}

/** USD for one model call's tokens, when the run's model has a price and the call's tokens are known. */
export function callCost(run: ExportedRun, prices: PriceTable | undefined, usage: { input: number | null; output: number | null }): number | undefined {
  const price = priceOf(prices, modelOf(run).id);
  // No count at all prices nothing, rather than a cost of 0.
  if (!price || (usage.input === null && usage.output === null)) return undefined;
  return tokensCost(usage, price);
}
