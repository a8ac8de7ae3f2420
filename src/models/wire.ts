import type { ChatMessage, ToolCall } from '../core/model.ts';

/** What the wire formats share as the gateway reads them: how a turn becomes ChatMessages, and calls that come without ids. */

/** A tool without parameters takes none: the JSON Schema of an empty object. */
export const NO_PARAMETERS = { type: 'object', properties: {} };

/** Text parts as one text, as the chat shape holds it. */
export function joinText(parts: ReadonlyArray<{ text?: string | null }>): string {
  return parts.map((part) => part.text ?? '').join('');
}

/** An assistant turn: its text (none when empty, as OpenAI writes it) and its calls, when it made any. */
export function assistantTurn(text: string, toolCalls: readonly ToolCall[]): ChatMessage {
  return { role: 'assistant', content: text || null, ...(toolCalls.length > 0 && { toolCalls: [...toolCalls] }) };
}

/**
 * A user turn that carries tool results beside its text (Anthropic's, Gemini's): the results
 * first, as the chat shape wants them right after their calls, then the text, if it has any.
 */
export function userTurn(results: readonly ChatMessage[], text: string): ChatMessage[] {
  return [...results, ...(text || results.length === 0 ? [{ role: 'user' as const, content: text }] : [])];
}

/**
 * A call without an id (Ollama's never have one, Gemini's may not) gets one from its turn (assistant
 * messages before it) and its index: the same conversation always gets the same ids, and no two
 * calls in it share one.
 */
export function toolCallId(turn: number, index: number): string {
  return `call_${turn}_${index}`;
}

/**
 * The calls of a conversation read turn by turn, for wire formats whose calls or results may lack
 * ids: each assistant turn's calls get theirs (`toolCallId`), and a result answers its turn's call
 * of its id, else the first unanswered call of its name (or the first unanswered call, when it
 * names none).
 */
export function callLedger() {
  let turn = 0;
  let unanswered: ToolCall[] = [];
  return {
    /** The next assistant turn's calls, with ids (given where the wire gave none). */
    made(calls: ReadonlyArray<{ id?: string | null; name: string; arguments: string }>): ToolCall[] {
      const made = calls.map((call, index) => ({ id: call.id || toolCallId(turn, index), name: call.name, arguments: call.arguments }));
      turn += 1;
      unanswered = [...made];
      return made;
    },
    /** The id and name of the call a result answers; `position` names one that answers none. */
    answer(result: { id?: string | null; name?: string | null }, position: number): { toolCallId: string; name: string } {
      const byId = result.id ? unanswered.findIndex((call) => call.id === result.id) : -1;
      const index = byId >= 0 ? byId : unanswered.findIndex((call) => !result.name || call.name === result.name);
      const [call] = index >= 0 ? unanswered.splice(index, 1) : [];
      return { toolCallId: call?.id ?? `tool_${position}`, name: result.name || call?.name || '' };
    },
  };
}
