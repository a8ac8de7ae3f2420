import { z } from 'zod';
import type { ChatImage, ChatMessage, ChatResponse, Usage } from '../core/model.ts';
import { parseJsonObject } from '../text.ts';
import { assistantTurn, imageAt, imageOf, joinParts, joinText, NO_PARAMETERS, unserved, userTurn, type Conversation } from './wire.ts';

/**
 * Anthropic's Messages API (`POST /v1/messages`) as the model gateway hears it from an agent (the
 * `@anthropic-ai/sdk`, Claude Code, the Claude Agent SDK): a request → the conversation, an answer
 * → a Message, or the server-sent events Anthropic streams for it. Unknown fields (max_tokens,
 * sampling, tool_choice, cache_control, metadata, thinking…) are dropped: the run's model spec sets
 * those. A block that is not text (an image, a document) is named in the text where it was; an
 * image also goes to the model as an image, in the turn's user message.
 */

const textBlock = z.object({ type: z.literal('text'), text: z.string() });

/** Text as a string or as text blocks (joined): the run's model is a text model. */
const textContent = z.union([z.string(), z.array(textBlock)], { error: 'must be a string or an array of text blocks' }).transform((content) => (typeof content === 'string' ? content : joinText(content)));

/** Content as a string or as blocks, read as blocks: a string is one text block (so a wrong block is named by its index). */
const blocks = <T extends z.ZodType>(block: T) => z.preprocess((content) => (typeof content === 'string' ? [{ type: 'text', text: content }] : content), z.array(block));

const base64Source = z.object({ type: z.literal('base64'), media_type: z.string(), data: z.string() });
const urlSource = z.object({ type: z.literal('url'), url: z.string() });
const fileSource = z.object({ type: z.literal('file'), file_id: z.string() });

const imageBlock = z.object({ type: z.literal('image'), source: z.discriminatedUnion('type', [base64Source, urlSource, fileSource]) });

const documentBlock = z.object({
  type: z.literal('document'),
  title: z.string().nullish(),
  source: z.discriminatedUnion('type', [
    base64Source,
    z.object({ type: z.literal('text'), data: z.string() }),
    z.object({ type: z.literal('content'), content: blocks(z.discriminatedUnion('type', [textBlock, imageBlock])) }),
    urlSource,
    fileSource,
  ]),
});

const searchResultBlock = z.object({ type: z.literal('search_result'), source: z.string(), title: z.string(), content: z.array(textBlock) });

/** What a tool search answers (Claude Code's ToolSearch): the deferred tool it names is offered from then on. */
const toolReferenceBlock = z.object({ type: z.literal('tool_reference'), tool_name: z.string().min(1) });

const toolResultBlock = z.object({
  type: z.literal('tool_result'),
  tool_use_id: z.string().min(1),
  content: blocks(
    z.discriminatedUnion('type', [textBlock, imageBlock, documentBlock, searchResultBlock, toolReferenceBlock], {
      error: unserved('text, image, document, search_result and tool_reference blocks'),
    }),
  ).nullish(),
});

const userBlock = z.discriminatedUnion('type', [textBlock, imageBlock, documentBlock, searchResultBlock, toolResultBlock], {
  error: unserved('text, image, document, search_result and tool_result blocks'),
});

const assistantBlock = z.discriminatedUnion(
  'type',
  [
    textBlock,
    z.object({ type: z.literal('tool_use'), id: z.string().min(1), name: z.string().min(1), input: z.record(z.string(), z.unknown()) }),
    // A thinking model's thinking, handed back: the run's model has its own, so it is left out.
    z.object({ type: z.literal(['thinking', 'redacted_thinking']) }),
  ],
  { error: unserved('text, tool_use, thinking and redacted_thinking blocks') },
);

const messageParam = z.discriminatedUnion(
  'role',
  [
    z.object({ role: z.literal('user'), content: blocks(userBlock) }),
    z.object({ role: z.literal('assistant'), content: blocks(assistantBlock) }),
    // Claude Code sends its environment as a system entry among the messages.
    z.object({ role: z.literal('system'), content: textContent }),
  ],
  { error: 'must be a user, assistant or system message' },
);

/** A tool: a custom one (no type, or `custom`) is offered; a built-in one (`web_search_20250305`, `bash_20250124`…) is named in `dropped`. */
const tool = z.preprocess(
  // A built-in tool may have no name of its own (the MCP connector's `mcp_toolset`): its type names it.
  (tool) => (typeof tool === 'object' && tool !== null && !isCustom(tool) && !('name' in tool) ? { ...tool, name: String((tool as { type: unknown }).type) } : tool),
  z
    .object({
      type: z.string().nullish(),
      name: z.string().min(1),
      description: z.string().nullish(),
      input_schema: z.record(z.string(), z.unknown()).nullish(),
      /** Offered once a tool_reference names it, as Anthropic's tool search does. */
      defer_loading: z.boolean().nullish(),
    })
    .refine((tool) => !isCustom(tool) || tool.input_schema, { message: 'is required for a custom tool', path: ['input_schema'] }),
);

const isCustom = (tool: { type?: unknown }) => (tool.type ?? 'custom') === 'custom';

export const messagesRequestSchema = z.object({
  system: textContent.nullish(),
  messages: z.array(messageParam).min(1, 'must hold at least one message'),
  tools: z.array(tool).nullish(),
  stream: z.boolean().nullish(),
});
export type MessagesRequest = z.output<typeof messagesRequestSchema>;

type ToolResult = z.output<typeof toolResultBlock>;
/** A block a turn's text is read from: a user's (a tool result's are read apart), or a tool result's. */
type Block = Exclude<z.output<typeof userBlock>, ToolResult> | z.output<typeof toolReferenceBlock>;

/** A turn's blocks as the run's model is given them: text, what the rest are (named in text), the images, and the tools referenced. */
class TurnReader {
  readonly images: ChatImage[] = [];
  constructor(private readonly referenced: Set<string>) {}

  /** The blocks' text: text blocks joined as they are, every other block on its own line. */
  text(blocks: readonly Block[]): string {
    return joinParts(blocks.map((block) => ({ text: this.part(block), note: block.type !== 'text' })));
  }

  private part(block: Block): string {
    switch (block.type) {
      case 'text':
        return block.text;
      case 'image':
        return this.image(block.source);
      case 'document':
        return this.document(block);
      case 'search_result':
        return `[search result "${block.title}" from ${block.source}]\n${joinText(block.content)}`;
      case 'tool_reference':
        this.referenced.add(block.tool_name);
        return `[tool ${block.tool_name} loaded]`;
    }
  }

  private image(source: z.output<typeof imageBlock>['source']): string {
    if (source.type === 'file') return `[image file ${source.file_id}: not fetched]`;
    const { note, image } = source.type === 'base64' ? imageOf(source.media_type, source.data) : imageAt(source.url);
    if (image) this.images.push(image);
    return note;
  }

  private document({ title, source }: z.output<typeof documentBlock>): string {
    const named = `[document${title ? ` "${title}"` : ''}`;
    switch (source.type) {
      case 'text':
        return `${named}]\n${source.data}`;
      case 'content':
        return `${named}]\n${this.text(source.content)}`;
      case 'base64':
        return `${named}: ${source.media_type}, not read: the run's model is given text]`;
      case 'url':
        return `${named} at ${source.url}: not fetched]`;
      case 'file':
        return `${named}, file ${source.file_id}: not fetched]`;
    }
  }
}

export function fromMessagesRequest(request: MessagesRequest): Conversation {
  // System entries among the messages join the system prompt, in order.
  const system = [request.system, ...request.messages.flatMap((message) => (message.role === 'system' ? [message.content] : []))].filter(Boolean);
  const messages: ChatMessage[] = system.length > 0 ? [{ role: 'system', content: system.join('\n\n') }] : [];
  // A tool result carries only its call's id: the name comes from the call.
  const callNames = new Map<string, string>();
  const referenced = new Set<string>();
  for (const message of request.messages) {
    if (message.role === 'system') continue;
    if (message.role === 'assistant') {
      const toolCalls = message.content.flatMap((block) => (block.type === 'tool_use' ? [{ id: block.id, name: block.name, arguments: JSON.stringify(block.input) }] : []));
      for (const call of toolCalls) callNames.set(call.id, call.name);
      messages.push(assistantTurn(joinText(message.content.filter((block) => block.type === 'text')), toolCalls));
    } else {
      const turn = new TurnReader(referenced);
      const results = message.content.flatMap((block): ChatMessage[] => {
        if (block.type !== 'tool_result') return [];
        return [{ role: 'tool', toolCallId: block.tool_use_id, name: callNames.get(block.tool_use_id) ?? '', content: turn.text(block.content ?? []) }];
      });
      messages.push(...userTurn(results, turn.text(message.content.filter((block): block is Exclude<typeof block, ToolResult> => block.type !== 'tool_result')), turn.images));
    }
  }
  const offered = request.tools ?? [];
  const tools = offered
    .filter((tool) => isCustom(tool) && (!tool.defer_loading || referenced.has(tool.name)))
    .map((tool) => ({ name: tool.name, description: tool.description ?? '', parameters: tool.input_schema ?? NO_PARAMETERS }));
  const dropped = offered.flatMap((tool) => (isCustom(tool) ? [] : [tool.type!]));
  return { messages, tools, ...(dropped.length > 0 && { dropped }) };
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
