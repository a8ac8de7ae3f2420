import { z } from 'zod';
import { BUILT_IN_AGENT } from '../eval/agent.ts';
import { stopReasons } from '../harness/trace.ts';

/** A change to the site's state between the run's start and end snapshots, as the oracle lists it. */
export const stateChangeSchema = z.object({
  /** What changed: `vote`, `unvote` (and, as sites grow, `hide`, `comment`, …). */
  kind: z.string(),
  /** The changed thing: a story id, a comment id. */
  id: z.string(),
  /** One line for a person: `harness upvoted 46194762 ("Show HN: …")`. */
  detail: z.string(),
});
export type StateChange = z.infer<typeof stateChangeSchema>;

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

/** A postcondition's verdict on a run. */
export const verdictSchema = z.object({ description: z.string(), holds: z.boolean(), detail: z.string() });

/** What a command agent's sandbox saw it try: processes it left running when its main process ended. */
export const escapesSchema = z.object({ processesLeft: z.number().int().min(0) });
export type Escapes = z.infer<typeof escapesSchema>;

/** A token count, or null when the provider gave none that could be trusted (the trace says why). */
const tokenCount = z.number().finite().min(0).nullable();

/**
 * One judged run as the reporter reads it from a test's `harness-run.json` attachment: the cell
 * it belongs to, what the agent claimed, what the oracle found, and its costs. The reporter reads
 * nothing else, so merged shards give the same numbers as one run.
 */
export const reportedRunSchema = plannedRunSchema.extend({
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
  tokens: z.object({ input: tokenCount, output: tokenCount }),
  wallMs: z.number(),
  /** A claimed success the `evidence` layer rejected: it cited nothing that shows the outcome. */
  unsupportedClaim: z.boolean().optional(),
  /** Prompt tokens the run's observations cost: screenshots sent (estimated) and the text tools' outputs (o200k_base). */
  observationTokens: z.object({ screenshots: z.number().min(0), text: z.number().min(0) }).optional(),
  /** The agent's own words with its claim. */
  summary: z.string().optional(),
  /** The agent's answer, for a task that asks a question. */
  answer: z.string().optional(),
  /** Each postcondition's verdict, as the oracle gave it. */
  verdicts: z.array(verdictSchema).optional(),
  /** What the sandbox saw the agent try: processes it left running when its main process ended. */
  escapes: escapesSchema.optional(),
  /**
   * Set by the reporter, not attached: false successes on this trial's earlier attempts, which
   * Playwright retried. The run counted is the last attempt's, but a lie a retry hid still counts.
   */
  earlierFalseSuccesses: z.number().int().min(1).optional(),
  /** The trace as a person reads it: set by the reporter from the attachment's trace, not attached. */
  transcript: z.string().optional(),
  /** Set by the reporter, relative to the report's folder: the run's Playwright trace and its test's entry in Playwright's HTML report. */
  links: z.object({ trace: z.string().optional(), testReport: z.string().optional() }).optional(),
});
export type ReportedRun = z.infer<typeof reportedRunSchema>;
/** A run record as a producer writes it: `schemaVersion` may be left out. */
export type ReportedRunInput = z.input<typeof reportedRunSchema>;

export const intervalSchema = z.object({ value: z.number(), low: z.number(), high: z.number() });
export type Interval = z.infer<typeof intervalSchema>;

export const cellSchema = cellNamesSchema.extend({
  /** The condition every run of the cell ran under. */
  condition: conditionSchema.optional(),
  /** One per planned trial: a retried test counts once, with its last attempt's run. */
  runs: z.number(),
  successes: z.number(),
  claimed: z.number(),
  /** Of the trials' counted (last) attempts. */
  falseSuccesses: z.number(),
  /** False successes on attempts Playwright retried: not trials, but a lie a passing retry hid. */
  falseSuccessAttempts: z.number(),
  /** Trials with a false success on any attempt: what the false-success gates judge, over `runs`. */
  falseSuccessTrials: z.number(),
  falseFailures: z.number(),
  /** Runs that changed something the task did not ask for. */
  sideEffectRuns: z.number(),
  /** Runs cut short (timeout, crash), counted in every rate above. */
  incomplete: z.number(),
  /** Trials whose test Playwright retried (their last attempt's run is the one counted). */
  retried: z.number(),
  /** Runs whose claimed success the `evidence` layer rejected. */
  unsupportedClaims: z.number(),
  successRate: intervalSchema,
  /** Over all runs, not over claims: the chance that a run of this cell misleads you. */
  falseSuccessRate: intervalSchema,
  falseFailureRate: intervalSchema,
  sideEffectRate: intervalSchema,
  iterations: z.object({ mean: z.number(), median: z.number(), p95: z.number(), max: z.number() }),
  /** Sums over the runs whose counts are known; `unknownRuns` had none that could be trusted. */
  tokens: z.object({ input: z.number(), output: z.number(), unknownRuns: z.number() }),
  /** Sums over the runs that recorded them: tokens of screenshots sent and of text tools' outputs. */
  observationTokens: z.object({ screenshots: z.number(), text: z.number(), runs: z.number() }).optional(),
  /** USD, from the price table; absent when the model has no price. */
  cost: z.number().optional(),
  wallMs: z.object({ median: z.number() }),
  stopReasons: z.record(z.string(), z.number()),
  /** pass^k for k = 1 … runs: the chance that k trials all succeed, C(c,k)/C(n,k). */
  passHatK: z.record(z.string(), z.number()),
  /** Test ids of the cell's runs, for the HTML report's links. */
  runIds: z.array(z.string()),
  /** True when every run's agent code ran contained, false when any ran uncontained; absent when some run does not say (recorded before runs did). */
  contained: z.boolean().optional(),
  /** Runs where the sandbox saw the agent try to escape, and the processes they left running; absent when none tried. */
  escapes: z.object({ runs: z.number(), processesLeft: z.number() }).optional(),
});
export type Cell = z.infer<typeof cellSchema>;

/** A test with a planned run it did not record (it never ran, failed before its run began, or attached an unreadable run). */
export const missingTestSchema = runOriginSchema.pick({ id: true, title: true, project: true });
export type MissingTest = z.infer<typeof missingTestSchema>;

/** A test skipped because its task does not apply to its site (`not applicable: TASK on SITE: reason`): no run, in no cell. */
export const notApplicableTestSchema = missingTestSchema.extend({ reason: z.string() });
export type NotApplicableTest = z.infer<typeof notApplicableTestSchema>;

/** A cell outside a gate's limits. */
export const gateBreachSchema = z.object({
  /** The cell's label, `task · model · layers · site`. */
  cell: z.string(),
  /** What was broken, with the observed and allowed values: `false-success rate 1.00 > 0.00`. */
  rule: z.string(),
  observed: z.number(),
  limit: z.number(),
  /** The breached gate's position in the list given. */
  gate: z.number(),
});
export type GateBreach = z.infer<typeof gateBreachSchema>;

export const gateResultSchema = z.object({
  /** How many gates were given. */
  checked: z.number(),
  breaches: z.array(gateBreachSchema),
  /** Gates that matched no cell, as `gates[1] {"layers":"verified"}`. */
  unmatched: z.array(z.string()),
});
export type GateResult = z.infer<typeof gateResultSchema>;

/**
 * One layer's marginal effect: two cells of one task, model and site whose layer stacks differ by
 * that layer alone (with its options). Each rate is the difference with − without, with its 95%
 * Newcombe interval.
 */
export const layerEffectSchema = z.object({
  /** The layer's name, and the options it ran with (its defaults filled in). */
  layer: z.string(),
  options: z.record(z.string(), z.unknown()).optional(),
  task: z.string(),
  model: z.string(),
  site: z.string(),
  /** The stack's label without the layer, and with it. */
  without: z.string(),
  with: z.string(),
  runs: z.object({ without: z.number(), with: z.number() }),
  successRate: intervalSchema,
  falseSuccessRate: intervalSchema,
  falseFailureRate: intervalSchema,
});
export type LayerEffect = z.infer<typeof layerEffectSchema>;

/** A rate before and after, and the difference after − before with its 95% Newcombe interval when both are known. */
const rateChangeSchema = z.object({ before: intervalSchema.optional(), after: intervalSchema.optional(), difference: intervalSchema.optional() });

/** The rates a comparison reads. */
export const comparedRates = ['successRate', 'falseSuccessRate', 'falseFailureRate', 'sideEffectRate'] as const;

/** One cell's change between a baseline summary and a new one; a rate a summary lacks is absent there. */
export const cellChangeSchema = z.object({
  cell: z.string(),
  status: z.enum(['changed', 'added', 'removed']),
  runs: z.object({ before: z.number().optional(), after: z.number().optional() }),
  successRate: rateChangeSchema,
  falseSuccessRate: rateChangeSchema,
  falseFailureRate: rateChangeSchema,
  sideEffectRate: rateChangeSchema,
  /** The rates whose difference's 95% interval excludes 0: a change the trials can vouch for. */
  flagged: z.array(z.string()),
  /** Even all-or-nothing could not be told from chance with these trial counts. */
  tooFewTrials: z.boolean(),
});
export type CellChange = z.infer<typeof cellChangeSchema>;

export const comparisonSchema = z.object({
  /** Where the baseline came from (a file, or a history entry) and when it was generated. */
  baseline: z.object({ source: z.string(), generatedAt: z.string() }),
  cells: z.array(cellChangeSchema),
});
export type Comparison = z.infer<typeof comparisonSchema>;

/**
 * Why a summary does not stand for the whole suite, so it is never a baseline for it: the part of
 * the suite the run selected, and what it failed to record of that part.
 */
export const partialSchema = z.object({
  /** `shard 1/2`, `grep /upvote/`, `grep-invert /x/`, `project a, b`, `test filter a.spec.ts:12`, `last failed`, `only changed`, `test list x.txt`. */
  selection: z.array(z.string()),
  /** `interrupted`, `global timeout`, `2 of 14 planned runs not recorded`. */
  shortfall: z.array(z.string()),
});
export type PartialReasons = z.infer<typeof partialSchema>;

export const summarySchema = z.object({
  schemaVersion: z.literal(4),
  generatedAt: z.string(),
  /** False while the run goes on, when it was interrupted, or when any planned run is missing. */
  complete: z.boolean(),
  /**
   * Trials planned: for every test that did not end skipped, its distinct runs, and at least one
   * unless it passed without starting a run (a plain test).
   */
  planned: z.number(),
  /** Trials that recorded a run (complete or not). */
  recorded: z.number(),
  /** Absent for a whole run of the whole suite; see partialSchema. */
  partial: partialSchema.optional(),
  missing: z.array(missingTestSchema),
  /** Tests whose task does not apply to their site, with why; absent when there are none. */
  notApplicable: z.array(notApplicableTestSchema).optional(),
  totals: z.object({
    runs: z.number(),
    successes: z.number(),
    falseSuccesses: z.number(),
    falseSuccessAttempts: z.number(),
    falseFailures: z.number(),
    sideEffectRuns: z.number(),
    incomplete: z.number(),
    retried: z.number(),
  }),
  cells: z.array(cellSchema),
  /** The gates the cells were checked against, when any: the verdict the report opens with. */
  gates: gateResultSchema.optional(),
  /** What each layer buys: pairs of cells that differ by that layer alone. */
  ablation: z.array(layerEffectSchema).optional(),
  /** Each cell's change since a baseline summary, when the reporter was given one. */
  comparison: comparisonSchema.optional(),
});
export type Summary = z.infer<typeof summarySchema>;

/** Per-million-token prices in USD, by model id. */
export type PriceTable = Record<string, { input: number; output: number }>;

/** A gate: cells that match (every given key equal) must stay within the limits. */
export const gateSchema = cellNamesSchema
  .partial()
  .extend({
    maxFalseSuccessRate: z.number().min(0).max(1).default(0),
    maxFalseFailureRate: z.number().min(0).max(1).optional(),
    maxSideEffectRate: z.number().min(0).max(1).optional(),
    minSuccessRate: z.number().min(0).max(1).optional(),
  })
  .strict();
export type Gate = z.input<typeof gateSchema>;

/** Before version 4, retried attempts were forgotten: what they lied is unknown, never 0. */
const cellBeforeAttempts = cellSchema.extend({ falseSuccessAttempts: z.number().optional(), falseSuccessTrials: z.number().optional() });

/** A version 3 summary, read for baselines: no `partial`, and nothing known of retried attempts. */
export const summaryV3Schema = summarySchema.extend({
  schemaVersion: z.literal(3),
  totals: summarySchema.shape.totals.extend({ falseSuccessAttempts: z.number().optional() }),
  cells: z.array(cellBeforeAttempts),
});

/** Before version 3, cells had no agent: every cell was the built-in harness's. */
const cellBeforeAgents = { agent: z.string().default(BUILT_IN_AGENT) };

/** A version 2 summary, read for baselines: as version 3, its cells' agent the built-in harness. */
export const summaryV2Schema = summaryV3Schema.extend({ schemaVersion: z.literal(2), cells: z.array(cellBeforeAttempts.extend(cellBeforeAgents)) });

/**
 * A version 1 summary (before runs carried their condition, false failures, side effects and
 * incompleteness), read for baselines only. What it lacks is unknown, not 0.
 */
export const summaryV1Schema = z.object({
  schemaVersion: z.literal(1),
  generatedAt: z.string(),
  complete: z.boolean(),
  totals: z.object({ runs: z.number(), successes: z.number(), falseSuccesses: z.number() }),
  cells: z.array(
    cellSchema.pick({ task: true, model: true, layers: true, site: true, runs: true, successes: true, claimed: true, falseSuccesses: true, successRate: true, falseSuccessRate: true }).extend(cellBeforeAgents),
  ),
});
export type SummaryV1 = z.infer<typeof summaryV1Schema>;
