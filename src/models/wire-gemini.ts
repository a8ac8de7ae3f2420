import { z } from 'zod';
import type { ChatMessage, ChatResponse, ToolSchema, Usage } from '../core/model.ts';
import { parseJsonObject } from '../text.ts';
import { assistantTurn, callLedger, joinText, NO_PARAMETERS, userTurn } from './wire.ts';

/**
 * Gemini's `generateContent` and `streamGenerateContent` as the model gateway hears them from an
 * agent (`@google/genai`, the Gemini CLI, a REST client): a request → the conversation, an answer
 * → a GenerateContentResponse, or the chunks Gemini streams for it. Unknown fields
 * (generationConfig, safetySettings, toolConfig…) are dropped: the run's model spec sets those.
 */

/** Google's APIs take a field in camelCase or snake_case (proto JSON): an object's own keys are read as camelCase, its values (a call's args) as they are. */
function protoObject<T extends z.core.$ZodLooseShape>(shape: T, params?: Parameters<typeof z.object>[1]) {
  return z.preprocess(camelKeys, z.object(shape, params));
}

function camelKeys(value: unknown): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return value;
  return Object.fromEntries(Object.entries(value).map(([key, field]) => [key.replace(/_([a-z])/g, (_match, letter: string) => letter.toUpperCase()), field]));
}

const NOT_TEXT = 'is not served: the run’s model is a text model';

const part = protoObject({
  text: z.string().nullish(),
  // A thinking model's thought summary, handed back: the run's model has its own, so it is left out.
  thought: z.boolean().nullish(),
  functionCall: protoObject({ id: z.string().nullish(), name: z.string().min(1), args: z.record(z.string(), z.unknown()).nullish() }).nullish(),
  functionResponse: protoObject({ id: z.string().nullish(), name: z.string().min(1), response: z.record(z.string(), z.unknown()) }).nullish(),
  inlineData: z.never({ error: NOT_TEXT }).optional(),
  fileData: z.never({ error: NOT_TEXT }).optional(),
});

const content = protoObject({
  // Older clients send a function's response as the role `function`: the user's side, as `user` is.
  role: z.enum(['user', 'model', 'function']).nullish(),
  parts: z.array(part),
});

const functionDeclaration = protoObject({
  name: z.string().min(1),
  description: z.string().nullish(),
  /** An OpenAPI schema, Gemini's first way to give parameters. */
  parameters: z.record(z.string(), z.unknown()).nullish(),
  /** A JSON Schema, the newer way (the Gemini CLI's). */
  parametersJsonSchema: z.record(z.string(), z.unknown()).nullish(),
});

const tool = z.preprocess(
  camelKeys,
  z.strictObject(
    { functionDeclarations: z.array(functionDeclaration).nullish() },
    { error: (issue) => (issue.code === 'unrecognized_keys' ? `is not served (${issue.keys.join(', ')}): the gateway serves the run’s model, which has no built-in tools` : undefined) },
  ),
);

export const generateContentRequestSchema = protoObject({
  contents: z.array(content).min(1, 'must hold at least one content'),
  systemInstruction: content.nullish(),
  tools: z.array(tool).nullish(),
});
export type GenerateContentRequest = z.output<typeof generateContentRequestSchema>;

/** An OpenAPI schema as JSON Schema: Gemini writes its types in capitals (`OBJECT`), JSON Schema in lower case. */
function jsonSchemaOf(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(jsonSchemaOf);
  if (typeof schema !== 'object' || schema === null) return schema;
  return Object.fromEntries(Object.entries(schema).map(([key, value]) => [key, key === 'type' && typeof value === 'string' ? value.toLowerCase() : jsonSchemaOf(value)]));
}

export function fromGenerateContentRequest(request: GenerateContentRequest): { messages: ChatMessage[]; tools: ToolSchema[] } {
  const messages: ChatMessage[] = request.systemInstruction ? [{ role: 'system', content: joinText(request.systemInstruction.parts) }] : [];
  // Gemini's calls and responses may come without ids: a response answers its call by id, else by name.
  const calls = callLedger();
  for (const { role, parts: all } of request.contents) {
    const parts = all.filter((part) => !part.thought);
    const text = joinText(parts);
    if (role === 'model') {
      const made = parts.flatMap(({ functionCall: call }) => (call ? [{ id: call.id, name: call.name, arguments: JSON.stringify(call.args ?? {}) }] : []));
      messages.push(assistantTurn(text, calls.made(made)));
    } else {
      const results = parts.flatMap(({ functionResponse: result }): ChatMessage[] =>
        result ? [{ role: 'tool', ...calls.answer(result, messages.length), content: JSON.stringify(result.response) }] : [],
      );
      messages.push(...userTurn(results, text));
    }
  }
  const tools = (request.tools ?? []).flatMap((tool) =>
    (tool.functionDeclarations ?? []).map((declaration) => ({
      name: declaration.name,
      description: declaration.description ?? '',
      parameters: declaration.parametersJsonSchema ?? (declaration.parameters ? (jsonSchemaOf(declaration.parameters) as Record<string, unknown>) : NO_PARAMETERS),
    })),
  );
  return { messages, tools };
}

/** What a response's envelope holds besides the answer. */
export interface GenerateContentMeta {
  responseId: string;
  modelVersion: string;
}

/** Usage as Gemini writes it (its prompt count holds the cached tokens, as OpenAI's does); a count the model did not give is left out. */
function toUsageMetadata({ input, output, cachedInput }: Usage) {
  return {
    ...(input !== null && { promptTokenCount: input }),
    ...(cachedInput !== undefined && { cachedContentTokenCount: cachedInput }),
    ...(output !== null && { candidatesTokenCount: output }),
    ...(input !== null && output !== null && { totalTokenCount: input + output }),
  };
}

/** The answer's parts: its text, then a functionCall per call (arguments that are not a JSON object go as {}: Gemini takes an object). */
function partsOf(response: ChatResponse) {
  const { content, toolCalls } = response.message;
  return [...(content ? [{ text: content }] : []), ...toolCalls.map((call) => ({ functionCall: { id: call.id, name: call.name, args: parseJsonObject(call.arguments) ?? {} } }))];
}

/** One response: `parts` as its candidate's content, and, when `last`, the finish reason and usage. */
function chunk(response: ChatResponse, meta: GenerateContentMeta, parts: object[], last: boolean) {
  return {
    candidates: [{ content: { role: 'model' as const, parts }, index: 0, ...(last && { finishReason: response.finishReason === 'length' ? 'MAX_TOKENS' : 'STOP' }) }],
    ...(last && { usageMetadata: toUsageMetadata(response.usage) }),
    modelVersion: meta.modelVersion,
    responseId: meta.responseId,
  };
}

export function toGenerateContentResponse(response: ChatResponse, meta: GenerateContentMeta) {
  return chunk(response, meta, partsOf(response), true);
}

/** The same answer as the chunks Gemini streams: a part each, the last with the finish reason and usage. */
export function toGenerateContentChunks(response: ChatResponse, meta: GenerateContentMeta) {
  const parts = partsOf(response);
  if (parts.length === 0) return [chunk(response, meta, [], true)];
  return parts.map((part, index) => chunk(response, meta, [part], index === parts.length - 1));
}

/** Google's status names, by HTTP status. */
const STATUSES: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  429: 'RESOURCE_EXHAUSTED',
  500: 'INTERNAL',
  502: 'UNAVAILABLE',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
};

/** An error as Google's APIs write it; the gateway's own code goes as its ErrorInfo's reason (`GATEWAY_LIMIT`). */
export function geminiError(status: number, message: string, code: string) {
  return {
    error: {
      code: status,
      message,
      status: STATUSES[status] ?? (status < 500 ? 'INVALID_ARGUMENT' : 'INTERNAL'),
      details: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: code.toUpperCase(), domain: 'harness-eval' }],
    },
  };
}
