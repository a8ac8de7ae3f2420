import { z } from 'zod';
import type { ChatMessage, ChatResponse, ToolCall, ToolSchema, Usage } from '../core/model.ts';
import { NO_PARAMETERS } from './wire.ts';

/**
 * The OpenAI Responses API's wire format as the model gateway hears it from an agent (the
 * `openai` SDK's `responses.create`, `@openai/agents`): a request → the conversation, an answer →
 * a Response object, or the stream of events OpenAI sends for it. The gateway keeps nothing
 * between calls, so the agent sends its whole conversation each time (`store: false`), as a
 * chat-completions agent does.
 */

/** Text as a string or as text parts (joined): the model of a run is a text model. */
const textContent = z
  .union([z.string(), z.array(z.object({ type: z.enum(['input_text', 'output_text']), text: z.string() }))], {
    error: 'must be a string or an array of input_text / output_text parts',
  })
  .transform((content) => (typeof content === 'string' ? content : content.map((part) => part.text).join('')));

const inputItem = z.discriminatedUnion(
  'type',
  [
    // `developer` is the newer name of `system` for reasoning models.
    z.object({ type: z.literal('message'), role: z.enum(['system', 'developer', 'user', 'assistant']), content: textContent }),
    z.object({ type: z.literal('function_call'), call_id: z.string().min(1), name: z.string().min(1), arguments: z.string() }),
    z.object({ type: z.literal('function_call_output'), call_id: z.string().min(1), output: textContent }),
    // A reasoning model's reasoning, handed back: the run's model has its own, so it is left out.
    z.object({ type: z.literal('reasoning') }),
  ],
  { error: 'must be a message, function_call, function_call_output or reasoning item' },
);

export const responsesRequestSchema = z.object({
  input: z.union([
    z.string(),
    // An item without a type is a message, as the API reads it.
    z.array(z.preprocess((item) => (typeof item === 'object' && item !== null && !('type' in item) ? { ...item, type: 'message' } : item), inputItem)),
  ]),
  instructions: z.string().nullish(),
  tools: z
    .array(
      z.object(
        { type: z.literal('function'), name: z.string().min(1), description: z.string().nullish(), parameters: z.record(z.string(), z.unknown()).nullish() },
        { error: 'must be a function tool (the gateway serves the run’s model, which has no built-in tools)' },
      ),
    )
    .nullish(),
  stream: z.boolean().nullish(),
  previous_response_id: z
    .null({ error: 'is not served: the gateway keeps no responses, so send the whole conversation (store: false)' })
    .optional(),
});
export type ResponsesRequest = z.output<typeof responsesRequestSchema>;

export function fromResponsesRequest(request: ResponsesRequest): { messages: ChatMessage[]; tools: ToolSchema[] } {
  const messages: ChatMessage[] = request.instructions ? [{ role: 'system', content: request.instructions }] : [];
  const items = typeof request.input === 'string' ? [{ type: 'message' as const, role: 'user' as const, content: request.input }] : request.input;
  // An output only carries its call's id: the name comes from the call.
  const callNames = new Map<string, string>();
  for (const item of items) {
    switch (item.type) {
      case 'message':
        messages.push(item.role === 'developer' ? { role: 'system', content: item.content } : { role: item.role, content: item.content });
        break;
      case 'function_call': {
        callNames.set(item.call_id, item.name);
        const call: ToolCall = { id: item.call_id, name: item.name, arguments: item.arguments };
        // A turn's calls (and its text before them) are one assistant message, as in chat completions.
        const last = messages.at(-1);
        if (last?.role === 'assistant') last.toolCalls = [...(last.toolCalls ?? []), call];
        else messages.push({ role: 'assistant', content: null, toolCalls: [call] });
        break;
      }
      case 'function_call_output':
        messages.push({ role: 'tool', toolCallId: item.call_id, name: callNames.get(item.call_id) ?? '', content: item.output });
        break;
      case 'reasoning':
        break;
    }
  }
  const tools = (request.tools ?? []).map((tool) => ({ name: tool.name, description: tool.description ?? '', parameters: tool.parameters ?? NO_PARAMETERS }));
  return { messages, tools };
}

/** What a Response's envelope holds besides the answer. */
export interface ResponseMeta {
  id: string;
  created_at: number;
  model: string;
}

/** Usage as the Responses API writes it; a count the model did not give is left out (unknown is not zero). */
function toResponsesUsage({ input, output }: Usage) {
  if (input === null && output === null) return undefined;
  return {
    ...(input !== null && { input_tokens: input, input_tokens_details: { cached_tokens: 0 } }),
    ...(output !== null && { output_tokens: output, output_tokens_details: { reasoning_tokens: 0 } }),
    ...(input !== null && output !== null && { total_tokens: input + output }),
  };
}

/** The answer's output items: its text as one message, then each tool call as a function_call. */
function outputItems(response: ChatResponse, meta: ResponseMeta) {
  const { content, toolCalls } = response.message;
  const message = content
    ? [{ type: 'message' as const, id: `msg_${meta.id}`, status: 'completed' as const, role: 'assistant' as const, content: [{ type: 'output_text' as const, text: content, annotations: [] }] }]
    : [];
  const calls = toolCalls.map((call, index) => ({
    type: 'function_call' as const,
    id: `fc_${meta.id}_${index}`,
    call_id: call.id,
    name: call.name,
    arguments: call.arguments,
    status: 'completed' as const,
  }));
  return [...message, ...calls];
}

function envelope(meta: ResponseMeta, status: 'in_progress' | 'completed', output: unknown[], usage?: object) {
  return {
    id: meta.id,
    object: 'response' as const,
    created_at: meta.created_at,
    status,
    model: meta.model,
    output,
    error: null,
    incomplete_details: null,
    instructions: null,
    metadata: {},
    parallel_tool_calls: true,
    temperature: null,
    top_p: null,
    tool_choice: 'auto' as const,
    tools: [],
    ...(usage && { usage }),
  };
}

export function toResponse(response: ChatResponse, meta: ResponseMeta) {
  return envelope(meta, 'completed', outputItems(response, meta), toResponsesUsage(response.usage));
}

/**
 * The same answer as the events OpenAI streams (their names and shapes as the `openai` SDK's
 * types give them): created, in progress, each output item added, its text or arguments as one
 * delta and done, the item done, then completed with the usage.
 */
export function toResponseEvents(response: ChatResponse, meta: ResponseMeta): Array<{ type: string; sequence_number: number }> {
  const events: Array<{ type: string } & Record<string, unknown>> = [
    { type: 'response.created', response: envelope(meta, 'in_progress', []) },
    { type: 'response.in_progress', response: envelope(meta, 'in_progress', []) },
  ];
  outputItems(response, meta).forEach((item, output_index) => {
    const at = { item_id: item.id, output_index };
    if (item.type === 'message') {
      const { text } = item.content[0]!;
      const part = { ...at, content_index: 0 };
      events.push(
        { type: 'response.output_item.added', output_index, item: { ...item, status: 'in_progress', content: [] } },
        { type: 'response.content_part.added', ...part, part: { type: 'output_text', text: '', annotations: [] } },
        { type: 'response.output_text.delta', ...part, delta: text, logprobs: [] },
        { type: 'response.output_text.done', ...part, text, logprobs: [] },
        { type: 'response.content_part.done', ...part, part: item.content[0] },
      );
    } else {
      events.push(
        { type: 'response.output_item.added', output_index, item: { ...item, status: 'in_progress', arguments: '' } },
        { type: 'response.function_call_arguments.delta', ...at, delta: item.arguments },
        { type: 'response.function_call_arguments.done', ...at, name: item.name, arguments: item.arguments },
      );
    }
    events.push({ type: 'response.output_item.done', output_index, item });
  });
  events.push({ type: 'response.completed', response: toResponse(response, meta) });
  return events.map((event, sequence_number) => ({ ...event, sequence_number }));
}
