import { z } from 'zod';

/** Sampling options every provider takes: one schema, so every provider checks them alike. */
export const samplingSchema = z.object({
  seed: z.int().optional(),
  temperature: z.number().min(0).max(2).optional(),
  maxTokens: z.int().positive().optional(),
});

/**
 * An endpoint's limits, settable on a model spec: how many calls may be in flight at once and how
 * long a busy endpoint is waited for. They change when a call is made, never what it asks, so
 * they are no part of a run's condition. Defaults are applied where they are used.
 */
export const endpointLimitsSchema = z.object({
  /** Calls in flight to this model at its endpoint at once, across all workers of the run (default DEFAULT_CONCURRENCY). */
  concurrency: z.int().positive().optional(),
  /** Retries of a 429 or 503 (the endpoint busy, not broken), each after its Retry-After or a jittered exponential backoff (default 8). */
  rateLimitRetries: z.int().min(0).max(20).optional(),
  /** The longest single wait before a retry, in ms: a longer Retry-After is cut to it (default 60 s). */
  maxBackoffMs: z.int().positive().optional(),
});
export type EndpointLimits = z.infer<typeof endpointLimitsSchema>;

/** Calls at once to one model at one endpoint, across a run's workers, unless its spec says otherwise. */
export const DEFAULT_CONCURRENCY = 4;

/** How a provider reaches its endpoint: retries (on 5xx, timeouts, network errors; a busy endpoint's 429/503 by `rateLimitRetries`), a timeout per attempt, a custom fetch (to serve doubles in-process). */
export const transportSchema = z
  .object({
    maxRetries: z.int().min(0).max(10).default(2),
    timeoutMs: z.int().positive().default(60_000),
    fetch: z.custom<typeof globalThis.fetch>((value) => typeof value === 'function', 'must be a function').optional(),
  })
  .extend(endpointLimitsSchema.shape);
