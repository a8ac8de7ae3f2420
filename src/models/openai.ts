import type OpenAI from 'openai';
import type { ChatCompletion } from 'openai/resources/chat/completions';
import { z } from 'zod';
import { parseInput } from '../input.ts';
import { samplingSchema, transportSchema } from './options.ts';
import { retryingFetch } from './retrying-fetch.ts';
import { withSlot } from './slots.ts';
import { kindOfStatus, ModelError, unreachable } from './types.ts';
import type { Model } from '../core/model.ts';
import { fromCompletion, toOpenAIMessage, toOpenAIResponseFormat, toOpenAITool } from './wire-openai.ts';


const optionsSchema = z
  .object({
    apiKey: z.string().min(1, 'is required'),
    baseURL: z.url().optional(),
  })
  .extend(transportSchema.shape)
  .extend(samplingSchema.shape);
export type OpenAIModelOptions = z.input<typeof optionsSchema>;

/** Longer than any call's retries and waits: the SDK's own timeout would cut them short (each attempt has `timeoutMs`). */
const NO_SDK_TIMEOUT_MS = 2 ** 31 - 1;

/**
 * A model behind the OpenAI chat completions API, through the official SDK. The retries are
 * harness-eval's (retrying-fetch.ts), not the SDK's, so that every wait is known and timed; with
 * `concurrency`, calls hold a slot of this model's endpoint.
 */
export function openaiModel(name: string, options: OpenAIModelOptions): Model {
  const id = `openai:${name}`;
  const { apiKey, baseURL, maxRetries, timeoutMs, fetch, seed, temperature, maxTokens, concurrency, rateLimitRetries, maxBackoffMs } = parseInput(
    optionsSchema,
    options,
    `${id} options`,
  );
  // Looked up per request, not captured here, so a fetch patched later (msw) is still seen.
  const baseFetch = fetch ?? ((input, init) => globalThis.fetch(input, init));
  // The SDK loads on the first call: a worker whose runs use other models never imports it.
  let loaded: Promise<{ sdk: typeof import('openai'); endpoint: string }> | undefined;
  const load = () => (loaded ??= import('openai').then((sdk) => ({ sdk, endpoint: new sdk.default({ apiKey, baseURL }).baseURL })));

  return {
    id,
    async chat({ messages, tools, signal, waits, responseFormat, sampling }) {
      const { sdk, endpoint } = await load();
      const fetchWithRetries = retryingFetch(baseFetch, { maxRetries, timeoutMs, rateLimitRetries, maxBackoffMs, waits });
      const client = new sdk.default({ apiKey, baseURL, maxRetries: 0, timeout: NO_SDK_TIMEOUT_MS, fetch: fetchWithRetries });
      let completion: ChatCompletion;
      // The SDK adds a listener to the signal it is given and never removes it: given the run's
      // own, every call of a run would leave one behind. It gets one of this call's instead.
      const call = new AbortController();
      const relay = () => call.abort(signal!.reason);
      signal?.addEventListener('abort', relay, { once: true });
      if (signal?.aborted) relay();
      try {
        completion = await withSlot(`${endpoint} ${name}`, concurrency, { signal: call.signal, waits }, () =>
          client.chat.completions.create(
            {
              model: name,
              messages: messages.map(toOpenAIMessage),
              ...(tools.length > 0 && { tools: tools.map(toOpenAITool) }),
              seed,
              // The spec's sampling is the run's condition; what a client asked (sampling) fills in the rest.
              temperature: temperature ?? sampling?.temperature,
              max_tokens: maxTokens ?? sampling?.maxTokens,
              top_p: sampling?.topP,
              stop: sampling?.stop,
              ...(responseFormat && { response_format: toOpenAIResponseFormat(responseFormat) }),
            },
            { signal: call.signal },
          ),
        );
      } catch (error) {
        if (signal?.aborted) throw signal.reason;
        throw toModelError(sdk, error, apiKey, endpoint);
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
