import type { ChatCompletion, ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import type { ResponseFormatJSONObject, ResponseFormatJSONSchema } from 'openai/resources/shared';
import { z } from 'zod';
import { ModelError, readUsage } from './types.ts';
import type { ChatImage, ChatMessage, ChatResponse, ResponseFormat, ToolSchema, Usage } from '../core/model.ts';
import { imageAt, joinParts, NO_PARAMETERS, unserved, type Conversation } from './wire.ts';

/**
 * The OpenAI chat-completions wire format, both ways: the `openai:` provider speaks it to a
 * server (ChatMessage → wire, completion → ChatResponse), the model gateway hears it from an
 * agent (wire → ChatMessage, ChatResponse → completion).
 */

export function toOpenAIMessage(message: ChatMessage): ChatCompletionMessageParam {
  switch (message.role) {
    case 'system':
      return { role: 'system', content: message.content };
    case 'user':
      if (!message.images?.length) return { role: 'user', content: message.content };
      // Images go as content parts after the text, each a data URL.
      return {
        role: 'user',
        content: [
          { type: 'text', text: message.content },
          ...message.images.map((image) => ({
            type: 'image_url' as const,
            image_url: { url: `data:${image.mimeType};base64,${image.data}`, ...(image.detail && { detail: image.detail }) },
          })),
        ],
      };
    case 'assistant':
      return {
        role: 'assistant',
        content: message.content,
        // The API rejects an empty `tool_calls` array, so it is left out.
        ...(message.toolCalls?.length && {
          tool_calls: message.toolCalls.map((call) => ({
            id: call.id,
            type: 'function' as const,
            function: { name: call.name, arguments: call.arguments },
          })),
        }),
      };
    case 'tool':
      return { role: 'tool', tool_call_id: message.toolCallId, content: message.content };
  }
}

/** A response format as chat completions' `response_format`. */
export function toOpenAIResponseFormat(format: ResponseFormat): ResponseFormatJSONObject | ResponseFormatJSONSchema {
  return format.type === 'json' ? { type: 'json_object' } : { type: 'json_schema', json_schema: { name: format.name, schema: format.schema } };
}

export function toOpenAITool(tool: ToolSchema): ChatCompletionTool {
  return {
    type: 'function',
    function: { name: tool.name, description: tool.description, parameters: tool.parameters },
  };
}

export function fromCompletion(completion: ChatCompletion): ChatResponse {
  const choice = completion.choices?.[0];
  if (!choice?.message) throw new ModelError('bad_response', 'openai: the response has no choices');
  const toolCalls = (choice.message.tool_calls ?? []).map((call) =>
    call.type === 'function'
      ? { id: call.id, name: call.function.name, arguments: call.function.arguments }
      : { id: call.id, name: call.custom.name, arguments: call.custom.input },
  );
  return {
    message: { content: choice.message.content ?? null, toolCalls },
    usage: readUsage({ input: ['prompt_tokens', completion.usage?.prompt_tokens], output: ['completion_tokens', completion.usage?.completion_tokens], cachedInput: completion.usage?.prompt_tokens_details?.cached_tokens }),
    finishReason: choice.finish_reason ?? undefined,
  };
}

// An agent's request, as the gateway reads it: unknown fields (sampling, tool_choice, …) are dropped.

/** Text as a string or as text parts (joined). */
const textContent = z
  .union([z.string(), z.array(z.object({ type: z.literal('text'), text: z.string() }))], { error: 'must be a string or an array of text parts' })
  .transform((content) => (typeof content === 'string' ? content : content.map((part) => part.text).join('')));

/** A user's content: a string, or text and image parts, read as its text (an image named where it was) and its images. */
const userContent = z
  .preprocess(
    (content) => (typeof content === 'string' ? [{ type: 'text', text: content }] : content),
    z.array(
      z.discriminatedUnion('type', [z.object({ type: z.literal('text'), text: z.string() }), z.object({ type: z.literal('image_url'), image_url: z.object({ url: z.string() }) })], {
        error: unserved('text and image_url parts'),
      }),
    ),
  )
  .transform((parts) => {
    const images: ChatImage[] = [];
    const read = parts.map((part) => {
      if (part.type === 'text') return { text: part.text };
      const { note, image } = imageAt(part.image_url.url);
      if (image) images.push(image);
      return { text: note, note: true };
    });
    return { text: joinParts(read), images };
  });

const wireToolCall = z.object({
  id: z.string(),
  type: z.literal('function').optional(),
  function: z.object({ name: z.string(), arguments: z.string() }),
});

const wireMessage = z.discriminatedUnion('role', [
  // `developer` is the newer name of `system` for reasoning models.
  z.object({ role: z.enum(['system', 'developer']), content: textContent }),
  z.object({ role: z.literal('user'), content: userContent }),
  z.object({ role: z.literal('assistant'), content: textContent.nullish(), tool_calls: z.array(wireToolCall).nullish() }),
  z.object({ role: z.literal('tool'), tool_call_id: z.string(), content: textContent }),
]);

/** A function tool as both APIs write it (Ollama took OpenAI's shape). */
export const wireToolSchema = z.object({
  type: z.literal('function'),
  function: z.object({
    name: z.string().min(1),
    description: z.string().nullish(),
    parameters: z.record(z.string(), z.unknown()).nullish(),
  }),
});

export const chatCompletionRequestSchema = z.object({
  messages: z.array(wireMessage).min(1, 'must hold at least one message'),
  tools: z.array(wireToolSchema).nullish(),
  stream: z.boolean().nullish(),
  stream_options: z.object({ include_usage: z.boolean().nullish() }).nullish(),
  response_format: z
    .discriminatedUnion('type', [
      z.object({ type: z.literal('text') }),
      z.object({ type: z.literal('json_object') }),
      z.object({ type: z.literal('json_schema'), json_schema: z.object({ name: z.string().nullish(), schema: z.record(z.string(), z.unknown()).nullish() }) }),
    ])
    .nullish(),
});
export type ChatCompletionRequest = z.output<typeof chatCompletionRequestSchema>;

export function fromOpenAIRequest(request: ChatCompletionRequest): Conversation {
  // A tool message carries only its call's id: the name comes from the assistant turn that made the call.
  const callNames = new Map<string, string>();
  const messages = request.messages.map((message): ChatMessage => {
    switch (message.role) {
      case 'system':
      case 'developer':
        return { role: 'system', content: message.content };
      case 'user':
        return { role: 'user', content: message.content.text, ...(message.content.images.length > 0 && { images: message.content.images }) };
      case 'assistant': {
        const toolCalls = (message.tool_calls ?? []).map((call) => ({ id: call.id, name: call.function.name, arguments: call.function.arguments }));
        for (const call of toolCalls) callNames.set(call.id, call.name);
        return { role: 'assistant', content: message.content ?? null, ...(toolCalls.length > 0 && { toolCalls }) };
      }
      case 'tool':
        return { role: 'tool', toolCallId: message.tool_call_id, name: callNames.get(message.tool_call_id) ?? '', content: message.content };
    }
  });
  return { messages, tools: fromWireTools(request.tools), ...responseFormatOf(request.response_format) };
}

/** `response_format` as the response format the run's model is asked for (`text` asks for none). */
function responseFormatOf(format: ChatCompletionRequest['response_format']): { responseFormat?: ResponseFormat } {
  if (format?.type === 'json_object' || (format?.type === 'json_schema' && !format.json_schema.schema)) return { responseFormat: { type: 'json' } };
  if (format?.type === 'json_schema') return { responseFormat: { type: 'schema', name: format.json_schema.name ?? 'response', schema: format.json_schema.schema! } };
  return {};
}

export function fromWireTools(tools: readonly z.output<typeof wireToolSchema>[] | null | undefined): ToolSchema[] {
  return (tools ?? []).map(({ function: tool }) => ({
    name: tool.name,
    description: tool.description ?? '',
    parameters: tool.parameters ?? NO_PARAMETERS,
  }));
}

/** What a completion's envelope holds besides the answer. */
export interface CompletionMeta {
  id: string;
  created: number;
  model: string;
}

/** Usage as OpenAI writes it; a count the model did not give is left out (unknown is not zero). */
function toOpenAIUsage(usage: Usage) {
  const { input, output, cachedInput } = usage;
  if (input === null && output === null) return undefined;
  return {
    ...(input !== null && { prompt_tokens: input }),
    ...(cachedInput !== undefined && { prompt_tokens_details: { cached_tokens: cachedInput } }),
    ...(output !== null && { completion_tokens: output }),
    ...(input !== null && output !== null && { total_tokens: input + output }),
  };
}

function finishReasonOf(response: ChatResponse): string {
  return response.finishReason ?? (response.message.toolCalls.length > 0 ? 'tool_calls' : 'stop');
}

function wireToolCalls(response: ChatResponse) {
  return response.message.toolCalls.map((call) => ({ id: call.id, type: 'function' as const, function: { name: call.name, arguments: call.arguments } }));
}

export function toCompletion(response: ChatResponse, meta: CompletionMeta) {
  const toolCalls = wireToolCalls(response);
  const usage = toOpenAIUsage(response.usage);
  return {
    ...meta,
    object: 'chat.completion' as const,
    choices: [
      {
        index: 0,
        message: { role: 'assistant' as const, content: response.message.content, refusal: null, ...(toolCalls.length > 0 && { tool_calls: toolCalls }) },
        finish_reason: finishReasonOf(response),
        logprobs: null,
      },
    ],
    ...(usage && { usage }),
  };
}

/**
 * The same answer as a stream's chunks: the whole message in one delta, then the finish reason,
 * then (when the client asked with `stream_options.include_usage`) the usage, as OpenAI sends it.
 */
export function toCompletionChunks(response: ChatResponse, meta: CompletionMeta, includeUsage: boolean) {
  const chunk = (fields: object) => ({ ...meta, object: 'chat.completion.chunk' as const, ...fields });
  const toolCalls = wireToolCalls(response).map((call, index) => ({ index, ...call }));
  const usage = toOpenAIUsage(response.usage);
  return [
    chunk({
      choices: [{ index: 0, delta: { role: 'assistant', content: response.message.content, ...(toolCalls.length > 0 && { tool_calls: toolCalls }) }, finish_reason: null }],
    }),
    chunk({ choices: [{ index: 0, delta: {}, finish_reason: finishReasonOf(response) }] }),
    ...(includeUsage && usage ? [chunk({ choices: [], usage })] : []),
  ];
}

/** An error as OpenAI's API writes it, which every OpenAI-compatible client reads. */
export function openAIError(message: string, type: string, code: string | null = null) {
  return { error: { message, type, param: null, code } };
}
