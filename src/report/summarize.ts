import { stopReasons } from '../harness/trace.ts';
import { parseInput } from '../input.ts';
import { describe, passHatKTable, wilson } from './statistics.ts';
import { gateSchema, type Cell, type Gate, type PriceTable, type ReportedRun, type Summary } from './types.ts';

/** What names a cell: one task, model, layer stack and site. */
export type CellKeys = Pick<Cell, 'task' | 'model' | 'layers' | 'site'>;

export interface SummarizeOptions {
  /** Per-million-token prices; a cell gets a `cost` only when its model is listed. */
  prices?: PriceTable;
  /** False while the run is still going (progress) or was interrupted. */
  complete: boolean;
  /** The time stamped into `generatedAt`; fixed in tests. */
  now?: Date;
}

/**
 * Groups judged runs into cells and computes each cell's rates, intervals, distributions and
 * costs. One pass groups the runs; each cell's numbers are then linear in its runs, so 10,000 runs
 * take milliseconds. The result does not depend on the runs' order (merged shards arrive in any).
 */
export function summarize(runs: readonly ReportedRun[], { prices, complete, now = new Date() }: SummarizeOptions): Summary {
  const cells = [...groupByCell(runs).values()].map((cellRuns) => summarizeCell(cellRuns, prices)).sort(compareCells);
  const totals = { runs: 0, successes: 0, falseSuccesses: 0, falseFailures: 0, sideEffectRuns: 0, incomplete: 0, retried: 0 };
  for (const cell of cells) for (const key of Object.keys(totals) as Array<keyof typeof totals>) totals[key] += cell[key];
  return { schemaVersion: 2, generatedAt: now.toISOString(), complete, planned: runs.length, recorded: runs.length, missing: [], totals, cells };
}

/** A string that is equal exactly when two cells' keys are; NUL cannot occur in the names. */
export function cellKey({ task, model, layers, site }: CellKeys): string {
  return `${task}\u0000${model}\u0000${layers}\u0000${site}`;
}

/** How a cell is named to a person: `upvote-first-post · scripted:overclaimer · bare · hn-recorded`. */
export function cellLabel({ task, model, layers, site }: CellKeys): string {
  return `${task} · ${model} · ${layers} · ${site}`;
}

/** The runs of each cell, in input order, keyed by `cellKey`. */
export function groupByCell(runs: readonly ReportedRun[]): Map<string, ReportedRun[]> {
  const groups = new Map<string, ReportedRun[]>();
  for (const run of runs) {
    const key = cellKey(run);
    const group = groups.get(key);
    if (group) group.push(run);
    else groups.set(key, [run]);
  }
  return groups;
}

/** Orders cells by task, model, layers, site; code-unit order, so it is the same in every locale. */
export function compareCells(a: CellKeys, b: CellKeys): number {
  return compareStrings(a.task, b.task) || compareStrings(a.model, b.model) || compareStrings(a.layers, b.layers) || compareStrings(a.site, b.site);
}

function summarizeCell(runs: readonly ReportedRun[], prices: PriceTable | undefined): Cell {
  const { task, model, layers, site } = runs[0]!;
  let successes = 0;
  let claimed = 0;
  let falseSuccesses = 0;
  let falseFailures = 0;
  let sideEffectRuns = 0;
  let incomplete = 0;
  let retried = 0;
  let unsupportedClaims = 0;
  const tokens = { input: 0, output: 0, unknownRuns: 0 };
  const reasonCounts = new Map<string, number>();
  for (const run of runs) {
    if (run.actual) successes++;
    if (run.claimed) claimed++;
    if (run.falseSuccess) falseSuccesses++;
    if (run.falseFailure) falseFailures++;
    if (run.sideEffects.length > 0) sideEffectRuns++;
    if (run.incomplete) incomplete++;
    if (run.test.retry > 0) retried++;
    if (run.unsupportedClaim) unsupportedClaims++;
    if (run.tokens.input === null || run.tokens.output === null) tokens.unknownRuns++;
    tokens.input += run.tokens.input ?? 0;
    tokens.output += run.tokens.output ?? 0;
    reasonCounts.set(run.stopReason, (reasonCounts.get(run.stopReason) ?? 0) + 1);
  }
  const n = runs.length;
  const price = prices && Object.hasOwn(prices, model) ? prices[model] : undefined;
  return {
    task,
    model,
    layers,
    site,
    runs: n,
    successes,
    claimed,
    falseSuccesses,
    falseFailures,
    sideEffectRuns,
    incomplete,
    retried,
    unsupportedClaims,
    successRate: wilson(successes, n),
    // Over all runs, not over claims: the chance that a run of this cell misleads you.
    falseSuccessRate: wilson(falseSuccesses, n),
    falseFailureRate: wilson(falseFailures, n),
    sideEffectRate: wilson(sideEffectRuns, n),
    iterations: describe(runs.map((run) => run.iterations)),
    tokens,
    ...(price && { cost: (tokens.input / 1e6) * price.input + (tokens.output / 1e6) * price.output }),
    wallMs: { median: describe(runs.map((run) => run.wallMs)).median },
    stopReasons: inCanonicalOrder(reasonCounts),
    passHatK: passHatKTable(successes, n),
    runIds: runs.map((run) => run.test.id).sort(compareStrings),
  };
}

/** Stop-reason counts keyed in the trace's own order, so the JSON does not depend on run order. */
function inCanonicalOrder(counts: ReadonlyMap<string, number>): Record<string, number> {
  const ordered: Record<string, number> = {};
  for (const reason of stopReasons) {
    const count = counts.get(reason);
    if (count) ordered[reason] = count;
  }
  return ordered;
}

function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** A cell outside a gate's limits. */
export interface GateBreach {
  /** The cell's label, `task · model · layers · site`. */
  cell: string;
  /** What was broken, with the observed and allowed values: `false-success rate 1.00 > 0.00`. */
  rule: string;
  observed: number;
  limit: number;
  /** The breached gate's position in the list given. */
  gate: number;
}

/**
 * Checks every cell against the gates that match it (every key the gate gives equals the cell's).
 * Limits compare the observed rate, not an interval bound: a gate states what was seen must hold.
 * The gates are validated first, so a bad option fails in one line before anything is judged.
 */
export function checkGates(summary: Summary, gates: readonly Gate[]): GateBreach[] {
  const parsed = gates.map((gate, index) => parseInput(gateSchema, gate, `gates[${index}]`));
  const breaches: GateBreach[] = [];
  parsed.forEach((gate, index) => {
    for (const cell of summary.cells) {
      if (!gateMatches(gate, cell)) continue;
      const falseSuccessRate = cell.falseSuccessRate.value;
      if (falseSuccessRate > gate.maxFalseSuccessRate) {
        breaches.push(breach(cell, index, 'false-success rate', falseSuccessRate, '>', gate.maxFalseSuccessRate));
      }
      const successRate = cell.successRate.value;
      if (gate.minSuccessRate !== undefined && successRate < gate.minSuccessRate) {
        breaches.push(breach(cell, index, 'success rate', successRate, '<', gate.minSuccessRate));
      }
    }
  });
  return breaches;
}

function gateMatches(gate: Partial<CellKeys>, cell: CellKeys): boolean {
  return (
    (gate.task === undefined || gate.task === cell.task) &&
    (gate.model === undefined || gate.model === cell.model) &&
    (gate.layers === undefined || gate.layers === cell.layers) &&
    (gate.site === undefined || gate.site === cell.site)
  );
}

function breach(cell: CellKeys, gate: number, what: string, observed: number, comparison: '>' | '<', limit: number): GateBreach {
  const [shownObserved, shownLimit] = formatDistinct(observed, limit);
  return { cell: cellLabel(cell), rule: `${what} ${shownObserved} ${comparison} ${shownLimit}`, observed, limit, gate };
}

/** Two decimals, or more when two decimals would show a breach as `0.00 > 0.00`. */
function formatDistinct(a: number, b: number): [string, string] {
  for (let digits = 2; digits < 8; digits++) {
    if (a.toFixed(digits) !== b.toFixed(digits)) return [a.toFixed(digits), b.toFixed(digits)];
  }
  return [String(a), String(b)];
}
