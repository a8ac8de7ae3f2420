import { z } from 'zod';
import { stopReasons } from '../harness/trace.ts';

/**
 * One judged run as the reporter reads it from a test's `harness-run.json` attachment: the cell
 * it belongs to, what the harness claimed, what the oracle found, and its costs. The reporter reads
 * nothing else, so merged shards give the same numbers as one run.
 */
export const reportedRunSchema = z.object({
  task: z.string(),
  model: z.string(),
  /** The layer stack's name (`bare`, `verified`), or its layers joined with `+`. */
  layers: z.string(),
  site: z.string(),
  claimed: z.boolean(),
  actual: z.boolean(),
  falseSuccess: z.boolean(),
  iterations: z.number(),
  attempts: z.number(),
  stopReason: z.enum(stopReasons),
  tokens: z.object({ input: z.number(), output: z.number() }),
  wallMs: z.number(),
  /** A claimed success the `evidence` layer rejected: it cited nothing that shows the outcome. */
  unsupportedClaim: z.boolean().optional(),
  /** Where the run came from, to link a cell to its runs. */
  test: z.object({ id: z.string(), title: z.string(), project: z.string(), repeatEachIndex: z.number(), retry: z.number() }),
});
export type ReportedRun = z.infer<typeof reportedRunSchema>;

export const intervalSchema = z.object({ value: z.number(), low: z.number(), high: z.number() });
export type Interval = z.infer<typeof intervalSchema>;

export const cellSchema = z.object({
  task: z.string(),
  model: z.string(),
  layers: z.string(),
  site: z.string(),
  runs: z.number(),
  successes: z.number(),
  claimed: z.number(),
  falseSuccesses: z.number(),
  /** Runs whose claimed success the `evidence` layer rejected. */
  unsupportedClaims: z.number(),
  successRate: intervalSchema,
  falseSuccessRate: intervalSchema,
  iterations: z.object({ mean: z.number(), median: z.number(), p95: z.number(), max: z.number() }),
  tokens: z.object({ input: z.number(), output: z.number() }),
  /** USD, from the price table; absent when the model has no price. */
  cost: z.number().optional(),
  wallMs: z.object({ median: z.number() }),
  stopReasons: z.record(z.string(), z.number()),
  /** pass^k for k = 1 … runs: the chance that k trials all succeed, C(c,k)/C(n,k). */
  passHatK: z.record(z.string(), z.number()),
  /** Test ids of the cell's runs, for the HTML report's links. */
  runIds: z.array(z.string()),
});
export type Cell = z.infer<typeof cellSchema>;

export const summarySchema = z.object({
  schemaVersion: z.literal(1),
  generatedAt: z.string(),
  /** False when written before the run finished (progress, or an interrupted run). */
  complete: z.boolean(),
  totals: z.object({ runs: z.number(), successes: z.number(), falseSuccesses: z.number() }),
  cells: z.array(cellSchema),
});
export type Summary = z.infer<typeof summarySchema>;

/** Per-million-token prices in USD, by model id. */
export type PriceTable = Record<string, { input: number; output: number }>;

/** A gate: cells that match (every given key equal) must stay within the limits. */
export const gateSchema = z
  .object({
    task: z.string().optional(),
    model: z.string().optional(),
    layers: z.string().optional(),
    site: z.string().optional(),
    maxFalseSuccessRate: z.number().min(0).max(1).default(0),
    minSuccessRate: z.number().min(0).max(1).optional(),
  })
  .strict();
export type Gate = z.input<typeof gateSchema>;
