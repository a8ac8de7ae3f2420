import type { ChatMessage, ToolSchema } from '../core/model.ts';
import { redactValue } from './redact.ts';
import type { TraceEvent, TraceEventBody, TraceEventOf } from '../core/trace.ts';

export { customEventSchema, elementSchema, stampedEventSchema, stopReasons, subroutineStepSchema, traceEventSchema } from '../core/trace.ts';
export type { SentMessage, StopReason, TraceEvent, TraceEventBody, TraceEventOf } from '../core/trace.ts';

/** The most of one message's text a `model_request` keeps: enough to read what the model was given, not a copy of every page. */
export const SENT_CHARS = 300;

/**
 * The `model_request` event for a call: the messages sent and the tools offered. Secrets are
 * replaced before each text is cut, so a cut can never leave part of a secret that redaction
 * would no longer recognise.
 */
export function modelRequest(messages: readonly ChatMessage[], tools: readonly ToolSchema[], secrets: readonly string[]): TraceEventBody {
  const sent = messages.map((message) => {
    const text = redact(textOf(message), secrets);
    return { role: message.role, text: text.length > SENT_CHARS ? `${text.slice(0, SENT_CHARS)}…` : text, chars: text.length };
  });
  return { type: 'model_request', messages: messages.length, tools: tools.length, sent, offered: tools.map((tool) => tool.name) };
}

/** A message as one line of text: an assistant's calls as `name(arguments)`, a tool result after its call's id. */
function textOf(message: ChatMessage): string {
  if (message.role === 'assistant') return [message.content ?? '', ...(message.toolCalls ?? []).map((call) => `${call.name}(${call.arguments})`)].filter(Boolean).join(' ');
  if (message.role === 'tool') return `${message.toolCallId}: ${message.content}`;
  return message.content;
}

/**
 * The run's append-only log. Secret values (passwords, API keys) are replaced wherever they
 * appear before an event is stored, so no trace, report or attachment can carry one.
 */
export class Trace {
  private readonly list: TraceEvent[] = [];
  private started = Date.now();

  constructor(private readonly secrets: () => readonly string[] = () => []) {}

  append(event: TraceEventBody, position: { attempt: number; iteration: number }): TraceEvent {
    const stamped = redact({ seq: this.list.length + 1, ...position, atMs: Date.now() - this.started, ...event }, this.secrets());
    this.list.push(stamped);
    return stamped;
  }

  /** Takes over a saved trace (a resumed run): its events, and its clock where it stopped. */
  restore(events: readonly TraceEvent[]): void {
    this.list.splice(0, this.list.length, ...events);
    this.started = Date.now() - (events.at(-1)?.atMs ?? 0);
  }

  get events(): readonly TraceEvent[] {
    return this.list;
  }

  of<T extends TraceEventBody['type']>(type: T): TraceEventOf<T>[] {
    return this.list.filter((event) => event.type === type) as TraceEventOf<T>[];
  }
}

/**
 * The value with every secret replaced by `[secret]`, in every form it could be written: plain,
 * URL-encoded, base64 (also inside a longer base64 stream) and hex (see ./redact.ts).
 */
export function redact<T>(value: T, secrets: readonly string[]): T {
  return redactValue(value, secrets);
}
