import { formatCount } from './format.ts';

/**
 * Caps on the free text a run record carries into the report, so one flooding agent (a 60 MB claim)
 * cannot blow up the report or the reporter's memory. Applied where the fixture attaches a run and
 * again where the reporter reads one, since a user's `attachRun` or hand-made attachment can bring
 * anything. Names, ids and the condition are never cut: they key the cells.
 */

/** The claim's summary and answer, the oracle's verdicts and side effects: characters each. */
export const TEXT_CHARS = 4_000;
/** Each string in the run's trace: the transcript the report shows is cut at this length in all. */
export const TRACE_TEXT_CHARS = 20_000;

/** Room for the note a cut adds: a text cut once is within it, so cutting it again (the reporter after the fixture) keeps the first note's count. */
const NOTE_ROOM = 64;

/** The text, or its first `max` characters with the cut stated: `…[harness-eval: cut; 62,914,560 characters in all]`. */
export function cut(text: string, max: number): string {
  return text.length <= max + NOTE_ROOM ? text : `${text.slice(0, max)}…[harness-eval: cut; ${formatCount(text.length)} characters in all]`;
}

/** Every string in a JSON value cut at `max`: a trace's events have too many shapes to name each field. */
function cutStrings(value: unknown, max: number): unknown {
  if (typeof value === 'string') return cut(value, max);
  if (Array.isArray(value)) return value.map((item) => cutStrings(item, max));
  if (typeof value === 'object' && value !== null) return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, cutStrings(item, max)]));
  return value;
}

/** A run record (or what an attachment parsed to) with its free text cut; a field that is not text is left for the schema to reject. */
export function capRunText<T extends object>(record: T): T {
  const fields = record as Record<string, unknown>;
  const capped: Record<string, unknown> = { ...fields, ...cutFields(fields, ['summary', 'answer']) };
  for (const [list, keys] of [['verdicts', ['description', 'detail']], ['sideEffects', ['detail']]] as const) {
    const items = fields[list];
    if (Array.isArray(items)) capped[list] = items.map((item: unknown) => (typeof item === 'object' && item !== null ? { ...item, ...cutFields(item as Record<string, unknown>, keys) } : item));
  }
  if ('trace' in fields) capped.trace = cutStrings(fields.trace, TRACE_TEXT_CHARS);
  return capped as T;
}

/** The named fields of an object that are strings, cut at TEXT_CHARS. */
function cutFields(fields: Record<string, unknown>, keys: readonly string[]): Record<string, string> {
  return Object.fromEntries(keys.flatMap((key) => (typeof fields[key] === 'string' ? [[key, cut(fields[key], TEXT_CHARS)]] : [])));
}
