import { z } from 'zod';
import { BUILT_IN_AGENT, cellNamesSchema, conditionSchema, excludedSchema, runOriginSchema, type AttachedRunRecord } from '../core/run.ts';
export { escapesSchema, type Escapes } from '../core/agent.ts';
import { escapeAttemptSchema } from '../core/agent.ts';

export { stateChangeSchema, type StateChange } from '../core/state.ts';
export {
  cellNamesSchema,
  conditionSchema,
  plannedRunSchema,
  runRecordSchema,
  runOriginSchema,
  verdictSchema,
  type CellNames,
  type Condition,
  type PlannedRun,
  type AttachedRunRecord,
  type AttachedRunRecordInput,
  type RunOrigin,
} from '../core/run.ts';

/**
 * A run as the reports show it: its record, and what its agent wrote to stderr (the
 * `agent-stderr.txt` attachment beside the record, redacted when it was attached, cut by the
 * reporter). Not a field of the record: the reporter reads it from the test, not from the run.
 */
export type RunWithStderr = AttachedRunRecord & { agentStderr?: string };

export const intervalSchema = z.object({ value: z.number(), low: z.number(), high: z.number() });
export type Interval = z.infer<typeof intervalSchema>;

export const cellSchema = cellNamesSchema.extend({
  /** The model's name; null when the cell's agent called none (no run's trace recorded a model call): the reports show `-`. */
  model: z.string().nullable(),
  /** The condition every run of the cell ran under. */
  condition: conditionSchema.optional(),
  /** One per planned trial: a retried test counts once, with its last attempt's run. Runs that say nothing of the agent (`errors`, `interrupted`) are not among them: every rate is over these. */
  runs: z.number(),
  /** Runs that ended in an error before or outside the agent's work (see `excluded` in the run record): in no rate; absent when none. */
  errors: z.number().optional(),
  /** Runs the user or the runner stopped: in no rate; absent when none. */
  interrupted: z.number().optional(),
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
  /** Runs whose claimed success `verify` passed on with postconditions it could not check (an answer): the claim is unverified. Absent when none. */
  unverifiedClaims: z.number().optional(),
  successRate: intervalSchema,
  /** Over all runs, not over claims: the chance that a run of this cell misleads you. */
  falseSuccessRate: intervalSchema,
  falseFailureRate: intervalSchema,
  sideEffectRate: intervalSchema,
  iterations: z.object({ mean: z.number(), median: z.number(), p95: z.number(), max: z.number() }),
  /** Sums over the runs whose counts are known; `unknownRuns` had none that could be trusted; `cachedInput`: of the input, served from the provider's cache (absent when no run said). */
  tokens: z.object({ input: z.number(), output: z.number(), cachedInput: z.number().optional(), unknownRuns: z.number() }),
  /** Sums over the runs that recorded them: tokens of screenshots sent and of text tools' outputs. */
  observationTokens: z.object({ screenshots: z.number(), text: z.number(), runs: z.number() }).optional(),
  /** USD over the cell's runs, from the price table (or the runs' own costs); absent when the model has no price. */
  cost: z.number().optional(),
  wallMs: z.object({ median: z.number() }),
  stopReasons: z.record(z.string(), z.number()),
  /** pass^k for k = 1 … runs: the chance that k trials all succeed, C(c,k)/C(n,k). */
  passHatK: z.record(z.string(), z.number()),
  /** Test ids of the cell's runs, those left out of every rate too, for the HTML report's links. */
  runIds: z.array(z.string()),
  /** True when every run's agent code ran contained, false when any ran uncontained; absent when some run does not say (recorded before runs did). */
  contained: z.boolean().optional(),
  /** Every run's agent was harness-eval's own code (the built-in harness, a control: `OWN_CODE`), where no code of the agent under test runs: `contained` then says nothing of a sandbox, and the reports mark none. Absent otherwise. */
  ownCode: z.literal(true).optional(),
  /** Runs where the sandbox saw the agent try to escape, the processes they left running, and each other attempt with how many runs made it; absent when none tried. */
  escapes: z
    .object({
      runs: z.number(),
      processesLeft: z.number(),
      attempts: z.array(z.object({ kind: escapeAttemptSchema.shape.kind, detail: z.string(), runs: z.number() })).optional(),
    })
    .optional(),
});
export type Cell = z.infer<typeof cellSchema>;

/** A test with a planned run it did not record (it never ran, failed before its run began, or attached an unreadable run). */
export const missingTestSchema = runOriginSchema.pick({ id: true, title: true, project: true });
export type MissingTest = z.infer<typeof missingTestSchema>;

/** A test skipped because its task does not apply to its site (`not applicable: TASK on SITE: reason`): no run, in no cell. */
export const notApplicableTestSchema = missingTestSchema.extend({ reason: z.string() });
export type NotApplicableTest = z.infer<typeof notApplicableTestSchema>;

/** A test whose run was never started, and why (`budget spent: …`): not a failure, in no cell and no rate. */
export const notRunTestSchema = notApplicableTestSchema;
export type NotRunTest = z.infer<typeof notRunTestSchema>;

/** A run left out of every rate, listed: its test, the run's number in it, its cell's label, and why. */
export const excludedRunSchema = missingTestSchema.extend({ run: z.number(), cell: z.string() }).extend(excludedSchema.shape);
export type ExcludedRun = z.infer<typeof excludedRunSchema>;

/**
 * How many errors a run may have and still pass, as Inspect's `fail_on_error`: a count (a whole
 * number, 1 or more), or below 1 a share of the runs that ended (errors included, interruptions
 * not); 0, the default, allows none.
 */
export const maxErrorsSchema = z
  .number()
  .min(0)
  .refine((value) => value < 1 || Number.isInteger(value), 'a count of errors is a whole number; a share is below 1');

/** A test that Playwright failed, with the first line of why: its own `expect`, outside every gate. */
export const failedTestSchema = missingTestSchema.extend({ status: z.enum(['failed', 'timedOut', 'flaky']), error: z.string() });
export type FailedTest = z.infer<typeof failedTestSchema>;

/** What Playwright itself failed, which the gates never see: tests, and errors outside any test (a globalSetup that threw). */
export const playwrightFailuresSchema = z.object({ tests: z.array(failedTestSchema), errors: z.array(z.string()) });
export type PlaywrightFailures = z.infer<typeof playwrightFailuresSchema>;

/** One configuration (agent · model · layers) of a task set: its cost per run against its success rate. */
export const costPointSchema = z.object({
  agent: z.string(),
  /** Null when the configuration's agent called no model, as a cell's. */
  model: z.string().nullable(),
  layers: z.string(),
  runs: z.number(),
  /** USD per run, over the task set's runs. */
  costPerRun: z.number(),
  /** Some run's tokens were unknown: the cost is a lower bound. */
  lowerBound: z.boolean(),
  successRate: intervalSchema,
  /** On the Pareto front: it cost something, and no other configuration of the set costs no more and succeeds no less. One that cost nothing (a double) is never on it. */
  front: z.boolean(),
});

/** The configurations that ran one set of tasks on one site, cost against success (see report/cost.ts). */
export const costSuccessSchema = z.object({ site: z.string(), tasks: z.array(z.string()), points: z.array(costPointSchema) });
export type CostSuccess = z.infer<typeof costSuccessSchema>;

/**
 * The configuration to ship for one task on one site: among its cells with no false success (on
 * any attempt), the highest lower bound of the success rate's 95% Wilson interval; ties by the
 * observed rate, then by the lower cost per run. `best` is absent when every cell had a false success.
 */
export const choiceSchema = z.object({
  task: z.string(),
  site: z.string(),
  /** The best cell's label, `task · agent · model · layers · site`, and its configuration, `agent · model · layers`. */
  best: z.object({ cell: z.string(), configuration: z.string(), runs: z.number(), successes: z.number(), successRate: intervalSchema }).optional(),
  /**
   * Cells with no false success whose success rate the trials cannot tell from the best's (the
   * Newcombe interval of the difference includes 0); `trialsToTell`, the trials per cell that would
   * tell the two apart 4 times in 5 were the rates seen the true ones (trialsToDetect, as `harness-eval
   * plan`), absent when no count up to 1,000 would (the same rate seen, or rates too close).
   */
  tiedWith: z.array(z.object({ cell: z.string(), configuration: z.string(), runs: z.number(), successes: z.number(), successRate: intervalSchema, trialsToTell: z.number().optional() })),
  /** The task's cells on the site with a rate (some run counted), and those of them left out of the choice for a false success. */
  cells: z.number(),
  disqualified: z.number(),
});
export type Choice = z.infer<typeof choiceSchema>;

/** A cell with a false success on any attempt: `gated` when some gate judges its false-success rate. */
export const lyingCellSchema = z.object({ cell: z.string(), trials: z.number(), runs: z.number(), gated: z.boolean() });
export type LyingCell = z.infer<typeof lyingCellSchema>;

export const recommendationSchema = z.object({ choices: z.array(choiceSchema), falseSuccesses: z.array(lyingCellSchema) });
export type Recommendation = z.infer<typeof recommendationSchema>;

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

/**
 * Whether the data decide one gate's limit for one cell: `pass` when the rate's 95% Wilson interval
 * lies wholly on the allowed side of the limit, `breach` when wholly beyond it, `undecided` when it
 * spans the limit (the observed rate's side is chance at these trials).
 */
export const gateDecisionSchema = z.object({
  gate: z.number(),
  /** The cell's label. */
  cell: z.string(),
  /** `false-success rate ≤ 0%`, `success rate ≥ 90%`. */
  rule: z.string(),
  runs: z.number(),
  rate: intervalSchema,
  decided: z.enum(['pass', 'breach', 'undecided']),
  /** The bound the interval must cross: the limit, or 5% for a limit of 0 (no interval ever lies under 0). */
  target: z.number(),
  /** Trials per cell at which the interval, at the observed rate, would lie wholly on one side of `target`; absent when none would (the rate is at it). */
  trialsToDecide: z.number().optional(),
});
export type GateDecision = z.infer<typeof gateDecisionSchema>;

export const gateResultSchema = z.object({
  /** How many gates were given. */
  checked: z.number(),
  breaches: z.array(gateBreachSchema),
  /** Gates that matched no cell, as `gates[1] {"layers":"verified"}`. */
  unmatched: z.array(z.string()),
  /** Each limit of each gate, for each cell it matches: whether the data decide it. */
  decisions: z.array(gateDecisionSchema).optional(),
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
  /** The stacks differ by several layers (`layer` names them all, `a + b`): their effect together, in the order added, not each one's. */
  estimate: z.literal(true).optional(),
  /**
   * For each rate whose difference the trials do not decide (its interval includes 0), the trials
   * per cell that would tell the two cells apart 4 times in 5 were the rates seen the true ones
   * (trialsToDetect); a rate the trials decide, or that no count up to 1,000 would, is absent.
   */
  trialsToTell: z.object({ successRate: z.number().optional(), falseSuccessRate: z.number().optional(), falseFailureRate: z.number().optional() }).optional(),
});
export type LayerEffect = z.infer<typeof layerEffectSchema>;

/** A rate before and after, and the difference after − before with its 95% Newcombe interval when both are known. */
/** A rate before and after, and their difference; `trialsToTell`, for a change the trials leave undecided, the trials per cell that would decide it 4 times in 5 at the rates seen (trialsToDetect; a whole run's comparison only). */
const rateChangeSchema = z.object({ before: intervalSchema.optional(), after: intervalSchema.optional(), difference: intervalSchema.optional(), trialsToTell: z.number().optional() });

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
  /** False while the run goes on, when it was interrupted, when any planned run is missing, or for one shard of several (the merge is whole). */
  complete: z.boolean(),
  /**
   * Trials planned: for every test that did not end skipped, its distinct runs, and at least one
   * unless it passed without starting a run (a plain test).
   */
  planned: z.number(),
  /** Trials that recorded a run (complete or not). */
  recorded: z.number(),
  /**
   * Runs that say nothing of the agent, first of all: each listed, `maxErrors` as given and whether
   * the errors exceed it (then the run is not green). Absent when every run counts.
   */
  excluded: z.object({ maxErrors: maxErrorsSchema, tooManyErrors: z.boolean(), runs: z.array(excludedRunSchema) }).optional(),
  /** What Playwright failed outside the gates (a test's own `expect`, an error outside any test): the verdict is never green beside it. Absent when none. */
  playwrightFailures: playwrightFailuresSchema.optional(),
  /** Absent for a whole run of the whole suite; see partialSchema. */
  partial: partialSchema.optional(),
  /** The runs kept in flight at once (the config's `workers`) and why (`matrixWorkers()`'s reason); absent for a merge of shards. */
  workers: z.object({ count: z.number().int().positive(), why: z.string().optional() }).optional(),
  missing: z.array(missingTestSchema),
  /** Tests whose task does not apply to their site, with why; absent when there are none. */
  notApplicable: z.array(notApplicableTestSchema).optional(),
  /** Tests whose run was never started (the `maxCost` budget was spent), with why; absent when there are none. */
  notRun: z.array(notRunTestSchema).optional(),
  totals: z.object({
    runs: z.number(),
    successes: z.number(),
    falseSuccesses: z.number(),
    falseSuccessAttempts: z.number(),
    falseFailures: z.number(),
    sideEffectRuns: z.number(),
    incomplete: z.number(),
    retried: z.number(),
    /** Runs out of every rate (see the cell's), absent when none. */
    errors: z.number().optional(),
    interrupted: z.number().optional(),
    /** USD over the cells that have a cost; absent when none has. */
    cost: z.number().optional(),
  }),
  cells: z.array(cellSchema),
  /** Cost against success per task set, with each set's Pareto front; absent when no cell has a cost. */
  costSuccess: z.array(costSuccessSchema).optional(),
  /** The gates the cells were checked against, when any: the verdict the report opens with. */
  gates: gateResultSchema.optional(),
  /** Which configuration to ship, per task and site, and every false success, gated or not (see report/recommend.ts). */
  recommendation: recommendationSchema.optional(),
  /** What each layer buys: pairs of cells that differ by that layer alone. */
  ablation: z.array(layerEffectSchema).optional(),
  /** Each cell's change since a baseline summary, when the reporter was given one. */
  comparison: comparisonSchema.optional(),
});
export type Summary = z.infer<typeof summarySchema>;

/** A model's prices in USD per million tokens: input, input served from the provider's cache (default: the input price), output. */
export const priceSchema = z.object({ input: z.number().min(0), cachedInput: z.number().min(0).optional(), output: z.number().min(0) }).strict();
export type Price = z.infer<typeof priceSchema>;

/** Prices by model id (`openai:gpt-4o-mini`). */
export const priceTableSchema = z.record(z.string(), priceSchema);
export type PriceTable = z.infer<typeof priceTableSchema>;

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
