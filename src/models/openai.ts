import type OpenAI from 'openai';
import type { ChatCompletion } from 'openai/resources/chat/completions';
import { z } from 'zod';
import { parseInput } from '../input.ts';
import { samplingSchema, transportSchema } from './options.ts';
import { kindOfStatus, ModelError, unreachable } from './types.ts';
import type { Model } from '../core/model.ts';
import { fromCompletion, toOpenAIMessage, toOpenAITool } from './wire-openai.ts';


const optionsSchema = z
  .object({
    apiKey: z.string().min(1, 'is required'),
    baseURL: z.url().optional(),
  })
  .extend(transportSchema.shape)
  .extend(samplingSchema.shape);
export type OpenAIModelOptions = z.input<typeof optionsSchema>;

/** A model behind the OpenAI chat completions API, through the official SDK (which does the retrying). */
export function openaiModel(name: string, options: OpenAIModelOptions): Model {
  const id = `openai:${name}`;
  const { apiKey, baseURL, maxRetries, timeoutMs, fetch, seed, temperature, maxTokens } = parseInput(
    optionsSchema,
    options,
    `${id} options`,
  );
  // The SDK loads on the first call: a worker whose runs use other models never imports it.
  let loaded: Promise<{ sdk: typeof import('openai'); client: OpenAI }> | undefined;
  const load = () => (loaded ??= import('openai').then((sdk) => ({ sdk, client: new sdk.default({ apiKey, baseURL, maxRetries, timeout: timeoutMs, fetch }) })));

  return {
    id,
    async chat({ messages, tools, signal }) {
      let completion: ChatCompletion;
      // The SDK adds a listener to the signal it is given and never removes it: given the run's
      // own, every call of a run would leave one behind. It gets one of this call's instead.
      const call = new AbortController();
      const relay = () => call.abort(signal!.reason);
      signal?.addEventListener('abort', relay, { once: true });
      if (signal?.aborted) relay();
      const { sdk, client } = await load();
      try {
        completion = await client.chat.completions.create(
          {
            model: name,
            messages: messages.map(toOpenAIMessage),
            ...(tools.length > 0 && { tools: tools.map(toOpenAITool) }),
            seed,
            temperature,
            max_tokens: maxTokens,
          },
          { signal: call.signal },
        );
      } catch (error) {
        if (signal?.aborted) throw signal.reason;
        throw toModelError(sdk, error, apiKey, client.baseURL);
      } finally {
        signal?.removeEventListener('abort', relay);
      }
      return fromCompletion(completion);
    },
  };
}

function toModelError({ APIConnectionError, APIConnectionTimeoutError, APIError }: typeof import('openai'), error: unknown, apiKey: string, baseURL: string): ModelError {
  const detail = redact(error instanceof Error ? error.message : String(error), apiKey);
  const message = `openai: ${detail}`;
  // The timeout error is a connection error too, so it is checked first.
  if (error instanceof APIConnectionTimeoutError) return new ModelError('timeout', message);
  if (error instanceof APIConnectionError) return unreachable('openai', baseURL, detail);
  if (error instanceof APIError && error.status !== undefined) {
    return new ModelError(kindOfStatus(error.status), message, error.status);
  }
  return new ModelError('bad_response', message);
}

/** Error bodies come from the server, which may echo what it was sent (some proxies quote the key). */
function redact(text: string, apiKey: string): string {
  return text.replaceAll(apiKey, '[redacted]').replace(/Bearer\s+\S+/gi, 'Bearer [redacted]');
}
