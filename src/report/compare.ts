import { InputError, parseInput, readJsonFile } from '../input.ts';
import { formatInterval } from './files.ts';
import { cellKey, cellLabel } from './summarize.ts';
import { summarySchema, type Cell, type Interval, type Summary } from './types.ts';

/** One cell's change between a baseline summary and a new one. */
export interface CellChange {
  cell: string;
  status: 'changed' | 'added' | 'removed';
  successRate: { before?: Interval; after?: Interval };
  falseSuccessRate: { before?: Interval; after?: Interval };
  /** The rates whose 95% intervals no longer overlap: a change the trials can vouch for. */
  flagged: Array<'success rate' | 'false-success rate'>;
}

/** Cells matched by task × model × layers × site; a rate is flagged when its intervals are disjoint. */
export function compareSummaries(baseline: Summary, current: Summary): CellChange[] {
  const before = new Map(baseline.cells.map((cell) => [cellKey(cell), cell]));
  const after = new Map(current.cells.map((cell) => [cellKey(cell), cell]));
  const keys = [...new Set([...before.keys(), ...after.keys()])].sort();
  return keys.map((key) => change(before.get(key), after.get(key)));
}

function change(before: Cell | undefined, after: Cell | undefined): CellChange {
  const cell = cellLabel((after ?? before)!);
  const status = !before ? 'added' : !after ? 'removed' : 'changed';
  const flagged: CellChange['flagged'] = [];
  if (before && after && disjoint(before.successRate, after.successRate)) flagged.push('success rate');
  if (before && after && disjoint(before.falseSuccessRate, after.falseSuccessRate)) flagged.push('false-success rate');
  return {
    cell,
    status,
    successRate: { before: before?.successRate, after: after?.successRate },
    falseSuccessRate: { before: before?.falseSuccessRate, after: after?.falseSuccessRate },
    flagged,
  };
}

function disjoint(a: Interval, b: Interval): boolean {
  return a.high < b.low || b.high < a.low;
}

/** The comparison as text, a line per cell: `cell: success 20% (…) → 80% (…), false success …  ⚑ success rate`. */
export function renderComparison(changes: readonly CellChange[]): string {
  const rate = (label: string, { before, after }: { before?: Interval; after?: Interval }) =>
    `${label} ${before ? formatInterval(before) : '—'} → ${after ? formatInterval(after) : '—'}`;
  const lines = changes.map((entry) => {
    const flag = entry.flagged.length > 0 ? `  ⚑ ${entry.flagged.join(', ')} changed beyond the intervals` : '';
    const status = entry.status === 'changed' ? '' : ` (${entry.status})`;
    return `${entry.cell}${status}: ${rate('success', entry.successRate)}; ${rate('false success', entry.falseSuccessRate)}${flag}`;
  });
  const flaggedCount = changes.filter((entry) => entry.flagged.length > 0).length;
  return [...lines, `${changes.length} cells compared, ${flaggedCount} flagged`].join('\n');
}

/** A summary.json from disk, checked against its schema: a one-line error names the file and field. */
export function readSummary(path: string): Summary {
  return readJsonFile(path, summarySchema, 'summary.json');
}
