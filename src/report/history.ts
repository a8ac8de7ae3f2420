import { existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { InputError } from '../input.ts';
import { writeFileAtomic } from '../text.ts';
import type { Summary } from './types.ts';

/**
 * Each finished run's summary.json, kept beside the latest as `history/<generatedAt>.json`
 * (`2026-11-22T23-50-00Z.json`: the time in UTC, colons made dashes so every file system takes
 * it), so yesterday's numbers survive today's run. Names sort in time order.
 */
export const HISTORY_DIR = 'history';
/** Summaries kept by default; older ones are deleted when a new one is saved. */
export const DEFAULT_HISTORY_LIMIT = 20;

/** Saves the summary into `reportDir/history` and keeps the newest `limit` files; answers the file's name. */
export function saveToHistory(reportDir: string, summary: Summary, limit = DEFAULT_HISTORY_LIMIT): string | undefined {
  if (limit <= 0) return undefined;
  const dir = join(reportDir, HISTORY_DIR);
  mkdirSync(dir, { recursive: true });
  const stamp = summary.generatedAt.replace(/\.\d+Z$/, 'Z').replace(/:/g, '-');
  let name = `${stamp}.json`;
  for (let n = 2; existsSync(join(dir, name)); n++) name = `${stamp}-${n}.json`;
  writeFileAtomic(join(dir, name), `${JSON.stringify(summary, null, 2)}\n`);
  for (const old of listHistory(reportDir).slice(limit)) rmSync(join(dir, old), { force: true });
  return name;
}

/** The saved summaries' names, newest first; none when there is no history yet. */
export function listHistory(reportDir: string): string[] {
  const dir = join(reportDir, HISTORY_DIR);
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((name) => /^\d{4}-\d\d-\d\dT[\d-]+Z(-\d+)?\.json$/.test(name))
    .sort(byTime)
    .reverse();
}

/** `…00Z.json` before `…00Z-2.json`: the suffix counts saves within one second. */
function byTime(a: string, b: string): number {
  const key = (name: string) => name.replace(/Z\.json$/, 'Z-1.json').replace(/-(\d+)\.json$/, (_, n: string) => `-${n.padStart(6, '0')}`);
  return key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0;
}

/**
 * A summary named on the command line: an index into the history (1 = newest), a history name
 * (with or without `.json`), or a path to a summary.json.
 */
export function resolveSummaryPath(reference: string, reportDir: string): string {
  const names = listHistory(reportDir);
  if (/^\d+$/.test(reference)) {
    const name = names[Number(reference) - 1];
    if (!name) throw new InputError(`report: no summary number ${reference} in ${join(reportDir, HISTORY_DIR)} (it holds ${names.length})`);
    return join(reportDir, HISTORY_DIR, name);
  }
  const inHistory = names.find((name) => name === reference || name === `${reference}.json`);
  return inHistory ? join(reportDir, HISTORY_DIR, inHistory) : reference;
}
