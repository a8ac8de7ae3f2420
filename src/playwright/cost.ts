import { appendFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { InputError, parseInput } from '../input.ts';
import { modelSchemes } from '../models/registry.ts';
import { priceOf, tokensCost } from '../report/cost.ts';
import { priceTableSchema, type PriceTable } from '../report/types.ts';

/**
 * Prices, the `maxRunCost` cap of one run, and the `maxCost` budget. Workers are separate
 * processes, so what a run spent goes into a run-wide ledger: an append-only file in a folder the
 * runner makes before any worker starts (the reporter's onBegin, or sharedBrowser()'s
 * globalSetup), named in an environment variable that every worker inherits.
 */

/** The prices, keyed by model ids whose provider harness-eval knows: a misspelled provider would price nothing. */
export const pricesSchema = priceTableSchema.superRefine((prices, check) => {
  for (const id of Object.keys(prices)) {
    const scheme = /^([a-z]+):./.exec(id)?.[1];
    if (!scheme || !(modelSchemes as readonly string[]).includes(scheme)) {
      check.addIssue({ code: 'custom', path: [id], message: `unknown provider${scheme ? ` "${scheme}"` : ''} (a model id is provider:name, provider one of ${modelSchemes.join(', ')})` });
    }
  }
});

const usdSchema = z.number().finite().positive('must be more than 0 (USD)').optional();
const costOptionsSchema = z.object({ prices: pricesSchema.optional(), maxCost: usdSchema, maxRunCost: usdSchema });

/** The `prices`, `maxCost` and `maxRunCost` options (`use`), checked: a bad one is one line naming the field. */
export function parseCostOptions(options: { prices?: unknown; maxCost?: unknown; maxRunCost?: unknown }): z.output<typeof costOptionsSchema> {
  return parseInput(costOptionsSchema, options, 'harness-eval options');
}

/** USD for a run of `model` with these tokens, when the model has a price. */
export function runCost(prices: PriceTable | undefined, model: string, tokens: Parameters<typeof tokensCost>[0]): number | undefined {
  const price = priceOf(prices, model);
  return price && tokensCost(tokens, price);
}

/**
 * Whether runs of `model` have a cost to count: a price in `prices`, or none needed. An offline
 * double (`scripted:`) makes no paid call: unpriced, it costs nothing.
 */
export function priced(prices: PriceTable | undefined, model: string): boolean {
  return model.startsWith('scripted:') || priceOf(prices, model) !== undefined;
}

/** How the runner tells its workers where the run's ledger is. */
export const LEDGER_ENV = 'HARNESS_EVAL_LEDGER';
/** The skip reason of a run the budget stopped; the reporter reports such tests as not run. */
export const BUDGET_SPENT = 'budget spent';

/**
 * Makes the run's ledger unless one is made already, and answers how to remove it (nothing when
 * it was not made here). Call it in the runner, before the workers start.
 */
export function openRunLedger(env: NodeJS.ProcessEnv = process.env): () => void {
  if (env[LEDGER_ENV]) return () => undefined;
  const dir = mkdtempSync(join(tmpdir(), 'harness-eval-ledger-'));
  env[LEDGER_ENV] = dir;
  return () => {
    delete env[LEDGER_ENV];
    rmSync(dir, { recursive: true, force: true });
  };
}

/** The run-wide ledger, as a worker sees it. */
export function runLedger(env: NodeJS.ProcessEnv = process.env) {
  const dir = env[LEDGER_ENV];
  if (!dir) throw new InputError(`maxCost: this run has no ledger (${LEDGER_ENV}): add harness-eval/reporter to the config's reporters, or sharedBrowser()'s globalSetup`);
  const file = join(dir, 'spent');
  return {
    /** USD the run's workers have spent so far. */
    spent(): number {
      let text = '';
      try {
        text = readFileSync(file, 'utf8');
      } catch {
        // No run has ended yet.
      }
      // A line that is not a cost (a negative one an uncontained agent appended) spends nothing, never gives back.
      return text.split('\n').reduce((sum, line) => sum + Math.max(0, Number(line) || 0), 0);
    },
    /** One line per run: appends of a few bytes are whole, so workers never mix their lines. */
    add(usd: number): void {
      appendFileSync(file, `${usd}\n`);
    },
  };
}

/** The reason a run is not started: `budget spent: $0.0123 of maxCost $0.0100`. */
export function budgetSpentReason(spent: number, maxCost: number): string {
  return `${BUDGET_SPENT}: $${spent.toFixed(4)} of maxCost $${maxCost.toFixed(4)}`;
}
