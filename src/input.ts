import type { z } from 'zod';

/** Bad input from a user (options, flags, files): reported as one line, never as a stack trace. */
export class InputError extends Error {
  override name = 'InputError';
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
