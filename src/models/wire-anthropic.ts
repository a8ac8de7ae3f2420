import { z } from 'zod';
import type { ChatMessage, ChatResponse, ToolSchema, Usage } from '../core/model.ts';
import { parseJsonObject } from '../text.ts';
import { assistantTurn, joinText, userTurn } from './wire.ts';

/**
 * Anthropic's Messages API (`POST /v1/messages`) as the model gateway hears it from an agent (the
 * `@anthropic-ai/sdk`, Claude Code, the Claude Agent SDK): a request → the conversation, an answer
 * → a Message, or the server-sent events Anthropic streams for it. Unknown fields (max_tokens,
 * sampling, tool_choice, cache_control, metadata…) are dropped: the run's model spec sets those.
 */

const textBlock = z.object({ type: z.literal('text'), text: z.string() });

/** Text as a string or as text blocks (joined): the run's model is a text model. */
const textContent = z.union([z.string(), z.array(textBlock)], { error: 'must be a string or an array of text blocks' }).transform((content) => (typeof content === 'string' ? content : joinText(content)));

const userBlock = z.discriminatedUnion(
  'type',
  [textBlock, z.object({ type: z.literal('tool_result'), tool_use_id: z.string().min(1), content: textContent.nullish() })],
  { error: 'must be a text or tool_result block (the run’s model is a text model)' },
);

const assistantBlock = z.discriminatedUnion(
  'type',
  [
    textBlock,
    z.object({ type: z.literal('tool_use'), id: z.string().min(1), name: z.string().min(1), input: z.record(z.string(), z.unknown()) }),
    // A thinking model's thinking, handed back: the run's model has its own, so it is left out.
    z.object({ type: z.literal(['thinking', 'redacted_thinking']) }),
  ],
  { error: 'must be a text, tool_use, thinking or redacted_thinking block' },
);

const messageParam = z.discriminatedUnion('role', [
  z.object({ role: z.literal('user'), content: z.union([z.string(), z.array(userBlock)]) }),
  z.object({ role: z.literal('assistant'), content: z.union([z.string(), z.array(assistantBlock)]) }),
]);

export const messagesRequestSchema = z.object({
  system: textContent.nullish(),
  messages: z.array(messageParam).min(1, 'must hold at least one message'),
  tools: z
    .array(
      z.object({
        type: z.literal('custom', { error: 'is not served: the gateway serves the run’s model, which has no built-in tools' }).nullish(),
        name: z.string().min(1),
        description: z.string().nullish(),
        input_schema: z.record(z.string(), z.unknown()),
      }),
    )
    .nullish(),
  stream: z.boolean().nullish(),
});
export type MessagesRequest = z.output<typeof messagesRequestSchema>;

export function fromMessagesRequest(request: MessagesRequest): { messages: ChatMessage[]; tools: ToolSchema[] } {
  const messages: ChatMessage[] = request.system ? [{ role: 'system', content: request.system }] : [];
  // A tool result carries only its call's id: the name comes from the call.
  const callNames = new Map<string, string>();
  for (const message of request.messages) {
    if (typeof message.content === 'string') {
      messages.push(message.role === 'user' ? { role: 'user', content: message.content } : assistantTurn(message.content, []));
    } else if (message.role === 'assistant') {
      const toolCalls = message.content.flatMap((block) => (block.type === 'tool_use' ? [{ id: block.id, name: block.name, arguments: JSON.stringify(block.input) }] : []));
      for (const call of toolCalls) callNames.set(call.id, call.name);
      messages.push(assistantTurn(joinText(message.content.filter((block) => block.type === 'text')), toolCalls));
    } else {
      const results = message.content.flatMap((block): ChatMessage[] =>
        block.type === 'tool_result' ? [{ role: 'tool', toolCallId: block.tool_use_id, name: callNames.get(block.tool_use_id) ?? '', content: block.content ?? '' }] : [],
      );
      messages.push(...userTurn(results, joinText(message.content.filter((block) => block.type === 'text'))));
    }
  }
  const tools = (request.tools ?? []).map((tool) => ({ name: tool.name, description: tool.description ?? '', parameters: tool.input_schema }));
  return { messages, tools };
}

/** What a Message's envelope holds besides the answer. */
export interface MessageMeta {
  id: string;
  model: string;
}

/**
 * Usage as Anthropic writes it: `input_tokens` is the input not read from the cache, so a client
 * that adds the cache fields to it (as Anthropic's clients do) gets the run's input. A count the
 * model did not give is left out (unknown is not zero); cache writes are never known.
 */
function toAnthropicUsage({ input, output, cachedInput }: Usage) {
  return {
    ...(input !== null && { input_tokens: input - (cachedInput ?? 0) }),
    ...(output !== null && { output_tokens: output }),
    cache_creation_input_tokens: null,
    cache_read_input_tokens: cachedInput ?? null,
  };
}

function stopReasonOf(response: ChatResponse): 'max_tokens' | 'tool_use' | 'end_turn' {
  if (response.finishReason === 'length') return 'max_tokens';
  return response.message.toolCalls.length > 0 ? 'tool_use' : 'end_turn';
}

/** The answer's content blocks: its text, then a tool_use per call (arguments that are not a JSON object go as {}: Anthropic takes an object). */
function contentBlocks(response: ChatResponse) {
  const { content, toolCalls } = response.message;
  return [
    ...(content ? [{ type: 'text' as const, text: content, citations: null }] : []),
    ...toolCalls.map((call) => ({ type: 'tool_use' as const, id: call.id, name: call.name, input: parseJsonObject(call.arguments) ?? {} })),
  ];
}

export function toMessage(response: ChatResponse, meta: MessageMeta) {
  return {
    id: meta.id,
    type: 'message' as const,
    role: 'assistant' as const,
    model: meta.model,
    content: contentBlocks(response),
    stop_reason: stopReasonOf(response),
    stop_sequence: null,
    usage: toAnthropicUsage(response.usage),
  };
}

/**
 * The same answer as the events Anthropic streams: message_start (the usage already whole: the
 * answer is), each block's start, its text or input JSON as one delta, its stop, then
 * message_delta with the stop reason and usage, and message_stop.
 */
export function toMessageEvents(response: ChatResponse, meta: MessageMeta) {
  const message = toMessage(response, meta);
  const blocks = message.content.flatMap((block, index) => [
    { type: 'content_block_start', index, content_block: block.type === 'text' ? { ...block, text: '' } : { ...block, input: {} } },
    { type: 'content_block_delta', index, delta: block.type === 'text' ? { type: 'text_delta', text: block.text } : { type: 'input_json_delta', partial_json: JSON.stringify(block.input) } },
    { type: 'content_block_stop', index },
  ]);
  return [
    { type: 'message_start', message: { ...message, content: [], stop_reason: null } },
    ...blocks,
    { type: 'message_delta', delta: { stop_reason: message.stop_reason, stop_sequence: null }, usage: message.usage },
    { type: 'message_stop' },
  ];
}

/** Anthropic's error types, by the status they come with. */
const ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  504: 'timeout_error',
  529: 'overloaded_error',
};

/** An error as Anthropic's API writes it, which its SDKs read. */
export function anthropicError(status: number, message: string) {
  return { type: 'error' as const, error: { type: ERROR_TYPES[status] ?? (status < 500 ? 'invalid_request_error' : 'api_error'), message } };
}
