import { z } from 'zod';
import { stateChangeSchema, type StateChange } from './state.ts';
import { stopReasons } from './trace.ts';
import { escapesSchema, type AgentResult } from './agent.ts';
import type { SiteIdle } from './site.ts';

/** The run record: one judged run as a producer writes it and the reporter reads it, and what it is made of. */

/** The built-in harness's name in cells: every other agent is named by its user. */
export const BUILT_IN_AGENT = 'harness-eval';

/**
 * What ran, as data: the model with its options, the layer stack with its options, the site with
 * its capture, faults and starting state. Two runs belong to one cell only when these are equal,
 * whatever their names say.
 */
export const conditionSchema = z.object({
  agent: z.unknown().optional(),
  model: z.unknown(),
  layers: z.unknown(),
  site: z.unknown(),
  /** The task as it ran: its `revision` (absent in runs recorded before tasks had one). */
  task: z.unknown().optional(),
});
export type Condition = z.infer<typeof conditionSchema>;

/** Where a run came from: the test (one per planned trial and repeat), and its run's number in it. */
export const runOriginSchema = z.object({
  id: z.string(),
  title: z.string(),
  project: z.string(),
  repeatEachIndex: z.number(),
  /** Playwright's retry of the test that recorded this run (0 for the first attempt). */
  retry: z.number(),
  /** The run's number in its test, from 1: a test may plan several runs. */
  run: z.number().int().min(1),
});
export type RunOrigin = z.infer<typeof runOriginSchema>;

/**
 * A run as it is planned, attached to its test when it starts (`harness-run-start.json`): if the
 * worker dies before the run ends, the reporter still counts it, as incomplete and unjudged.
 */
/** What names a cell to a person; `condition` says what it is. */
export const cellNamesSchema = z.object({
  task: z.string(),
  /** What ran the task: `harness-eval` (the built-in harness), or a user's agent by its name. */
  agent: z.string(),
  model: z.string(),
  /** The built-in harness's layer stack: its name (`bare`, `verified`), or its layers joined with `+`; `-` for another agent. */
  layers: z.string(),
  site: z.string(),
});

export type CellNames = z.infer<typeof cellNamesSchema>;

export const plannedRunSchema = cellNamesSchema.extend({
  condition: conditionSchema,
  test: runOriginSchema,
  /** Whether the agent's code runs contained (a command agent in its sandbox, harness-eval's own code); absent in runs recorded before runs said. Known before the run starts. */
  contained: z.boolean().optional(),
  /** How it is contained, or why not, in one line. */
  containment: z.string().optional(),
});
export type PlannedRun = z.infer<typeof plannedRunSchema>;

/** Why a run is left out of every rate: what went wrong was not the agent's doing. */
export const excludedSchema = z.object({ reason: z.enum(['error', 'interrupted']), detail: z.string() });
export type Excluded = z.infer<typeof excludedSchema>;

/** A postcondition's verdict on a run. */
export const verdictSchema = z.object({ description: z.string(), holds: z.boolean(), detail: z.string() });
export type Verdict = z.infer<typeof verdictSchema>;


/** A token count, or null when the provider gave none that could be trusted (the trace says why). */
const tokenCount = z.number().finite().min(0).nullable();

/**
 * The run record as attached to its test (`harness-run.json`), the one form the reporter reads: the
 * cell it belongs to, what the agent claimed, what the oracle found, and its costs, trace aside.
 * The reporter reads nothing else, so merged shards give the same numbers as one run.
 */
export const runRecordSchema = plannedRunSchema.extend({
  /** The run record's version (RUN_RECORD_VERSION); a record without one is read as version 1. */
  schemaVersion: z.literal(1).default(1),
  claimed: z.boolean(),
  actual: z.boolean(),
  /** Claimed, not actual. */
  falseSuccess: z.boolean(),
  /** Actual, not claimed. */
  falseFailure: z.boolean(),
  /** Every change the task did not ask for. */
  sideEffects: z.array(stateChangeSchema),
  /** Cut short (a timeout, a crash): judged on the state it left, if the site still answered. */
  incomplete: z.boolean(),
  /** False when the oracle could not read the site (a worker that died with it): `actual` is then false. */
  judged: z.boolean(),
  iterations: z.number(),
  attempts: z.number(),
  stopReason: z.enum(stopReasons),
  /** `cachedInput`: of `input`, the tokens the provider served from its cache; absent when it said nothing of a cache. */
  tokens: z.object({ input: tokenCount, output: tokenCount, cachedInput: z.number().finite().min(0).optional() }),
  /** USD, from the `prices` option (src/playwright/cost.ts), when its model has a price; a lower bound when a token count is unknown. */
  cost: z.number().finite().min(0).optional(),
  wallMs: z.number(),
  /** Time the run's model calls waited on their endpoint (a slot, a rate limit's Retry-After, backoff), part of wallMs and left out of the agent's time limits; absent in older records. */
  modelWaitMs: z.number().min(0).optional(),
  /** A claimed success the `evidence` layer rejected: it cited nothing that shows the outcome. */
  unsupportedClaim: z.boolean().optional(),
  /** The postconditions `verify` passed a claimed success on without checking (they have no session-side check): absent when it checked them all, or did not run. */
  unverified: z.array(z.string()).optional(),
  /** Prompt tokens the run's observations cost: screenshots sent (estimated) and the text tools' outputs (o200k_base). */
  observationTokens: z.object({ screenshots: z.number().min(0), text: z.number().min(0) }).optional(),
  /** The agent's own words with its claim. */
  summary: z.string().optional(),
  /** The agent's answer, for a task that asks a question. */
  answer: z.string().optional(),
  /** Each postcondition's verdict, as the oracle gave it. */
  verdicts: z.array(verdictSchema).optional(),
  /** What the sandbox saw the agent try: processes it left running when its main process ended, and every other attempt. */
  escapes: escapesSchema.optional(),
  /**
   * Set when the run says nothing of the agent: `error` (the agent or the harness failed before or
   * outside the agent's work: it could not start, it crashed before doing anything, the site or the
   * gateway failed) or `interrupted` (the user or the runner stopped it). Such a run is counted and
   * listed, never in a rate or a gate's denominator.
   */
  excluded: excludedSchema.optional(),
  /**
   * Set by the reporter, not attached: false successes on this trial's earlier attempts, which
   * Playwright retried. The run counted is the last attempt's, but a lie a retry hid still counts.
   */
  earlierFalseSuccesses: z.number().int().min(1).optional(),
  /** The model calls the run's trace recorded, answered or failed: set by the reporter from the attachment's trace, not attached; absent when it had none. A cell whose runs called none names no model. */
  modelCalls: z.number().int().min(0).optional(),
  /** The trace as a person reads it: set by the reporter from the attachment's trace, not attached. */
  transcript: z.string().optional(),
  /** Set by the reporter, relative to the report's folder: the run's Playwright trace and its test's entry in Playwright's HTML report. */
  links: z.object({ trace: z.string().optional(), testReport: z.string().optional() }).optional(),
});
export type AttachedRunRecord = z.infer<typeof runRecordSchema>;
/** An attached run record as a producer writes it: `schemaVersion` may be left out. */
export type AttachedRunRecordInput = z.input<typeof runRecordSchema>;

/** The run record's version: bumped whenever its shape changes, so a reader can tell. */
export const RUN_RECORD_VERSION = 1;

/**
 * One judged run, as `evaluate` returns it: what the agent reported (its claim, costs and trace)
 * and what the oracle found. The fixture attaches it with the cell's names, trace aside, as
 * an `AttachedRunRecord` (`runRecordSchema`): one idea, the run record, in two forms.
 */
export interface RunRecord extends AgentResult {
  schemaVersion: typeof RUN_RECORD_VERSION;
  /** The agent's name (`harness-eval` for the built-in harness). */
  agent: string;
  site: string;
  actual: boolean;
  falseSuccess: boolean;
  falseFailure: boolean;
  sideEffects: StateChange[];
  /** Cut short (the test's time ran out, the browser died): judged on the state it left. */
  incomplete: boolean;
  judged: boolean;
  verdicts: Verdict[];
  /** The postconditions a claimed success was passed on without a check of (`verify` records them: an answer has no session-side check); absent when none. */
  unverified?: string[];
  /** The wait before the end snapshot: `settled` false when the site still owed answers at its bound, so the end state may miss them; absent when the site no longer answered. */
  siteIdle?: SiteIdle;
  /** Whether the agent's code ran contained (a command in its sandbox, harness-eval's own code), and how or why not. */
  contained: boolean;
  containment: string;
  /** Time its model calls spent waiting on the endpoint (queued for a slot, a rate limit's Retry-After, backoff): left out of the agent's own time limits. */
  modelWaitMs: number;
  /** Set when the run says nothing of the agent (an error before its work, an interruption): out of every rate. */
  excluded?: Excluded;
}
