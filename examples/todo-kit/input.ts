// Bad input, in one line naming each bad field: options a spec or config writes, and form posts.
import type { z } from 'zod';

/** The issues of a failed parse, one line: `text: empty; goto: expected string`. */
export function problems(error: z.ZodError): string {
  return error.issues.map((issue) => `${issue.path.join('.') || '(options)'}: ${issue.message}`).join('; ');
}

/** `value` as `schema` reads it; otherwise an error naming `label` and each bad field. */
export function parse<S extends z.ZodType>(schema: S, value: unknown, label: string): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  throw new Error(`${label}: ${problems(result.error)}`);
}
