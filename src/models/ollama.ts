import type { ChatResponse as OllamaChatResponse } from 'ollama';
import { z } from 'zod';
import { parseInput } from '../input.ts';
import { samplingSchema, transportSchema } from './options.ts';
import { retryingFetch } from './retrying-fetch.ts';
import { withSlot } from './slots.ts';
import { kindOfStatus, ModelError, unreachable } from './types.ts';
import type { Model } from '../core/model.ts';
import { fromOllamaResponse, toOllamaMessage, toOllamaTool } from './wire-ollama.ts';


const optionsSchema = z
  .object({
    host: z.string().min(1, 'is required'),
  })
  .extend(transportSchema.shape)
  .extend(samplingSchema.shape);
export type OllamaModelOptions = z.input<typeof optionsSchema>;

/** A model served by Ollama's native chat API, through the official SDK; with `concurrency`, calls hold a slot of this model's endpoint. */
export function ollamaModel(name: string, options: OllamaModelOptions): Model {
  const id = `ollama:${name}`;
  const { host, maxRetries, timeoutMs, fetch, seed, temperature, maxTokens, concurrency, rateLimitRetries, maxBackoffMs } = parseInput(
    optionsSchema,
    options,
    `${id} options`,
  );
  // Looked up per request, not captured here, so a fetch patched later (msw) is still seen.
  const baseFetch = fetch ?? ((input, init) => globalThis.fetch(input, init));

  return {
    id,
    async chat({ messages, tools, signal, waits, responseFormat, sampling }) {
      // The SDK loads on the first call, so a worker whose runs use other models never imports it.
      const { Ollama } = await import('ollama');
      const fetchWithRetries = retryingFetch(baseFetch, { maxRetries, timeoutMs, rateLimitRetries, maxBackoffMs, waits });
      // The SDK passes no signal on non-streaming requests, so the caller's is added to each fetch here.
      const client = new Ollama({ host, fetch: (input, init) => fetchWithRetries(input, { ...init, signal }) });
      let response: OllamaChatResponse;
      try {
        response = await withSlot(`${host} ${name}`, concurrency, { signal, waits }, () =>
          client.chat({
            model: name,
            messages: messages.map(toOllamaMessage),
            ...(tools.length > 0 && { tools: tools.map(toOllamaTool) }),
            // The spec's sampling is the run's condition; what a client asked (sampling) fills in the rest.
            options: { seed, temperature: temperature ?? sampling?.temperature, num_predict: maxTokens ?? sampling?.maxTokens, top_p: sampling?.topP, stop: sampling?.stop },
            // Ollama's JSON mode is `json`, its structured output the schema itself.
            ...(responseFormat && { format: responseFormat.type === 'json' ? 'json' : responseFormat.schema }),
            stream: false,
          }),
        );
      } catch (error) {
        if (signal?.aborted) throw signal.reason;
        throw toModelError(error, host);
      }
      const turn = messages.filter((message) => message.role === 'assistant').length;
      return fromOllamaResponse(response, turn);
    },
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
