import { randomBytes } from 'node:crypto';
import { appendFileSync, closeSync, fstatSync, mkdtempSync, openSync, readSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { InputError, parseInput } from '../input.ts';
import { ownFolder } from '../leftovers.ts';
import { modelSchemes } from '../models/registry.ts';
import type { SharedBudget } from '../models/spend.ts';
import { priceOf, tokensCost } from '../report/cost.ts';
import { priceTableSchema, type PriceTable } from '../report/types.ts';

/**
 * Prices, the `maxRunCost` cap of one run, and the `maxCost` budget. Workers are separate
 * processes, so the budget is a run-wide ledger: an append-only file in a folder the runner makes
 * before any worker starts (the reporter's onBegin, or sharedBrowser()'s globalSetup), named in an
 * environment variable that every worker inherits. Each model call holds its worst case there
 * before it goes out, and settles it to its cost once known.
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
  const dir = mkdtempSync(join(tmpdir(), ownFolder('ledger')));
  env[LEDGER_ENV] = dir;
  return () => {
    delete env[LEDGER_ENV];
    rmSync(dir, { recursive: true, force: true });
  };
}

/** What the ledger says: USD spent by the calls settled and held by those in flight, the largest hold it granted, and the first it refused (0: none). */
export interface LedgerState {
  usd: number;
  largestHold: number;
  refusedHold: number;
}

/**
 * The ledger's lines, tallied in order: `hold ID USD MAXCOST` is granted when what is spent and
 * held before it, with it, stays within its MAXCOST; `settle ID USD` puts a granted hold at what its
 * call cost, once. Each hold is decided by the lines before it alone, so every worker decides
 * alike, whatever it read after. A line that is none of these (an uncontained agent's) counts
 * nothing and gives nothing back.
 */
class Tally implements LedgerState {
  usd = 0;
  largestHold = 0;
  refusedHold = 0;
  private readonly holds = new Map<string, { usd: number; settled: boolean }>();

  add(line: string): void {
    const [kind, id, amount, cap] = line.split(' ');
    const usd = Number(amount);
    if (!id || !Number.isFinite(usd) || usd < 0) return;
    if (kind === 'hold' && !this.holds.has(id)) {
      if (this.usd + usd > Number(cap) || Number.isNaN(Number(cap))) {
        this.refusedHold ||= usd;
        return;
      }
      this.holds.set(id, { usd, settled: false });
      this.usd += usd;
      this.largestHold = Math.max(this.largestHold, usd);
    }
    const hold = this.holds.get(id);
    if (kind === 'settle' && hold && !hold.settled) {
      this.usd += usd - hold.usd;
      Object.assign(hold, { usd, settled: true });
    }
  }

  granted(id: string): boolean {
    return this.holds.has(id);
  }
}

/** The run-wide ledger, as a worker sees it: read as it grows, from where it was read last. */
export function runLedger(env: NodeJS.ProcessEnv = process.env) {
  const dir = env[LEDGER_ENV];
  if (!dir) throw new InputError(`maxCost: this run has no ledger (${LEDGER_ENV}): add harness-eval/reporter to the config's reporters, or sharedBrowser()'s globalSetup`);
  const file = join(dir, 'spent');
  const tally = new Tally();
  let offset = 0;
  let partial = '';
  const read = (): Tally => {
    let fd: number;
    try {
      fd = openSync(file, 'r');
    } catch {
      // No call has been held yet.
      return tally;
    }
    try {
      const size = fstatSync(fd).size;
      if (size <= offset) return tally;
      const added = Buffer.alloc(size - offset);
      offset += readSync(fd, added, 0, added.length, offset);
      const lines = (partial + added.toString('utf8')).split('\n');
      partial = lines.pop()!;
      for (const line of lines) tally.add(line);
      return tally;
    } finally {
      closeSync(fd);
    }
  };
  // One line each: appends of a few bytes are whole, so workers never mix their lines.
  const append = (line: string) => appendFileSync(file, `${line}\n`);
  return {
    /** What the run's calls have spent and hold so far. */
    spent(): LedgerState {
      const { usd, largestHold, refusedHold } = read();
      return { usd, largestHold, refusedHold };
    },
    /** `maxCost` as a run's calls hold against it. */
    budget(maxCost: number): SharedBudget {
      return {
        detail: `budget ($${maxCost})`,
        hold(usd) {
          const id = randomBytes(9).toString('base64url');
          append(`hold ${id} ${usd} ${maxCost}`);
          if (!read().granted(id)) return undefined;
          return (cost) => append(`settle ${id} ${cost}`);
        },
      };
    },
  };
}

/**
 * Why no further run starts under `maxCost` (`budget spent: $4.9000 of maxCost $5.0000, …`), or
 * undefined. A run starts while no call was refused for the budget and it could still hold a call
 * as large as any it held: a run started past that would be cut at its first call, and counted.
 */
export function budgetSpent({ usd, largestHold, refusedHold }: LedgerState, maxCost: number): string | undefined {
  const spent = `${BUDGET_SPENT}: $${usd.toFixed(4)} of maxCost $${maxCost.toFixed(4)}`;
  if (usd >= maxCost) return spent;
  if (refusedHold > 0) return `${spent}: a call's worst case did not fit ($${refusedHold.toFixed(4)})`;
  if (usd + largestHold > maxCost) return `${spent}: too little for a call as large as one it held ($${largestHold.toFixed(4)})`;
  return undefined;
}
