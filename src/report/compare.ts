import { z } from 'zod';
import { parseInput, readJsonFile } from '../input.ts';
import { formatInterval } from './files.ts';
import { cellKey, cellLabel, type CellKeys } from './summarize.ts';
import { summarySchema, summaryV1Schema, type Interval } from './types.ts';

/** The rates a comparison reads, in the order it prints them. */
const rates = [
  ['successRate', 'success', 'success rate'],
  ['falseSuccessRate', 'false success', 'false-success rate'],
  ['falseFailureRate', 'false failure', 'false-failure rate'],
  ['sideEffectRate', 'side effects', 'side-effect rate'],
] as const;
type RateKey = (typeof rates)[number][0];
type RateName = (typeof rates)[number][2];

/**
 * A cell as a comparison reads it, from a summary of either version: a version 1 summary has no
 * false-failure or side-effect rate, and those are absent (unknown), never 0.
 */
export type ComparableCell = CellKeys & { successRate: Interval; falseSuccessRate: Interval; falseFailureRate?: Interval; sideEffectRate?: Interval };
export interface ComparableSummary {
  schemaVersion: 1 | 2;
  cells: readonly ComparableCell[];
}

/** One cell's change between a baseline summary and a new one; a rate a summary lacks is undefined there. */
export interface CellChange extends Record<RateKey, { before?: Interval; after?: Interval }> {
  cell: string;
  status: 'changed' | 'added' | 'removed';
  /** The rates whose 95% intervals no longer overlap: a change the trials can vouch for. */
  flagged: RateName[];
}

/** Cells matched by their labels; a rate is flagged when its intervals are disjoint. */
export function compareSummaries(baseline: ComparableSummary, current: ComparableSummary): CellChange[] {
  const before = new Map(baseline.cells.map((cell) => [cellKey(cell), cell]));
  const after = new Map(current.cells.map((cell) => [cellKey(cell), cell]));
  const keys = [...new Set([...before.keys(), ...after.keys()])].sort();
  return keys.map((key) => change(before.get(key), after.get(key)));
}

function change(before: ComparableCell | undefined, after: ComparableCell | undefined): CellChange {
  const status = !before ? 'added' : !after ? 'removed' : 'changed';
  const flagged: RateName[] = [];
  const entry = { cell: cellLabel((after ?? before)!), status, flagged } as CellChange;
  for (const [key, , name] of rates) {
    entry[key] = { before: before?.[key], after: after?.[key] };
    const { before: was, after: is } = entry[key];
    if (was && is && disjoint(was, is)) flagged.push(name);
  }
  return entry;
}

function disjoint(a: Interval, b: Interval): boolean {
  return a.high < b.low || b.high < a.low;
}

/** The comparison as text, a line per cell: `cell: success 20% (…) → 80% (…); false success …  ⚑ success rate`. */
export function renderComparison(changes: readonly CellChange[]): string {
  const shown = (interval?: Interval) => (interval ? formatInterval(interval) : '—');
  const lines = changes.map((entry) => {
    const flag = entry.flagged.length > 0 ? `  ⚑ ${entry.flagged.join(', ')} changed beyond the intervals` : '';
    const status = entry.status === 'changed' ? '' : ` (${entry.status})`;
    const parts = rates.map(([key, label]) => `${label} ${shown(entry[key].before)} → ${shown(entry[key].after)}`);
    return `${entry.cell}${status}: ${parts.join('; ')}${flag}`;
  });
  const flaggedCount = changes.filter((entry) => entry.flagged.length > 0).length;
  return [...lines, `${changes.length} cells compared, ${flaggedCount} flagged`].join('\n');
}

/**
 * A summary.json from disk, version 1 or 2, checked against its version's schema: a one-line
 * error names the file and field. Version 1 is read as it is: what it lacks stays absent.
 */
export function readSummary(path: string): ComparableSummary {
  const value = readJsonFile(path, z.record(z.string(), z.unknown()), 'summary.json');
  return parseInput(value.schemaVersion === 1 ? summaryV1Schema : summarySchema, value, path);
}
