import { setTimeout as sleep } from 'node:timers/promises';
import { retryAfterMs } from '../http.ts';

type Fetch = typeof globalThis.fetch;

export interface RetryingFetchOptions {
  /** Retries after the first attempt: `maxRetries + 1` requests at most. */
  maxRetries: number;
  /** Limit for each attempt, from sending the request to reading the whole body. */
  timeoutMs: number;
}

const BASE_BACKOFF_MS = 500;
const MAX_RETRY_AFTER_MS = 60_000;

/**
 * Wraps `fetch` with a per-attempt timeout and retries on 429, 5xx, network errors and timeouts,
 * honouring `retry-after`. For SDKs that don't retry themselves (Ollama's). Request bodies must be
 * replayable: a string, as the Ollama SDK sends, not a stream.
 */
export function retryingFetch(fetch: Fetch, { maxRetries, timeoutMs }: RetryingFetchOptions): Fetch {
  return async (input, init) => {
    const callerSignal = init?.signal ?? undefined;
    for (let attempt = 0; ; attempt++) {
      const timeout = AbortSignal.timeout(timeoutMs);
      const signal = callerSignal ? AbortSignal.any([callerSignal, timeout]) : timeout;
      const isLastAttempt = attempt >= maxRetries;
      let response: Response;
      try {
        response = await fetch(input, { ...init, signal });
      } catch (error) {
        if (isLastAttempt || callerSignal?.aborted) throw error;
        await sleep(backoffMs(attempt), undefined, { signal: callerSignal });
        continue;
      }
      if (isLastAttempt || !isRetryable(response.status)) return response;
      // Not awaited: nothing depends on it, and some fetch implementations (msw's) never settle it.
      void response.body?.cancel().catch(() => undefined);
      const wait = retryAfterMs(response.headers.get('retry-after'), MAX_RETRY_AFTER_MS) ?? backoffMs(attempt);
      await sleep(wait, undefined, { signal: callerSignal });
    }
  };
}

function isRetryable(status: number): boolean {
  return status === 429 || status >= 500;
}

function backoffMs(attempt: number): number {
  return BASE_BACKOFF_MS * 2 ** attempt;
}
