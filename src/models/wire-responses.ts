import { z } from 'zod';
import type { ChatImage, ChatMessage, ChatResponse, ToolCall, ToolSchema, Usage } from '../core/model.ts';
import { parseJsonObject } from '../text.ts';
import { imageAt, joinParts, NO_PARAMETERS, unserved, userTurn, type Conversation } from './wire.ts';

/**
 * The OpenAI Responses API's wire format as the model gateway hears it from an agent (the
 * `openai` SDK's `responses.create`, `@openai/agents`): a request → the conversation, an answer →
 * a Response object, or the stream of events OpenAI sends for it. The gateway keeps nothing
 * between calls, so the agent sends its whole conversation each time (`store: false`), as a
 * chat-completions agent does.
 */

/** A part of a message or of a tool's output: text, an image, a file (named only: the run's model is given text). */
const part = z.discriminatedUnion(
  'type',
  [
    z.object({ type: z.literal(['input_text', 'output_text']), text: z.string() }),
    z.object({ type: z.literal('refusal'), refusal: z.string() }),
    z.object({ type: z.literal('input_image'), image_url: z.string().nullish(), file_id: z.string().nullish() }),
    z.object({ type: z.literal('input_file'), filename: z.string().nullish(), file_id: z.string().nullish(), file_url: z.string().nullish() }),
  ],
  { error: unserved('input_text, output_text, refusal, input_image and input_file parts') },
);

/** Content as a string or parts, read as parts. */
const parts = z.preprocess((content) => (typeof content === 'string' ? [{ type: 'input_text', text: content }] : content), z.array(part));

/** A tool's name and, when a namespace holds it (Codex's MCP tools), the namespace's. */
const callName = { name: z.string().min(1), namespace: z.string().nullish() };

const inputItem = z.discriminatedUnion(
  'type',
  [
    // `developer` is the newer name of `system` for reasoning models.
    z.object({ type: z.literal('message'), role: z.enum(['system', 'developer', 'user', 'assistant']), content: parts }),
    z.object({ type: z.literal('function_call'), call_id: z.string().min(1), ...callName, arguments: z.string() }),
    z.object({ type: z.literal('function_call_output'), call_id: z.string().min(1), output: parts }),
    z.object({ type: z.literal('custom_tool_call'), call_id: z.string().min(1), ...callName, input: z.string() }),
    z.object({ type: z.literal('custom_tool_call_output'), call_id: z.string().min(1), output: parts }),
    // Tools offered from this item on: offered with the request's (a model given the whole conversation at once sees them all).
    z.object({ type: z.literal('additional_tools'), tools: z.array(z.lazy(() => tool)) }),
    // A reasoning model's reasoning, handed back: the run's model has its own, so it is left out.
    z.object({ type: z.literal('reasoning') }),
  ],
  { error: unserved('message, function_call, function_call_output, custom_tool_call, custom_tool_call_output, additional_tools and reasoning items') },
);

const functionTool = z.object({ type: z.literal('function'), name: z.string().min(1), description: z.string().nullish(), parameters: z.record(z.string(), z.unknown()).nullish() });

/** A tool that takes free text (Codex's apply_patch), maybe in a grammar: offered to the model as a tool of one string, `input`. */
const customTool = z.object({
  type: z.literal('custom'),
  name: z.string().min(1),
  description: z.string().nullish(),
  format: z.object({ type: z.string(), syntax: z.string().nullish(), definition: z.string().nullish() }).nullish(),
});

/** Tools grouped under a name (Codex's MCP servers): flattened for the model as `namespace__name`, as Codex flattens them. */
const namespaceTool = z.object({
  type: z.literal('namespace'),
  name: z.string().min(1),
  description: z.string().nullish(),
  tools: z.array(z.discriminatedUnion('type', [functionTool, customTool], { error: unserved('function and custom tools') })),
});

/** The tools a model of a run can be given; any other type is a built-in one (web_search, file_search, code_interpreter…), dropped. */
const SERVED_TOOLS: ReadonlySet<unknown> = new Set(['function', 'custom', 'namespace']);

const tool = z.preprocess(
  (tool) => (typeof tool === 'object' && tool !== null && 'type' in tool && !SERVED_TOOLS.has(tool.type) ? { type: 'built_in', name: String(tool.type) } : tool),
  z.discriminatedUnion('type', [functionTool, customTool, namespaceTool, z.object({ type: z.literal('built_in'), name: z.string() })]),
);

/** What the answer must be (`text.format`): JSON, or JSON of a schema. */
const textFormat = z.discriminatedUnion('type', [
  z.object({ type: z.literal('text') }),
  z.object({ type: z.literal('json_object') }),
  z.object({ type: z.literal('json_schema'), name: z.string().nullish(), schema: z.record(z.string(), z.unknown()) }),
]);

export const responsesRequestSchema = z.object({
  // A string is the user's message; an item without a type is a message, as the API reads them.
  input: z.preprocess(
    (input) => (typeof input === 'string' ? [{ type: 'message', role: 'user', content: input }] : input),
    z.array(z.preprocess((item) => (typeof item === 'object' && item !== null && !('type' in item) ? { ...item, type: 'message' } : item), inputItem)),
  ),
  instructions: z.string().nullish(),
  tools: z.array(tool).nullish(),
  text: z.object({ format: textFormat.nullish() }).nullish(),
  stream: z.boolean().nullish(),
  previous_response_id: z
    .null({ error: 'is not served: the gateway keeps no responses, so send the whole conversation (store: false)' })
    .optional(),
});
export type ResponsesRequest = z.output<typeof responsesRequestSchema>;

/** A tool as the model is offered it, and as its call is written back: its own name, its namespace, whether it takes free text. */
interface OfferedTool {
  schema: ToolSchema;
  name: string;
  namespace?: string;
  custom: boolean;
}

/** A namespace's tool as the model names it: Codex's flat name (`mcp__playwright__` and `browser_navigate`: `mcp__playwright__browser_navigate`). */
function flatName(name: string, namespace?: string | null): string {
  return namespace ? `${namespace.replace(/_+$/, '')}__${name.replace(/^_+/, '')}` : name;
}

/** The custom tool's one parameter: its input as text, in its grammar when it has one. */
function customSchema({ format }: z.output<typeof customTool>): Record<string, unknown> {
  const grammar = format?.type === 'grammar' && format.definition ? `Text in this ${format.syntax ?? ''} grammar:\n${format.definition}` : 'Free text.';
  return { type: 'object', properties: { input: { type: 'string', description: grammar } }, required: ['input'] };
}

/** Every tool the request offers (its own and its additional_tools items'), flattened, each once; and the built-in ones, by type. */
export function offeredTools(request: ResponsesRequest): { offered: OfferedTool[]; builtIn: string[] } {
  const all = [...(request.tools ?? []), ...request.input.flatMap((item) => (item.type === 'additional_tools' ? item.tools : []))];
  const offered = new Map<string, OfferedTool>();
  const builtIn = new Set<string>();
  const add = (given: z.output<typeof functionTool> | z.output<typeof customTool>, namespace?: string) => {
    const name = flatName(given.name, namespace);
    const parameters = given.type === 'custom' ? customSchema(given) : (given.parameters ?? NO_PARAMETERS);
    offered.set(name, { schema: { name, description: given.description ?? '', parameters }, name: given.name, ...(namespace && { namespace }), custom: given.type === 'custom' });
  };
  for (const given of all) {
    if (given.type === 'built_in') builtIn.add(given.name);
    else if (given.type === 'namespace') for (const inner of given.tools) add(inner, given.name);
    else add(given);
  }
  return { offered: [...offered.values()], builtIn: [...builtIn] };
}

/** The request's conversation; a tool output's images go to the model, as images, in a user message once the turn's outputs are all in. */
export function fromResponsesRequest(request: ResponsesRequest): Conversation {
  const messages: ChatMessage[] = request.instructions ? [{ role: 'system', content: request.instructions }] : [];
  // An output only carries its call's id: the name comes from the call.
  const callNames = new Map<string, string>();
  let images: ChatImage[] = [];
  const read = (content: ReadonlyArray<z.output<typeof part>>) => {
    const read = content.map((given) => partText(given));
    images.push(...read.flatMap((given) => (given.image ? [given.image] : [])));
    return joinParts(read);
  };
  const outputsDone = () => {
    if (images.length > 0) messages.push(...userTurn([], '', images));
    images = [];
  };
  const called = (call: ToolCall) => {
    callNames.set(call.id, call.name);
    // A turn's calls (and its text before them) are one assistant message, as in chat completions.
    const last = messages.at(-1);
    if (last?.role === 'assistant') last.toolCalls = [...(last.toolCalls ?? []), call];
    else messages.push({ role: 'assistant', content: null, toolCalls: [call] });
  };
  for (const item of request.input) {
    if (item.type !== 'function_call_output' && item.type !== 'custom_tool_call_output') outputsDone();
    switch (item.type) {
      case 'message': {
        const content = read(item.content);
        const role = item.role === 'developer' ? 'system' : item.role;
        // Only a user's message carries images; another's are named in its text.
        if (role === 'user') messages.push({ role, content, ...(images.length > 0 && { images }) });
        else messages.push({ role, content });
        images = [];
        break;
      }
      case 'function_call':
        called({ id: item.call_id, name: flatName(item.name, item.namespace), arguments: item.arguments });
        break;
      case 'custom_tool_call':
        called({ id: item.call_id, name: flatName(item.name, item.namespace), arguments: JSON.stringify({ input: item.input }) });
        break;
      case 'function_call_output':
      case 'custom_tool_call_output':
        messages.push({ role: 'tool', toolCallId: item.call_id, name: callNames.get(item.call_id) ?? '', content: read(item.output) });
        break;
      case 'additional_tools':
      case 'reasoning':
        break;
    }
  }
  outputsDone();
  const { offered, builtIn } = offeredTools(request);
  const format = request.text?.format;
  return {
    messages,
    tools: offered.map((tool) => tool.schema),
    ...(builtIn.length > 0 && { dropped: builtIn }),
    ...(format?.type === 'json_object' && { responseFormat: { type: 'json' as const } }),
    ...(format?.type === 'json_schema' && { responseFormat: { type: 'schema' as const, name: format.name ?? 'response', schema: format.schema } }),
  };
}

/** A part's text, and its image when it is one that can be given. */
function partText(given: z.output<typeof part>): { text: string; note?: boolean; image?: ChatImage } {
  switch (given.type) {
    case 'input_text':
    case 'output_text':
      return { text: given.text };
    case 'refusal':
      return { text: given.refusal };
    case 'input_image': {
      if (!given.image_url) return { text: `[image file ${given.file_id ?? ''}: not fetched]`, note: true };
      const { note, image } = imageAt(given.image_url);
      return { text: note, note: true, ...(image && { image }) };
    }
    case 'input_file':
      return { text: `[file ${given.filename ?? given.file_url ?? given.file_id ?? ''}: not read: the run's model is given text]`, note: true };
  }
}

/** What a Response's envelope holds besides the answer, and the tools offered: a call is written back as its tool is (its namespace, custom or not). */
export interface ResponseMeta {
  id: string;
  created_at: number;
  model: string;
  offered: readonly OfferedTool[];
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

/**
 * The answer's output items: its text as one message, then each tool call as its tool takes it: a
 * `custom_tool_call` with the input text for a custom tool, else a `function_call`; a namespace's
 * tool with its own name and its namespace apart, as the client offered it.
 */
function outputItems(response: ChatResponse, meta: ResponseMeta) {
  const { content, toolCalls } = response.message;
  const message = content
    ? [{ type: 'message' as const, id: `msg_${meta.id}`, status: 'completed' as const, role: 'assistant' as const, content: [{ type: 'output_text' as const, text: content, annotations: [] }] }]
    : [];
  const calls = toolCalls.map((call, index) => {
    const tool = meta.offered.find((offered) => offered.schema.name === call.name);
    const named = { call_id: call.id, name: tool?.name ?? call.name, ...(tool?.namespace && { namespace: tool.namespace }), status: 'completed' as const };
    if (!tool?.custom) return { type: 'function_call' as const, id: `fc_${meta.id}_${index}`, ...named, arguments: call.arguments };
    // The model wrote `{ "input": … }`; arguments that are not are given as they are.
    const input = parseJsonObject(call.arguments)?.input;
    return { type: 'custom_tool_call' as const, id: `ctc_${meta.id}_${index}`, ...named, input: typeof input === 'string' ? input : call.arguments };
  });
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
    } else if (item.type === 'custom_tool_call') {
      events.push(
        { type: 'response.output_item.added', output_index, item: { ...item, status: 'in_progress', input: '' } },
        { type: 'response.custom_tool_call_input.delta', ...at, delta: item.input },
        { type: 'response.custom_tool_call_input.done', ...at, input: item.input },
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
