import { parseJsonObject } from '../../text.ts';
import type { WireMessage } from './endpoint.ts';

/**
 * A tool's result as a double reads it (docs/agents.md, "Writing a double"): the built-in harness
 * sends each result as its JSON text (`{ "url": …, "text": … }`, or `{ "error": … }` when the call
 * failed); the `observations` layer wraps each string the page wrote as `{ untrusted: true, text }`
 * (with `flagged` and `warning` where it took lines out) and adds `provenance`. This reads the
 * message back and puts each wrapped string back as its text, so a double reads the same result
 * under any stack; a result that is not a JSON object is `{ text }`.
 */
export function toolResult(message: Pick<WireMessage, 'content'>): Record<string, unknown> {
  const content = message.content ?? '';
  const text = typeof content === 'string' ? content : content.flatMap((part) => (part.type === 'text' ? [part.text ?? ''] : [])).join('');
  const parsed = parseJsonObject(text);
  return parsed ? (unwrapObservations(parsed) as Record<string, unknown>) : { text };
}

/** `value` with each `{ untrusted: true, text }` the `observations` layer wrapped page text in put back as its text. */
export function unwrapObservations(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(unwrapObservations);
  if (typeof value !== 'object' || value === null) return value;
  const record = value as Record<string, unknown>;
  if (record.untrusted === true && typeof record.text === 'string') return record.text;
  return Object.fromEntries(Object.entries(record).map(([key, item]) => [key, unwrapObservations(item)]));
}
