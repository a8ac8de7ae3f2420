import { readFileSync } from 'node:fs';
import type { z } from 'zod';
import { parseJsonObject } from './text.ts';

/** Bad input from a user (options, flags, files): reported as one line, never as a stack trace. */
export class InputError extends Error {
  override name = 'InputError';

  constructor(message: string) {
    super(message);
    // What is wrong is in the message; a stack would only bury it (Playwright prints `stack`).
    // A getter, so a subclass's name (set after this constructor) is the one shown.
    Object.defineProperty(this, 'stack', { get: () => `${this.name}: ${this.message}`, configurable: true });
  }
}

/** Parses `value` with `schema`; on failure throws an InputError naming each bad field. */
export function parseInput<S extends z.ZodType>(schema: S, value: unknown, label: string): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const problems = result.error.issues.map((issue) => {
    const field = issue.path.length > 0 ? issue.path.join('.') : '(options)';
    return `${field}: ${issue.message}`;
  });
  throw new InputError(`${label}: ${problems.join('; ')}`);
}

/**
 * A JSON file the user or an earlier run wrote (a cassette, a checkpoint, a summary), checked
 * against its schema: a missing, corrupt or wrong file is one InputError naming it, and the field.
 */
export function readJsonFile<S extends z.ZodType>(path: string, schema: S, what: string, { label = path, remedy }: { label?: string; remedy?: string } = {}): z.output<S> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new InputError(`${label}: cannot read this ${what} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
  const value = parseJsonObject(text);
  if (!value) throw new InputError(`${label}: not a JSON object (a corrupt ${what}${remedy ? `: ${remedy}` : ''})`);
  return parseInput(schema, value, label);
}
