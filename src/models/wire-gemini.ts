import { z } from 'zod';
import type { ChatImage, ChatMessage, ChatResponse, ResponseFormat, Sampling, Usage } from '../core/model.ts';
import { parseJsonObject } from '../text.ts';
import { assistantTurn, callLedger, imageOf, joinParts, joinText, NO_PARAMETERS, userTurn, type Conversation } from './wire.ts';

/**
 * Gemini's `generateContent` and `streamGenerateContent` as the model gateway hears them from an
 * agent (`@google/genai`, the Gemini CLI, a REST client): a request → the conversation, an answer
 * → a GenerateContentResponse, or the chunks Gemini streams for it. `generationConfig`'s JSON mode
 * (a schema too) and sampling go to the run's model in its own API's words; other fields
 * (safetySettings, toolConfig, thinkingConfig…) are dropped.
 */

/** Google's APIs take a field in camelCase or snake_case (proto JSON): an object's own keys are read as camelCase, its values (a call's args) as they are. */
function protoObject<T extends z.core.$ZodLooseShape>(shape: T, params?: Parameters<typeof z.object>[1]) {
  return z.preprocess(camelKeys, z.object(shape, params));
}

function camelKeys(value: unknown): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return value;
  return Object.fromEntries(Object.entries(value).map(([key, field]) => [key.replace(/_([a-z])/g, (_match, letter: string) => letter.toUpperCase()), field]));
}

const part = protoObject({
  text: z.string().nullish(),
  // A thinking model's thought summary, handed back: the run's model has its own, so it is left out.
  thought: z.boolean().nullish(),
  functionCall: protoObject({ id: z.string().nullish(), name: z.string().min(1), args: z.record(z.string(), z.unknown()).nullish() }).nullish(),
  functionResponse: protoObject({ id: z.string().nullish(), name: z.string().min(1), response: z.record(z.string(), z.unknown()) }).nullish(),
  /** An image (a screenshot beside a function's response): given to the model; another type is named only. */
  inlineData: protoObject({ mimeType: z.string(), data: z.string() }).nullish(),
  fileData: protoObject({ mimeType: z.string().nullish(), fileUri: z.string() }).nullish(),
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

/** A tool: its function declarations, and the built-in tools it names besides (googleSearch, codeExecution…), which are dropped. */
const tool = z.preprocess(
  (value) => {
    const tool = camelKeys(value);
    if (typeof tool !== 'object' || tool === null) return tool;
    return { functionDeclarations: (tool as { functionDeclarations?: unknown }).functionDeclarations, builtIn: Object.keys(tool).filter((key) => key !== 'functionDeclarations') };
  },
  z.object({ functionDeclarations: z.array(functionDeclaration).nullish(), builtIn: z.array(z.string()) }),
);

const generationConfig = protoObject({
  responseMimeType: z.string().nullish(),
  /** An OpenAPI schema of the answer, Gemini's first way to give one. */
  responseSchema: z.record(z.string(), z.unknown()).nullish(),
  /** A JSON Schema of the answer, the newer way (the Gemini CLI's). */
  responseJsonSchema: z.record(z.string(), z.unknown()).nullish(),
  temperature: z.number().nullish(),
  topP: z.number().nullish(),
  maxOutputTokens: z.int().nullish(),
  stopSequences: z.array(z.string()).nullish(),
});

export const generateContentRequestSchema = protoObject({
  contents: z.array(content).min(1, 'must hold at least one content'),
  systemInstruction: content.nullish(),
  tools: z.array(tool).nullish(),
  generationConfig: generationConfig.nullish(),
});
export type GenerateContentRequest = z.output<typeof generateContentRequestSchema>;

/** countTokens: contents alone, or a whole generateContent request. */
export const countTokensRequestSchema = protoObject({ contents: z.array(content).nullish(), generateContentRequest: generateContentRequestSchema.nullish() })
  .refine((request) => request.contents?.length || request.generateContentRequest, { message: 'must hold contents or a generateContentRequest', path: ['contents'] })
  .transform((request): GenerateContentRequest => request.generateContentRequest ?? { contents: request.contents ?? [] });

/** An OpenAPI schema as JSON Schema: Gemini writes its types in capitals (`OBJECT`), JSON Schema in lower case. */
function jsonSchemaOf(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(jsonSchemaOf);
  if (typeof schema !== 'object' || schema === null) return schema;
  return Object.fromEntries(Object.entries(schema).map(([key, value]) => [key, key === 'type' && typeof value === 'string' ? value.toLowerCase() : jsonSchemaOf(value)]));
}

export function fromGenerateContentRequest(request: GenerateContentRequest): Conversation {
  const messages: ChatMessage[] = request.systemInstruction ? [{ role: 'system', content: joinText(request.systemInstruction.parts) }] : [];
  // Gemini's calls and responses may come without ids: a response answers its call by id, else by name.
  const calls = callLedger();
  for (const { role, parts: all } of request.contents) {
    const parts = all.filter((part) => !part.thought);
    const images: ChatImage[] = [];
    const text = joinParts(parts.flatMap((part) => partText(part, images)));
    if (role === 'model') {
      const made = parts.flatMap(({ functionCall: call }) => (call ? [{ id: call.id, name: call.name, arguments: JSON.stringify(call.args ?? {}) }] : []));
      messages.push(assistantTurn(text, calls.made(made)));
    } else {
      const results = parts.flatMap(({ functionResponse: result }): ChatMessage[] =>
        result ? [{ role: 'tool', ...calls.answer(result, messages.length), content: JSON.stringify(result.response) }] : [],
      );
      messages.push(...userTurn(results, text, images));
    }
  }
  const dropped = (request.tools ?? []).flatMap((tool) => tool.builtIn);
  const tools = (request.tools ?? []).flatMap((tool) =>
    (tool.functionDeclarations ?? []).map((declaration) => ({
      name: declaration.name,
      description: declaration.description ?? '',
      parameters: declaration.parametersJsonSchema ?? (declaration.parameters ? (jsonSchemaOf(declaration.parameters) as Record<string, unknown>) : NO_PARAMETERS),
    })),
  );
  return { messages, tools, ...(dropped.length > 0 && { dropped }), ...answerOptions(request.generationConfig) };
}

/** A part's text, or what it is (an image, a file), each note on its own line; a call's or a response's part has none. An image goes to `images`. */
function partText(given: z.output<typeof part>, images: ChatImage[]): Array<{ text: string; note?: boolean }> {
  if (given.inlineData) {
    const { note, image } = imageOf(given.inlineData.mimeType, given.inlineData.data);
    if (image) images.push(image);
    return [{ text: note, note: true }];
  }
  if (given.fileData) return [{ text: `[file ${given.fileData.fileUri}: not fetched]`, note: true }];
  return given.text ? [{ text: given.text }] : [];
}

/** What generationConfig asks of the answer: JSON (of its schema, when it gives one) for `application/json`, and its sampling. */
function answerOptions(config: z.output<typeof generationConfig> | null | undefined): { responseFormat?: ResponseFormat; sampling?: Sampling } {
  if (!config) return {};
  const schema = config.responseJsonSchema ?? (config.responseSchema && (jsonSchemaOf(config.responseSchema) as Record<string, unknown>));
  const given: Sampling = { temperature: config.temperature ?? undefined, topP: config.topP ?? undefined, maxTokens: config.maxOutputTokens ?? undefined, stop: config.stopSequences ?? undefined };
  const sampling = Object.fromEntries(Object.entries(given).filter(([, value]) => value !== undefined)) as Sampling;
  return {
    ...(config.responseMimeType === 'application/json' && { responseFormat: schema ? { type: 'schema', name: 'response', schema } : { type: 'json' } }),
    ...(Object.keys(sampling).length > 0 && { sampling }),
  };
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
