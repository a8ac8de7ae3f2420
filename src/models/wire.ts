import type { ChatImage, ChatMessage, ChatRequest, ToolCall, ToolSchema } from '../core/model.ts';

/** What the wire formats share as the gateway reads them: how a turn becomes ChatMessages, and calls that come without ids. */

/** A request as the run's model is given it: the conversation, the tools, and what the request asks of the answer. */
export interface Conversation extends Pick<ChatRequest, 'responseFormat' | 'sampling'> {
  messages: ChatMessage[];
  tools: ToolSchema[];
  /** The built-in tools the request offered and the model is not given (`web_search`): they reach nothing from a run. */
  dropped?: string[];
}

/** The error of an item of a type not served (a zod discriminated union's): the type it has, and those served there. */
export const unserved =
  (served: string) =>
  ({ input }: { input: unknown }) =>
    `${JSON.stringify((input as { type?: unknown } | null)?.type) ?? 'an item without a type'} is not served here (${served} are)`;

/** The image types a model is given as images; any other is named in text only. */
const IMAGE_TYPES: ReadonlySet<string> = new Set<ChatImage['mimeType']>(['image/jpeg', 'image/png', 'image/gif', 'image/webp']);

/**
 * An image a client sent (base64): what the text says of it where it was (`[image: image/png, 2048
 * bytes]`), and the image itself for the turn's user message, when it is of a type models take.
 */
export function imageOf(mimeType: string, data: string): { note: string; image?: ChatImage } {
  const bytes = Math.floor((data.replace(/=+$/, '').length * 3) / 4);
  const note = `[image: ${mimeType}, ${bytes} bytes]`;
  return IMAGE_TYPES.has(mimeType) ? { note, image: { mimeType: mimeType as ChatImage['mimeType'], data } } : { note };
}

/** An image given as a URL: a data URL is the image; any other is named, not fetched (a run reaches no other host). */
export function imageAt(url: string): { note: string; image?: ChatImage } {
  const data = /^data:([\w/+.-]+);base64,(.*)$/s.exec(url);
  return data ? imageOf(data[1]!, data[2]!) : { note: `[image at ${url}: not fetched]` };
}

/** A tool without parameters takes none: the JSON Schema of an empty object. */
export const NO_PARAMETERS = { type: 'object', properties: {} };

/** Text parts as one text, as the chat shape holds it. */
export function joinText(parts: ReadonlyArray<{ text?: string | null }>): string {
  return parts.map((part) => part.text ?? '').join('');
}

/** Parts of a message as one text: text parts joined as they are, what the rest are (an image's note) each on its own line. */
export function joinParts(parts: ReadonlyArray<{ text: string; note?: boolean }>): string {
  return parts.reduce((joined, part, index) => (index === 0 ? part.text : `${joined}${part.note || parts[index - 1]!.note ? '\n' : ''}${part.text}`), '');
}

/** An assistant turn: its text (none when empty, as OpenAI writes it) and its calls, when it made any. */
export function assistantTurn(text: string, toolCalls: readonly ToolCall[]): ChatMessage {
  return { role: 'assistant', content: text || null, ...(toolCalls.length > 0 && { toolCalls: [...toolCalls] }) };
}

/**
 * A user turn that carries tool results beside its text (Anthropic's, Gemini's): the results
 * first, as the chat shape wants them right after their calls, then the text, if it has any, with
 * the turn's images (a tool message takes none: a tool result's images come here, named in its text).
 */
export function userTurn(results: readonly ChatMessage[], text: string, images: readonly ChatImage[] = []): ChatMessage[] {
  if (!text && results.length > 0 && images.length === 0) return [...results];
  return [...results, { role: 'user', content: text || '[the images of the tool results above]', ...(images.length > 0 && { images: [...images] }) }];
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
