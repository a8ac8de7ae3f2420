import { Ollama } from 'ollama';
import type { ChatResponse as OllamaChatResponse, Message as OllamaMessage, Tool as OllamaTool } from 'ollama';
import { z } from 'zod';
import { parseInput } from '../input.ts';
import { samplingSchema, transportSchema } from './options.ts';
import { retryingFetch } from './retrying-fetch.ts';
import { kindOfStatus, ModelError, readUsage, unreachable } from './types.ts';
import type { ChatMessage, ChatResponse, Model, ToolSchema } from './types.ts';
import { parseJsonObject } from '../text.ts';


const optionsSchema = z
  .object({
    host: z.string().min(1, 'is required'),
  })
  .extend(transportSchema.shape)
  .extend(samplingSchema.shape);
export type OllamaModelOptions = z.input<typeof optionsSchema>;

/** A model served by Ollama's native chat API, through the official SDK. */
export function ollamaModel(name: string, options: OllamaModelOptions): Model {
  const id = `ollama:${name}`;
  const { host, maxRetries, timeoutMs, fetch, seed, temperature, maxTokens } = parseInput(
    optionsSchema,
    options,
    `${id} options`,
  );
  // Looked up per request, not captured here, so a fetch patched later (msw) is still seen.
  const baseFetch = fetch ?? ((input, init) => globalThis.fetch(input, init));
  const fetchWithRetries = retryingFetch(baseFetch, { maxRetries, timeoutMs });

  return {
    id,
    async chat({ messages, tools, signal }) {
      // The SDK passes no signal on non-streaming requests, so the caller's is added to each fetch here.
      const client = new Ollama({ host, fetch: (input, init) => fetchWithRetries(input, { ...init, signal }) });
      let response: OllamaChatResponse;
      try {
        response = await client.chat({
          model: name,
          messages: messages.map(toOllamaMessage),
          ...(tools.length > 0 && { tools: tools.map(toOllamaTool) }),
          options: { seed, temperature, num_predict: maxTokens },
          stream: false,
        });
      } catch (error) {
        if (signal?.aborted) throw signal.reason;
        throw toModelError(error, host);
      }
      const turn = messages.filter((message) => message.role === 'assistant').length;
      return fromOllamaResponse(response, turn);
    },
  };
}

function toOllamaMessage(message: ChatMessage): OllamaMessage {
  switch (message.role) {
    case 'system':
    case 'user':
      return { role: message.role, content: message.content };
    case 'assistant':
      return {
        role: 'assistant',
        content: message.content ?? '',
        ...(message.toolCalls?.length && {
          tool_calls: message.toolCalls.map((call) => ({
            // Ollama wants an object: arguments the model got wrong go back as {}.
            function: { name: call.name, arguments: parseJsonObject(call.arguments) ?? {} },
          })),
        }),
      };
    case 'tool':
      return { role: 'tool', content: message.content, tool_name: message.name };
  }
}

function toOllamaTool(tool: ToolSchema): OllamaTool {
  return {
    type: 'function',
    // The SDK's parameters type is a narrow slice of JSON Schema; Ollama takes any.
    function: { name: tool.name, description: tool.description, parameters: tool.parameters as OllamaTool['function']['parameters'] },
  };
}

/**
 * Ollama has no tool-call ids, so they are made from the turn (assistant messages so far) and the
 * call's index: the same conversation always gets the same ids, and no two calls in it share one.
 */
function fromOllamaResponse(response: OllamaChatResponse, turn: number): ChatResponse {
  const message = response?.message;
  if (!message) throw new ModelError('bad_response', 'ollama: the response has no message');
  const toolCalls = (message.tool_calls ?? []).map((call, index) => ({
    id: `call_${turn}_${index}`,
    name: call.function.name,
    arguments: JSON.stringify(call.function.arguments ?? {}),
  }));
  return {
    // Ollama answers "" where OpenAI answers null: no text besides the tool calls.
    message: { content: message.content || null, toolCalls },
    usage: readUsage({ input: ['prompt_eval_count', response.prompt_eval_count], output: ['eval_count', response.eval_count] }),
    finishReason: response.done_reason,
  };
}

function toModelError(error: unknown, host: string): ModelError {
  const detail = error instanceof Error ? error.message : String(error);
  const message = `ollama: ${detail}`;
  // The SDK's ResponseError is not exported, so it is recognised by shape.
  const status = (error as { status_code?: unknown } | null)?.status_code;
  if (typeof status === 'number') return new ModelError(kindOfStatus(status), message, status);
  if (error instanceof Error && error.name === 'TimeoutError') return new ModelError('timeout', message);
  // fetch rejects with a TypeError when it cannot connect.
  if (error instanceof TypeError) return unreachable('ollama', host, detail);
  return new ModelError('bad_response', message);
}
