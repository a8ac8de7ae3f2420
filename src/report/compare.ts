import { z } from 'zod';
import { InputError, parseInput, readJsonFile } from '../input.ts';
import { counted, formatCount, formatDifference, formatInterval } from './format.ts';
import { canDetectAnyChange, excludesZero, newcombe, trialsToDetect } from './statistics.ts';
import { cellKey, cellLabel, type CellKeys } from './summarize.ts';
import { comparedRates, summarySchema, summaryV1Schema, summaryV2Schema, summaryV3Schema, type CellChange, type Comparison, type Interval, type PartialReasons } from './types.ts';

/** Each compared rate's short name (in the line) and its full name (in the flag). */
export const rateNames: Record<(typeof comparedRates)[number], [short: string, full: string]> = {
  successRate: ['success', 'success rate'],
  falseSuccessRate: ['false success', 'false-success rate'],
  falseFailureRate: ['false failure', 'false-failure rate'],
  sideEffectRate: ['side effects', 'side-effect rate'],
};

/**
 * A cell as a comparison reads it, from a summary of either version: a version 1 summary has no
 * false-failure or side-effect rate, and those are absent (unknown), never 0.
 */
export type ComparableCell = CellKeys & { runs: number; successRate: Interval; falseSuccessRate: Interval; falseFailureRate?: Interval; sideEffectRate?: Interval };
export interface ComparableSummary {
  schemaVersion: 1 | 2 | 3 | 4;
  generatedAt: string;
  complete: boolean;
  /** Only version 4 says what part of the suite it ran; older ones read as the whole suite. */
  partial?: PartialReasons;
  cells: readonly ComparableCell[];
}

/**
 * Cells matched by their labels. A rate is flagged when the 95% Newcombe interval of its
 * difference excludes 0; a cell whose trial counts could not tell even all from none is marked
 * `tooFewTrials`, so silence is never read as "nothing changed". A change left undecided says how
 * many trials per cell would decide it, when the current summary is whole (see summarize).
 */
export function compareSummaries(baseline: ComparableSummary, current: ComparableSummary): CellChange[] {
  const before = new Map(baseline.cells.map((cell) => [cellKey(cell), cell]));
  const after = new Map(current.cells.map((cell) => [cellKey(cell), cell]));
  const keys = [...new Set([...before.keys(), ...after.keys()])].sort();
  return keys.map((key) => change(before.get(key), after.get(key), current.complete));
}

/** The comparison a summary carries: its baseline's source and date, and every cell's change. */
export function comparison(baseline: ComparableSummary, source: string, current: ComparableSummary): Comparison {
  return { baseline: { source, generatedAt: baseline.generatedAt }, cells: compareSummaries(baseline, current) };
}

function change(before: ComparableCell | undefined, after: ComparableCell | undefined, trials: boolean): CellChange {
  const entry: CellChange = {
    cell: cellLabel((after ?? before)!),
    status: !before ? 'added' : !after ? 'removed' : 'changed',
    runs: { before: before?.runs, after: after?.runs },
    successRate: {},
    falseSuccessRate: {},
    falseFailureRate: {},
    sideEffectRate: {},
    flagged: [],
    tooFewTrials: !!before && !!after && !canDetectAnyChange(before.runs, after.runs),
  };
  for (const key of comparedRates) {
    const was = before?.[key];
    const is = after?.[key];
    entry[key] = { ...(was && { before: was }), ...(is && { after: is }) };
    if (!was || !is) continue;
    // A rate is a count over the cell's runs, so the counts come back exactly.
    const [x1, n1, x2, n2] = [Math.round(is.value * after!.runs), after!.runs, Math.round(was.value * before!.runs), before!.runs];
    const difference = newcombe(x1, n1, x2, n2);
    entry[key].difference = difference;
    if (excludesZero(difference)) entry.flagged.push(rateNames[key][1]);
    else if (trials && n1 > 0 && n2 > 0 && x1 / n1 !== x2 / n2) {
      const needed = trialsToDetect(x2 / n2, x1 / n1);
      if (needed !== undefined) entry[key].trialsToTell = needed;
    }
  }
  return entry;
}

/** What would decide the changes the trials leave undecided: `trials per cell that would decide them: success rate 40, false-success rate 120`; none when nothing is left undecided. */
export function undecidedChanges(entry: CellChange): string | undefined {
  const needed = comparedRates.flatMap((key) => (entry[key].trialsToTell === undefined ? [] : [`${rateNames[key][1]} ${formatCount(entry[key].trialsToTell!)}`]));
  return needed.length > 0 ? `trials per cell that would decide ${needed.length === 1 ? 'it' : 'them'}: ${needed.join(', ')}` : undefined;
}

/**
 * What a comparison cannot compare, in one line: `the baseline's cells differ from this run's: 1
 * added, 2 removed`; undefined when both ran the same cells. Said apart, since the rates of a
 * matrix that changed shape are not like with like.
 */
export function cellsDiffer(changes: readonly CellChange[]): string | undefined {
  const added = changes.filter((entry) => entry.status === 'added').length;
  const removed = changes.filter((entry) => entry.status === 'removed').length;
  if (added + removed === 0) return undefined;
  return `the baseline's cells differ from this run's: ${[added > 0 && `${formatCount(added)} added`, removed > 0 && `${formatCount(removed)} removed`].filter(Boolean).join(', ')} (compared: the cells both have)`;
}

/** The comparison as text, a line per cell: `cell: success 20% (…) → 80% (…); false success …  ⚑ success rate`. */
export function renderComparison(changes: readonly CellChange[]): string {
  const shown = (interval?: Interval) => (interval ? formatInterval(interval) : '—');
  const lines = changes.map((entry) => {
    const flag = entry.flagged.length > 0 ? `  ⚑ ${entry.flagged.join(', ')} changed (95% interval of the difference excludes 0)` : '';
    const few = entry.tooFewTrials ? `  (too few trials to detect any change: ${entry.runs.before} → ${entry.runs.after})` : '';
    const undecided = undecidedChanges(entry);
    const status = entry.status === 'changed' ? '' : ` (${entry.status})`;
    const parts = comparedRates.map((key) => {
      const { before, after, difference } = entry[key];
      return `${rateNames[key][0]} ${shown(before)} → ${shown(after)}${difference ? ` [${formatDifference(difference)}]` : ''}`;
    });
    return `${entry.cell}${status}: ${parts.join('; ')}${flag}${few}${undecided ? `  (${undecided})` : ''}`;
  });
  const flaggedCount = changes.filter((entry) => entry.flagged.length > 0).length;
  const fewCount = changes.filter((entry) => entry.tooFewTrials).length;
  const few = fewCount > 0 ? `, ${fewCount} with too few trials to detect any change` : '';
  return [...lines, `${counted(changes.length, 'cell')} compared, ${flaggedCount} flagged${few}`].join('\n');
}

/**
 * A summary.json from disk, of any version, checked against its version's schema: a one-line
 * error names the file and field. Older versions are read as they are: what they lack stays absent.
 */
export function readSummary(path: string): ComparableSummary {
  const value = readJsonFile(path, z.record(z.string(), z.unknown()), 'summary.json');
  const schema = [summaryV1Schema, summaryV2Schema, summaryV3Schema][Number(value.schemaVersion) - 1] ?? summarySchema;
  return parseInput(schema, value, path);
}

/** Every reason a summary is partial: what it selected of the suite, then what it fell short of. */
export function partialReasons(partial: PartialReasons): string[] {
  return [...partial.selection, ...partial.shortfall];
}

/** What a summary ran of the suite, in words: `the whole suite`, or its selection (`shard 1/2; grep upvote`). */
export function describeSelection(selection: readonly string[]): string {
  return selection.length === 0 ? 'the whole suite' : selection.join('; ');
}

/**
 * Why a summary can be no baseline at all: it failed to record part of what it selected
 * (interrupted, runs missing). Versions 1–3 say only `complete`.
 */
export function shortfallOf(summary: Pick<ComparableSummary, 'complete' | 'partial'>): string[] {
  const shortfall = summary.partial?.shortfall ?? [];
  return shortfall.length > 0 || summary.complete ? shortfall : ['not complete'];
}

/**
 * Why `baseline` cannot be compared with a run that selected `selection`, or undefined when it can:
 * like with like, a baseline that recorded all it selected, and selected what this run did.
 */
export function baselineMismatch(baseline: Pick<ComparableSummary, 'complete' | 'partial'>, selection: readonly string[]): string | undefined {
  const shortfall = shortfallOf(baseline);
  if (shortfall.length > 0) return `it is partial (${shortfall.join('; ')})`;
  const theirs = baseline.partial?.selection ?? [];
  if (describeSelection(theirs) !== describeSelection(selection)) return `it ran ${describeSelection(theirs)}, this run ${describeSelection(selection)}`;
  return undefined;
}

/** A summary.json named as a baseline: refused in one line when it fell short of what it selected. */
export function readBaseline(path: string): ComparableSummary {
  const summary = readSummary(path);
  const shortfall = shortfallOf(summary);
  if (shortfall.length > 0) throw new InputError(`harness-eval reporter baseline ${path}: a partial summary (${shortfall.join('; ')}) is no baseline; compare with a whole run`);
  return summary;
}
