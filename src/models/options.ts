import { z } from 'zod';

/** Sampling options every provider takes: one schema, so every provider checks them alike. */
export const samplingSchema = z.object({
  seed: z.int().optional(),
  temperature: z.number().min(0).max(2).optional(),
  maxTokens: z.int().positive().optional(),
});

/** How a provider reaches its endpoint: retries (on 429, 5xx, timeouts), a timeout per attempt, a custom fetch (to serve doubles in-process). */
export const transportSchema = z.object({
  maxRetries: z.int().min(0).max(10).default(2),
  timeoutMs: z.int().positive().default(60_000),
  fetch: z.custom<typeof globalThis.fetch>((value) => typeof value === 'function', 'must be a function').optional(),
});
