import { max, mean, medianSorted, quantileSorted } from 'simple-statistics';
import type { Interval } from './types.ts';

/** z for a two-sided 95% interval. */
export const Z_95 = 1.959964;

/**
 * A rate with its Wilson score interval. Wilson rather than the normal approximation because cells
 * are small (often 5–20 runs) and rates sit near 0 or 1, where the normal interval collapses to a
 * point or leaves [0, 1]. With no runs nothing is known: the interval is all of [0, 1].
 */
export function wilson(successes: number, n: number, z = Z_95): Interval {
  if (n === 0) return { value: 0, low: 0, high: 1 };
  const p = successes / n;
  const z2 = z * z;
  const denominator = 1 + z2 / n;
  const centre = (p + z2 / (2 * n)) / denominator;
  const halfWidth = (z * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n))) / denominator;
  // Rounding can push the bounds a hair past 0 or 1 (e.g. 0/n gives low = -1e-17).
  return { value: p, low: clamp01(centre - halfWidth), high: clamp01(centre + halfWidth) };
}

/**
 * pass^k: the chance that k trials drawn without replacement from a cell's n runs, c of them
 * successes, all succeed: C(c,k)/C(n,k). It shows how fast reliability decays when a task must
 * work every time. Computed as the product ∏ (c−i)/(n−i) for i < k, so no factorial or binomial
 * ever overflows, even for thousands of runs.
 */
export function passHatK(c: number, n: number, k: number): number {
  if (!Number.isInteger(k) || k < 0 || k > n) throw new RangeError(`passHatK: k must be an integer in 0…n (k = ${k}, n = ${n})`);
  if (c < k) return 0;
  let product = 1;
  for (let i = 0; i < k; i++) product *= (c - i) / (n - i);
  return product;
}

/** pass^k for every k = 1 … n, keyed by k as a string (the summary's JSON shape). */
export function passHatKTable(c: number, n: number): Record<string, number> {
  const table: Record<string, number> = {};
  // Build the products incrementally: pass^(k) = pass^(k−1) · (c−k+1)/(n−k+1), O(n) for the table.
  let product = 1;
  for (let k = 1; k <= n; k++) {
    product = c < k ? 0 : product * ((c - k + 1) / (n - k + 1));
    table[String(k)] = product;
  }
  return table;
}

export interface Description {
  mean: number;
  median: number;
  p95: number;
  max: number;
}

/**
 * Mean, median, 95th percentile and maximum; all 0 for no values, so empty cells still render. The
 * percentile interpolates between order statistics (simple-statistics: R type 7, numpy's default).
 */
export function describe(values: readonly number[]): Description {
  if (values.length === 0) return { mean: 0, median: 0, p95: 0, max: 0 };
  // Sort once and use the sorted variants: quantile() would copy and select again for each statistic.
  const sorted = [...values].sort((a, b) => a - b);
  return { mean: mean(sorted), median: medianSorted(sorted), p95: quantileSorted(sorted, 0.95), max: max(sorted) };
}

function clamp01(x: number): number {
  return Math.min(1, Math.max(0, x));
}

/**
 * The difference of two proportions, x1/n1 − x2/n2, with Newcombe's hybrid score interval (his
 * method 10, 1998): built from the two Wilson intervals, so it stays inside [−1, 1] and keeps its
 * coverage for small samples and rates near 0 or 1, where the Wald interval fails.
 */
export function newcombe(x1: number, n1: number, x2: number, n2: number, z = Z_95): Interval {
  const a = wilson(x1, n1, z);
  const b = wilson(x2, n2, z);
  const difference = a.value - b.value;
  return {
    value: difference,
    low: difference - Math.hypot(a.value - a.low, b.high - b.value),
    high: difference + Math.hypot(a.high - a.value, b.value - b.low),
  };
}

/** True when the 95% interval of the difference excludes 0: a change the trials can vouch for. */
export function differs(x1: number, n1: number, x2: number, n2: number): boolean {
  return n1 > 0 && n2 > 0 && excludesZero(newcombe(x1, n1, x2, n2));
}

/** Whether a difference's interval lies wholly above or below 0. */
export function excludesZero({ low, high }: Interval): boolean {
  return low > 0 || high < 0;
}

/** Whether any change at all could be told apart with these trial counts: even all vs none is within chance otherwise. */
export function canDetectAnyChange(n1: number, n2: number): boolean {
  return differs(n1, n1, 0, n2);
}

/**
 * The chance that `differs` tells p1 from p2 with n trials on each side, computed exactly over the
 * two binomial distributions (no normal approximation): for each first outcome x1, its probability
 * times the second's outside the run of outcomes `differs` does not tell from x1 (undecidedRuns).
 * Outcomes less likely than 1e-16 are passed over: together they weigh less than the sum's rounding.
 */
export function detectionPower(p1: number, p2: number, n: number): number {
  const first = binomialPmf(n, p1);
  const second = binomialPmf(n, p2);
  // below[k] = P(X2 < k).
  const below = new Float64Array(n + 2);
  for (let k = 0; k <= n; k++) below[k + 1] = below[k]! + second[k]!;
  const { low, high } = undecidedRuns(n);
  let power = 0;
  for (let x1 = 0; x1 <= n; x1++) if (first[x1]! >= NEGLIGIBLE) power += first[x1]! * (1 - (below[high[x1]! + 1]! - below[low[x1]!]!));
  return Math.min(1, Math.max(0, power));
}

/**
 * For n trials a side, each x1's run [low, high] of the x2 that `differs` does not tell from it: a
 * run around x1, since a difference of 0 is never told. They depend on the counts alone, not on any
 * rate, so each n's are found once (its ends move little from one x1 to the next) and kept.
 */
function undecidedRuns(n: number): { low: Int32Array; high: Int32Array } {
  const kept = runsByTrials.get(n);
  if (kept) return kept;
  const low = new Int32Array(n + 1);
  const high = new Int32Array(n + 1);
  let [lo, hi] = [0, 0];
  for (let x1 = 0; x1 <= n; x1++) {
    [lo, hi] = [Math.min(lo, x1), Math.max(hi, x1)];
    while (differs(x1, n, lo, n)) lo++;
    while (lo > 0 && !differs(x1, n, lo - 1, n)) lo--;
    while (differs(x1, n, hi, n)) hi--;
    while (hi < n && !differs(x1, n, hi + 1, n)) hi++;
    [low[x1], high[x1]] = [lo, hi];
  }
  const runs = { low, high };
  if (n <= DETECT_LIMIT) runsByTrials.set(n, runs);
  return runs;
}

const runsByTrials = new Map<number, { low: Int32Array; high: Int32Array }>();

const NEGLIGIBLE = 1e-16;

/** The most trials per cell `trialsToDetect` looks at: beyond, a difference is too small to plan for. */
export const DETECT_LIMIT = 1000;

/**
 * The fewest trials per side at which `differs` detects p1 → p2 with at least the given power, and
 * keeps it for the next few counts too (exact power zigzags with n), up to `limit`; undefined beyond,
 * and for equal rates (no difference to detect).
 */
export function trialsToDetect(p1: number, p2: number, power = 0.8, limit = DETECT_LIMIT): number | undefined {
  if (p1 === p2) return undefined;
  // Told apart as often either way round (differs is symmetric): one answer for both orders.
  const key = `${Math.min(p1, p2)} ${Math.max(p1, p2)} ${power} ${limit}`;
  if (detected.has(key)) return detected.get(key);
  // A report written every second while its matrix runs asks again for the same few rates: each answer is kept.
  if (detected.size >= 10_000) detected.clear();
  const steady = 5;
  let found: number | undefined;
  for (let n = 1; n <= limit && found === undefined; n++) {
    if (detectionPower(p1, p2, n) < power) continue;
    let holds = true;
    for (let m = n + 1; m <= Math.min(limit, n + steady) && holds; m++) holds = detectionPower(p1, p2, m) >= power;
    if (holds) found = n;
  }
  detected.set(key, found);
  return found;
}

const detected = new Map<string, number | undefined>();

/**
 * P(X = k) for k = 0 … n, X ~ Binomial(n, p), by the recurrence on k outwards from the mode, then
 * normalised: starting from P(X = 0) = (1 − p)^n would underflow to 0 (0.05^400) and zero every term.
 */
function binomialPmf(n: number, p: number): Float64Array {
  const pmf = new Float64Array(n + 1);
  if (p <= 0 || p >= 1) {
    pmf[p <= 0 ? 0 : n] = 1;
    return pmf;
  }
  const mode = Math.min(n, Math.floor((n + 1) * p));
  pmf[mode] = 1;
  let total = 1;
  for (let k = mode + 1; k <= n; k++) total += pmf[k] = (pmf[k - 1]! * (n - k + 1) * p) / (k * (1 - p));
  for (let k = mode - 1; k >= 0; k--) total += pmf[k] = (pmf[k + 1]! * (k + 1) * (1 - p)) / ((n - k) * p);
  for (let k = 0; k <= n; k++) pmf[k]! /= total;
  return pmf;
}

/** The most trials per cell `trialsToDecide` looks at. */
export const TRIALS_SEARCHED = 10_000;

/** Where a rate's interval lies against a limit: wholly on one side (the data decide), or across it. */
export type Side = 'below' | 'above' | 'across';

export function sideOf({ low, high }: Interval, limit: number): Side {
  return high < limit ? 'below' : low > limit ? 'above' : 'across';
}

/**
 * The fewest trials at which a rate observed at `p` would have its Wilson interval wholly on one
 * side of `limit`, were it observed at the same rate: a zero-event cell's interval falls under the
 * limit at n where wilson(0, n).high < limit. Undefined when no count up to `max` would (p at or
 * very near the limit). Bounded so a summary of many cells near their limits stays fast.
 */
export function trialsToDecide(p: number, limit: number, max = TRIALS_SEARCHED): number | undefined {
  for (let n = 1; n <= max; n++) if (sideOf(wilson(Math.round(p * n), n), limit) !== 'across') return n;
  return undefined;
}
