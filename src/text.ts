import { randomUUID } from 'node:crypto';
import { renameSync, rmSync, writeFileSync } from 'node:fs';

/** Escapes text for HTML content and quoted attributes, the way HN writes entities. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => HTML_ENTITIES[char]!);
}

const HTML_ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#x27;' };

/** JSON text that should hold an object (tool-call arguments, observations): the object, or undefined. */
export function parseJsonObject(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** Writes the whole file under a temporary name and renames it: a reader, or a process killed mid-write, never sees half a file. */
export function writeFileAtomic(path: string, content: string): void {
  // Same directory, so the rename never crosses file systems and stays atomic.
  const temporary = `${path}.${process.pid}.${randomUUID()}.tmp`;
  try {
    writeFileSync(temporary, content);
    renameSync(temporary, path);
  } catch (error) {
    rmSync(temporary, { force: true });
    throw error;
  }
}

/** Lower-case words joined by "-": a task's name from its words, cut to at most `maxLength` characters (never ending in "-"). */
export function slug(text: string, maxLength = Infinity): string {
  return text.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '').slice(0, maxLength).replace(/-$/, '');
}

/** English ordinals as words, as a prompt writes the first ten. */
export const ORDINAL_WORDS = ['first', 'second', 'third', 'fourth', 'fifth', 'sixth', 'seventh', 'eighth', 'ninth', 'tenth'] as const;

/** `n` as an ordinal: "35th", "22nd"; with `words`, "third" up to the tenth. */
export function ordinal(n: number, { words = false } = {}): string {
  if (words && n >= 1 && n <= ORDINAL_WORDS.length) return ORDINAL_WORDS[n - 1]!;
  const suffix = Math.floor(n / 10) % 10 === 1 ? 'th' : ({ 1: 'st', 2: 'nd', 3: 'rd' } as Record<number, string>)[n % 10] ?? 'th';
  return `${n}${suffix}`;
}

/** Two texts as a reader compares what was written: runs of white space (a textarea's line breaks) count as one space, and none at either end. */
export function sameText(a: string, b: string): boolean {
  return a.replace(/\s+/g, ' ').trim() === b.replace(/\s+/g, ' ').trim();
}

/** Plain code-unit order: the same on every machine and locale. */
export function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** JSON with every object's keys sorted, so equal data gives equal text. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, inner: unknown) =>
    inner && typeof inner === 'object' && !Array.isArray(inner)
      ? Object.fromEntries(Object.entries(inner as Record<string, unknown>).sort(([a], [b]) => compareStrings(a, b)))
      : inner,
  );
}

/**
 * The candidate a misspelt `word` most likely meant: the fewest edits (a letter added, dropped,
 * changed, or two swapped; case ignored), at most a third of the word's length (at least 2); undefined when none is that close.
 */
export function closest(word: string, candidates: Iterable<string>): string | undefined {
  let best: { candidate: string; edits: number } | undefined;
  for (const candidate of candidates) {
    const edits = editDistance(word.toLowerCase(), candidate.toLowerCase());
    if (edits <= Math.max(2, Math.floor(word.length / 3)) && (!best || edits < best.edits)) best = { candidate, edits };
  }
  return best?.candidate;
}

/** Optimal string alignment distance: insertions, deletions, substitutions and swaps of two neighbours. */
function editDistance(a: string, b: string): number {
  const rows = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      rows[i]![j] = Math.min(rows[i - 1]![j]! + 1, rows[i]![j - 1]! + 1, rows[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) rows[i]![j] = Math.min(rows[i]![j]!, rows[i - 2]![j - 2]! + 1);
    }
  }
  return rows[a.length]![b.length]!;
}
