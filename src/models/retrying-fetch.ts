import { setTimeout as sleep } from 'node:timers/promises';
import type { ModelWaits } from '../core/model.ts';
import { retryAfterMs } from '../http.ts';
import { waiting } from './waits.ts';

type Fetch = typeof globalThis.fetch;

export interface RetryingFetchOptions {
  /** Retries of a failure (another 5xx, a network error, a timeout): `maxRetries + 1` such requests at most. */
  maxRetries: number;
  /** Limit for each attempt, from sending the request to reading the whole body. */
  timeoutMs: number;
  /** Retries of a busy endpoint's 429 or 503, counted apart: being told to wait is not a failure (default 8). */
  rateLimitRetries?: number;
  /** The longest one wait before a retry (default 60 s). */
  maxBackoffMs?: number;
  /** Told of every wait before a retry: the run's time, not the agent's. */
  waits?: ModelWaits;
}

const BASE_BACKOFF_MS = 500;
export const DEFAULT_RATE_LIMIT_RETRIES = 8;
export const DEFAULT_MAX_BACKOFF_MS = 60_000;

/**
 * Wraps `fetch` with a per-attempt timeout and retries: a 429 or 503 up to `rateLimitRetries`
 * times, another 5xx, a network error or a timeout up to `maxRetries` times; each after the
 * answer's `retry-after` (a little later, jittered, so that workers told the same time do not all
 * come back at once), else after a jittered exponential backoff, never longer than `maxBackoffMs`.
 * Request bodies must be replayable: a string, as the SDKs send, not a stream.
 */
export function retryingFetch(fetch: Fetch, options: RetryingFetchOptions): Fetch {
  const { maxRetries, timeoutMs, rateLimitRetries = DEFAULT_RATE_LIMIT_RETRIES, maxBackoffMs = DEFAULT_MAX_BACKOFF_MS, waits } = options;
  return async (input, init) => {
    const callerSignal = init?.signal ?? undefined;
    const pause = (ms: number) => waiting(waits, () => sleep(ms, undefined, { signal: callerSignal }));
    let failures = 0;
    let busy = 0;
    for (;;) {
      const timeout = AbortSignal.timeout(timeoutMs);
      const signal = callerSignal ? AbortSignal.any([callerSignal, timeout]) : timeout;
      let response: Response;
      try {
        response = await fetch(input, { ...init, signal });
      } catch (error) {
        if (failures >= maxRetries || callerSignal?.aborted) throw error;
        await pause(backoffMs(failures++, maxBackoffMs));
        continue;
      }
      const isBusy = response.status === 429 || response.status === 503;
      const retry = isBusy ? busy < rateLimitRetries : response.status >= 500 && failures < maxRetries;
      if (!retry) return response;
      // Not awaited: nothing depends on it, and some fetch implementations (msw's) never settle it.
      void response.body?.cancel().catch(() => undefined);
      const attempt = isBusy ? busy++ : failures++;
      const told = retryAfterMs(response.headers.get('retry-after'), maxBackoffMs);
      await pause(told === undefined ? backoffMs(attempt, maxBackoffMs) : Math.min(maxBackoffMs, told * (1 + Math.random() * 0.1)));
    }
  };
}

/** 0.5 s, 1 s, 2 s… up to `maxMs`, each between half and all of it (jitter spreads workers that failed together). */
function backoffMs(attempt: number, maxMs: number): number {
  return Math.min(maxMs, BASE_BACKOFF_MS * 2 ** attempt) * (0.5 + Math.random() / 2);
}
