import { createHash } from 'node:crypto';
import { OWN_CODE, type EscapeAttempt } from '../core/agent.ts';
import { stopReasons } from '../core/trace.ts';
import { parseInput } from '../input.ts';
import { canonicalJson, compareStrings } from '../text.ts';
import { counted, formatCount, formatPercent } from './format.ts';
import { describe, passHatKTable, sideOf, trialsToDecide, wilson } from './statistics.ts';
import { recommend } from './recommend.ts';
import { layerEffects } from './ablation.ts';
import { compareCells, modelName } from './cells.ts';
import { costSuccess, priceOf, pricedModel, tokensCost } from './cost.ts';

export { compareCells, modelName, NO_MODEL } from './cells.ts';
import { gateSchema, type Cell, type ExcludedRun, type Gate, type GateBreach, type GateDecision, type Interval, type MissingTest, type NotApplicableTest, type NotRunTest, type PlaywrightFailures, type PriceTable, type Summary } from './types.ts';
import type { CellNames, Condition, AttachedRunRecord } from '../core/run.ts';

/** What names a cell: one task, agent, model, layer stack and site; no model (null) when its agent called none. */
export type CellKeys = Omit<CellNames, 'model'> & { model: string | null };

export interface SummarizeOptions {
  /** Per-million-token prices; they price every run of a listed model. A cell of a model not listed costs what its runs recorded (see `cost` in the run record), or has no cost. */
  prices?: PriceTable;
  /** False while the run is still going (progress) or was interrupted; false too when anything is missing. */
  complete: boolean;
  /** Trials planned (see trials.ts); by default one per run given. */
  planned?: number;
  /** Tests with a planned run they did not record. */
  missing?: readonly MissingTest[];
  /** Tests skipped because their task does not apply to their site. */
  notApplicable?: readonly NotApplicableTest[];
  /** Tests whose run was never started, with why (the `maxCost` budget was spent); each is one planned run not recorded. */
  notRun?: readonly NotRunTest[];
  /** The time stamped into `generatedAt`; fixed in tests. */
  now?: Date;
  /** Gates to check the cells against; their result goes into the summary. */
  gates?: readonly Gate[];
  /** One shard of several: never complete, and a gate's cells may be in other shards, so none is reported as matching nothing. */
  sharded?: boolean;
  /** The part of the suite the run selected (see selectionOf); none for the whole suite. */
  selection?: readonly string[];
  /** Why the run stopped before its end: `interrupted`, `global timeout`. */
  stopped?: string;
  /** Errors the run may have and still pass (see maxErrorsSchema); 0 by default. */
  maxErrors?: number;
  /** What Playwright failed outside the gates: tests, and errors outside any test. */
  playwrightFailures?: PlaywrightFailures;
  /** The runs kept in flight at once, and why. */
  workers?: Summary['workers'];
}

/**
 * Groups judged runs into cells by what ran (task and condition, not names) and computes each
 * cell's rates, intervals, distributions and costs. One pass groups the runs; each cell's numbers
 * are then linear in its runs, so 10,000 runs take milliseconds. The result does not depend on the
 * runs' order (merged shards arrive in any).
 */
export function summarize(runs: readonly AttachedRunRecord[], { prices, complete, planned = runs.length, missing = [], notApplicable = [], notRun = [], now = new Date(), gates, sharded = false, selection = [], stopped, maxErrors = 0, playwrightFailures, workers }: SummarizeOptions): Summary {
  const groups = [...groupByCell(runs).values()];
  const labels = labelConditions(groups);
  const cells = groups.map((cellRuns, index) => summarizeCell(cellRuns, labels[index]!, prices)).sort(compareCells);
  // Cells whose every run was left out have no rate: they are listed, and judged by nothing.
  const measured = cells.filter((cell) => cell.runs > 0);
  const totals = { runs: 0, successes: 0, falseSuccesses: 0, falseSuccessAttempts: 0, falseFailures: 0, sideEffectRuns: 0, incomplete: 0, retried: 0 };
  for (const cell of cells) for (const key of Object.keys(totals) as Array<keyof typeof totals>) totals[key] += cell[key];
  const excludedRuns = listExcluded(groups, labels);
  const errors = excludedRuns.filter((run) => run.reason === 'error').length;
  const interrupted = excludedRuns.length - errors;
  const priced = cells.filter((cell) => cell.cost !== undefined);
  // One shard is a part of the matrix however much of its own part it recorded: only the merge is whole. An interrupted run measured nothing: the matrix lacks it.
  const wholeMatrix = complete && !sharded && missing.length === 0 && notRun.length === 0 && runs.length >= planned && interrupted === 0;
  const notStarted = [...new Set(notRun.map((test) => test.reason.split(':')[0]!))].map((why) => `${counted(notRun.filter((test) => test.reason.startsWith(why)).length, 'run')} not started: ${why}`);
  const shortfall = [
    ...(stopped ? [stopped] : []),
    ...(runs.length < planned ? [`${formatCount(planned - runs.length)} of ${counted(planned, 'planned run')} not recorded`] : []),
    ...notStarted,
    ...(interrupted > 0 ? [`${counted(interrupted, 'run')} interrupted`] : []),
  ];
  return {
    schemaVersion: 4,
    generatedAt: now.toISOString(),
    complete: wholeMatrix,
    planned,
    recorded: runs.length,
    ...(excludedRuns.length > 0 && { excluded: { maxErrors, tooManyErrors: errors > errorsAllowed(maxErrors, totals.runs + errors), runs: excludedRuns } }),
    ...(playwrightFailures && (playwrightFailures.tests.length > 0 || playwrightFailures.errors.length > 0) && { playwrightFailures }),
    ...((selection.length > 0 || shortfall.length > 0) && { partial: { selection: [...selection], shortfall } }),
    ...(workers && { workers }),
    missing: [...missing],
    ...(notApplicable.length > 0 && { notApplicable: [...notApplicable] }),
    ...(notRun.length > 0 && { notRun: [...notRun] }),
    totals: { ...totals, ...(errors > 0 && { errors }), ...(interrupted > 0 && { interrupted }), ...(priced.length > 0 && { cost: priced.reduce((sum, cell) => sum + cell.cost!, 0) }) },
    cells,
    ...(priced.length > 0 && { costSuccess: costSuccess(measured) }),
    ...(gates && { gates: { checked: gates.length, breaches: checkGates({ cells }, gates), unmatched: sharded ? [] : unmatchedGates({ cells }, gates), decisions: decideGates({ cells }, gates) } }),
    // The trials that would tell each undecided pair apart: for a whole matrix only, as the gates' decisions (a progress write, every second, stays cheap).
    ...(measured.length > 0 && { recommendation: recommend(cells, cellLabel, (cell) => parseGates(gates ?? []).some((gate) => gateMatches(gate, cell)), wholeMatrix) }),
    ablation: layerEffects(measured, wholeMatrix),
  };
}

/**
 * How many errors `maxErrors` allows among the runs that ended (errors included): the count as
 * given, or its share of them. Errors are whole, so the share is rounded down.
 */
export function errorsAllowed(maxErrors: number, ended: number): number {
  return maxErrors >= 1 ? maxErrors : Math.floor(maxErrors * ended + 1e-9);
}

/** The runs left out of every rate, each with its cell's label, in the cells' and then the tests' order. */
function listExcluded(groups: readonly AttachedRunRecord[][], labels: readonly CellKeys[]): ExcludedRun[] {
  const listed = groups.flatMap((group, index) =>
    group.flatMap(({ test, excluded }) => (excluded ? [{ id: test.id, title: test.title, project: test.project, run: test.run, cell: cellLabel(labels[index]!), ...excluded }] : [])),
  );
  return listed.sort((a, b) => compareStrings(a.cell, b.cell) || compareStrings(a.id, b.id) || a.run - b.run);
}

/** Each run's cell's names, as a summary of these runs names its cells, in the runs' order. */
export function cellNamesOf(runs: readonly AttachedRunRecord[]): CellKeys[] {
  const groups = [...groupByCell(runs).values()];
  const labels = labelConditions(groups);
  const byRun = new Map(groups.flatMap((group, index) => group.map((run) => [run, labels[index]!] as const)));
  return runs.map((run) => byRun.get(run)!);
}

/** A string that is equal exactly when two cells' labels are; NUL cannot occur in the names. */
export function cellKey({ task, agent, model, layers, site }: CellKeys): string {
  return `${task}\u0000${agent}\u0000${modelName({ model })}\u0000${layers}\u0000${site}`;
}

/** How a cell is named to a person: its names joined, `<task> · <agent> · <model> · <layers> · <site>`. */
export function cellLabel({ task, agent, model, layers, site }: CellKeys): string {
  return `${task} · ${agent} · ${modelName({ model })} · ${layers} · ${site}`;
}

/** What ran, as one string: the task and the condition as canonical JSON. Cells and their runs share it. */
export function conditionKey({ task, condition }: { task: string; condition?: Condition }): string {
  return `${task}\u0000${canonicalJson(condition ?? null)}`;
}

/** The runs of each cell (same task and condition), in input order, keyed by `conditionKey`. */
export function groupByCell<Run extends AttachedRunRecord>(runs: readonly Run[]): Map<string, Run[]> {
  const groups = new Map<string, Run[]>();
  for (const run of runs) {
    const key = conditionKey(run);
    const group = groups.get(key);
    if (group) group.push(run);
    else groups.set(key, [run]);
  }
  return groups;
}

const conditionParts = ['task', 'agent', 'model', 'layers', 'site'] as const;

/**
 * Each group's labels, from its runs' names. A site run under several settings is named by the
 * settings that differ (`siteLabels`). Where conditions that differ still share all their names,
 * every name whose part of the condition differs gets `#` and a short stable hash of that part
 * (an agent's `my-agent#3fa2c1`), so two cells never read alike. A cell whose runs called no model
 * has none (`calledNoModel`), unless the model it was given is all that tells it from another. The
 * names are taken from each group's smallest labels, so the result does not depend on the runs' order.
 */
function labelConditions(groups: readonly AttachedRunRecord[][]): CellKeys[] {
  const firsts = groups.map((group) => group.reduce((least, run) => (compareCells(run, least) < 0 ? run : least)));
  const sites = siteLabels(firsts);
  const labels: CellKeys[] = firsts.map(({ task, agent, model, layers, site, condition }) => ({ task, agent: agentLabel(agent, condition.agent), model, layers, site: sites.get(siteKey(site, condition.site)) ?? site }));
  const byLabel = new Map<string, number[]>();
  labels.forEach((label, index) => byLabel.set(cellKey(label), [...(byLabel.get(cellKey(label)) ?? []), index]));
  for (const indices of byLabel.values()) {
    if (indices.length < 2) continue;
    for (const part of conditionParts) {
      const values = indices.map((index) => canonicalJson(firsts[index]!.condition[part] ?? null));
      if (new Set(values).size < 2) continue;
      indices.forEach((index, i) => (labels[index]![part] = `${labels[index]![part]}#${shortHash(values[i]!)}`));
    }
  }
  const modelless = labels.map((label, index) => (calledNoModel(groups[index]!) ? { ...label, model: null } : label));
  const counts = new Map<string, number>();
  for (const label of modelless) counts.set(cellKey(label), (counts.get(cellKey(label)) ?? 0) + 1);
  return modelless.map((label, index) => (counts.get(cellKey(label))! > 1 ? labels[index]! : label));
}

/** An agent's name, with the installed packages it ran where its condition names them (a CLI's own version: `claude (@anthropic-ai/claude-code@2.1.332)`). */
export function agentLabel(agent: string, condition: unknown): string {
  const packages = typeof condition === 'object' && condition !== null ? (condition as { packages?: unknown }).packages : undefined;
  return Array.isArray(packages) && packages.length > 0 ? `${agent} (${packages.join(', ')})` : agent;
}

/** Whether a cell's agent called no model: some run's trace was read, and none recorded a model call (the controls, a command agent that never called the gateway). */
function calledNoModel(runs: readonly AttachedRunRecord[]): boolean {
  return runs.some((run) => run.modelCalls !== undefined) && runs.every((run) => !run.modelCalls);
}

const siteKey = (name: string, settings: unknown) => `${name}\u0000${canonicalJson(settings ?? null)}`;

/** A setting's words beyond this many characters are no name: the hash names it instead. */
const SETTING_CHARS = 60;

/**
 * Labels for a site name that ran under several settings (its condition's fields), keyed by
 * `siteKey`: the name, and the fields that differ among those settings, a flag set as its name, one
 * unset as nothing, any other value after its field (`tinydesk (startLoggedIn)`, `tinydesk`,
 * `shop (seed: 2)`): the same label in every cell. Where that would not tell the settings apart,
 * or reads too long, none is given.
 */
function siteLabels(firsts: readonly AttachedRunRecord[]): Map<string, string> {
  const byName = new Map<string, Map<string, Record<string, unknown>>>();
  for (const { site, condition } of firsts) {
    if (typeof condition.site !== 'object' || condition.site === null || Array.isArray(condition.site)) continue;
    const settings = byName.get(site) ?? new Map<string, Record<string, unknown>>();
    byName.set(site, settings.set(siteKey(site, condition.site), condition.site as Record<string, unknown>));
  }
  const labels = new Map<string, string>();
  for (const [name, settings] of byName) {
    if (settings.size < 2) continue;
    const all = [...settings.values()];
    const differing = [...new Set(all.flatMap((one) => Object.keys(one)))].sort(compareStrings).filter((field) => new Set(all.map((one) => canonicalJson(one[field] ?? null))).size > 1);
    const named = [...settings].map(([key, one]) => [key, settingWords(one, differing)] as const);
    const words = named.map(([, each]) => each);
    if (new Set(words).size < words.length || words.some((each) => each.length > SETTING_CHARS)) continue;
    for (const [key, each] of named) labels.set(key, each === '' ? name : `${name} (${each})`);
  }
  return labels;
}

/** The fields of a setting, as a site's label says them: `startLoggedIn`, `seed: 2`; nothing for one unset. */
function settingWords(setting: Record<string, unknown>, fields: readonly string[]): string {
  return fields
    .flatMap((field) => {
      const value = setting[field];
      if (value === true) return [field];
      if (value === false || value === null || value === undefined) return [];
      return [`${field}: ${typeof value === 'string' ? value : canonicalJson(value)}`];
    })
    .join(', ');
}

function shortHash(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 6);
}

/**
 * A cell's numbers. Its rates, distributions, tokens and cost are over the runs that say something
 * of the agent; the runs left out (`excluded`) are only counted. Containment and escape attempts
 * are over every run: an attempt to escape is never hidden because its run then errored.
 */
function summarizeCell(all: readonly AttachedRunRecord[], { task, agent, model, layers, site }: CellKeys, prices: PriceTable | undefined): Cell {
  const runs = all.filter((run) => !run.excluded);
  const errors = all.filter((run) => run.excluded?.reason === 'error').length;
  const interrupted = all.filter((run) => run.excluded?.reason === 'interrupted').length;
  let successes = 0;
  let claimed = 0;
  let falseSuccesses = 0;
  let falseSuccessAttempts = 0;
  let falseSuccessTrials = 0;
  let falseFailures = 0;
  let sideEffectRuns = 0;
  let incomplete = 0;
  let retried = 0;
  let unsupportedClaims = 0;
  let unverifiedClaims = 0;
  const containment = { contained: 0, uncontained: 0, ownCode: 0 };
  const escapes = { runs: 0, processesLeft: 0 };
  const attempts = new Map<string, { kind: EscapeAttempt['kind']; detail: string; runs: number }>();
  const tokens: Cell['tokens'] = { input: 0, output: 0, unknownRuns: 0 };
  // The reporter's prices price every run; without them, a run's own cost (priced in the worker) stands.
  const price = priceOf(prices, pricedModel(all[0]!));
  let cost: number | undefined;
  const observed = { screenshots: 0, text: 0, runs: 0 };
  const reasonCounts = new Map<string, number>();
  for (const run of runs) {
    if (run.actual) successes++;
    if (run.claimed) claimed++;
    if (run.falseSuccess) falseSuccesses++;
    falseSuccessAttempts += run.earlierFalseSuccesses ?? 0;
    if (run.falseSuccess || run.earlierFalseSuccesses) falseSuccessTrials++;
    if (run.falseFailure) falseFailures++;
    if (run.sideEffects.length > 0) sideEffectRuns++;
    if (run.incomplete) incomplete++;
    if (run.test.retry > 0) retried++;
    if (run.unsupportedClaim) unsupportedClaims++;
    if (run.claimed && run.unverified) unverifiedClaims++;
    if (run.tokens.input === null || run.tokens.output === null) tokens.unknownRuns++;
    tokens.input += run.tokens.input ?? 0;
    tokens.output += run.tokens.output ?? 0;
    if (run.tokens.cachedInput !== undefined) tokens.cachedInput = (tokens.cachedInput ?? 0) + run.tokens.cachedInput;
    const runCost = price ? tokensCost(run.tokens, price) : run.cost;
    if (runCost !== undefined) cost = (cost ?? 0) + runCost;
    if (run.observationTokens) {
      observed.screenshots += run.observationTokens.screenshots;
      observed.text += run.observationTokens.text;
      observed.runs++;
    }
    reasonCounts.set(run.stopReason, (reasonCounts.get(run.stopReason) ?? 0) + 1);
  }
  for (const run of all) {
    if (run.contained !== undefined) containment[run.contained ? 'contained' : 'uncontained']++;
    if (run.containment === OWN_CODE.reason) containment.ownCode++;
    if (run.escapes && (run.escapes.processesLeft > 0 || (run.escapes.attempts ?? []).length > 0)) {
      escapes.runs++;
      escapes.processesLeft += run.escapes.processesLeft;
      for (const { kind, detail } of run.escapes.attempts ?? []) {
        const seen = attempts.get(`${kind}\0${detail}`) ?? { kind, detail, runs: 0 };
        attempts.set(`${kind}\0${detail}`, { ...seen, runs: seen.runs + 1 });
      }
    }
  }
  const n = runs.length;
  return {
    task,
    agent,
    model,
    layers,
    site,
    condition: JSON.parse(canonicalJson(all[0]!.condition)) as Condition,
    runs: n,
    ...(errors > 0 && { errors }),
    ...(interrupted > 0 && { interrupted }),
    successes,
    claimed,
    falseSuccesses,
    falseSuccessAttempts,
    falseSuccessTrials,
    falseFailures,
    sideEffectRuns,
    incomplete,
    retried,
    unsupportedClaims,
    ...(unverifiedClaims > 0 && { unverifiedClaims }),
    successRate: wilson(successes, n),
    // Over all runs, not over claims: the chance that a run of this cell misleads you.
    falseSuccessRate: wilson(falseSuccesses, n),
    falseFailureRate: wilson(falseFailures, n),
    sideEffectRate: wilson(sideEffectRuns, n),
    iterations: describe(runs.map((run) => run.iterations)),
    tokens,
    ...(observed.runs > 0 && { observationTokens: observed }),
    ...(cost !== undefined && { cost }),
    wallMs: { median: describe(runs.map((run) => run.wallMs)).median },
    stopReasons: inCanonicalOrder(reasonCounts),
    passHatK: passHatKTable(successes, n),
    runIds: all.map((run) => run.test.id).sort(compareStrings),
    // Contained only when every run was; unknown (absent) when some run, recorded before runs said, does not say.
    ...(containment.uncontained > 0 ? { contained: false } : containment.contained === all.length && { contained: true }),
    ...(containment.ownCode === all.length && { ownCode: true }),
    ...(escapes.runs > 0 && { escapes: { ...escapes, ...(attempts.size > 0 && { attempts: [...attempts.values()] }) } }),
  };
}

/** Stop-reason counts keyed in the trace's own order, so the JSON does not depend on run order. */
function inCanonicalOrder(counts: ReadonlyMap<string, number>): Record<string, number> {
  const ordered: Record<string, number> = {};
  for (const reason of stopReasons) {
    const count = counts.get(reason);
    if (count) ordered[reason] = count;
  }
  return ordered;
}

/**
 * Checks every cell against the gates that match it (every key the gate gives names the cell's:
 * see namesFor). Limits compare the
 * observed rate, not an interval bound: a gate states what was seen must hold. The false-success
 * limit counts a trial that lied on any attempt, so a passing retry never hides a lie. The gates
 * are validated first, so a bad option fails in one line before anything is judged. Rates are
 * over the runs that say something of the agent: an error or an interruption never breaches.
 */
export function checkGates(summary: Pick<Summary, 'cells'>, gates: readonly Gate[]): GateBreach[] {
  const breaches: GateBreach[] = [];
  parseGates(gates).forEach((gate, index) => {
    for (const cell of summary.cells) {
      // A cell whose every run was left out has no rate to hold to a limit.
      if (!gateMatches(gate, cell) || cell.runs === 0) continue;
      const limits: Array<[string, number, '>' | '<', number | undefined]> = [
        falseSuccessLimit(cell, gate.maxFalseSuccessRate),
        ['false-failure rate', cell.falseFailureRate.value, '>', gate.maxFalseFailureRate],
        ['side-effect rate', cell.sideEffectRate.value, '>', gate.maxSideEffectRate],
        ['success rate', cell.successRate.value, '<', gate.minSuccessRate],
      ];
      for (const [what, observed, comparison, limit] of limits) {
        if (limit !== undefined && (comparison === '>' ? observed > limit : observed < limit)) breaches.push(breach(cell, index, what, observed, comparison, limit));
      }
    }
  });
  return breaches;
}

/** A limit of a gate as the decisions read it: the rate's name, the cell's count of events, and whether the rate must stay at most (`max`) or at least (`min`) the limit. */
const decidedLimits: Array<[string, (cell: Cell) => number, 'max' | 'min', (gate: ReturnType<typeof parseGates>[number]) => number | undefined]> = [
  ['false-success rate', (cell) => cell.falseSuccessTrials, 'max', (gate) => gate.maxFalseSuccessRate],
  ['false-failure rate', (cell) => cell.falseFailures, 'max', (gate) => gate.maxFalseFailureRate],
  ['side-effect rate', (cell) => cell.sideEffectRuns, 'max', (gate) => gate.maxSideEffectRate],
  ['success rate', (cell) => cell.successes, 'min', (gate) => gate.minSuccessRate],
];

/** Below this a limit of 0 counts as met by an interval: no interval ever lies under 0. */
export const ZERO_LIMIT_TARGET = 0.05;

/**
 * For each limit of each gate and each cell it matches, whether the data decide it: the rate's 95%
 * Wilson interval wholly on the allowed side (`pass`), wholly beyond (`breach`), or across the
 * limit (`undecided`); and the trials per cell that would decide it at the observed rate. A limit
 * of 0 is judged against 5% for a pass: zero events never bring an interval under 0.
 */
export function decideGates(summary: Pick<Summary, 'cells'>, gates: readonly Gate[]): GateDecision[] {
  return parseGates(gates).flatMap((gate, index) =>
    summary.cells.flatMap((cell) => {
      if (!gateMatches(gate, cell) || cell.runs === 0) return [];
      return decidedLimits.flatMap(([what, events, bound, limitOf]) => {
        const limit = limitOf(gate);
        if (limit === undefined) return [];
        const rate: Interval = wilson(events(cell), cell.runs);
        const target = bound === 'max' && limit === 0 ? ZERO_LIMIT_TARGET : limit;
        const side = bound === 'max' && limit === 0 ? (rate.low > 0 ? 'above' : sideOf(rate, target)) : sideOf(rate, target);
        const decided = side === 'across' ? 'undecided' : (side === 'below') === (bound === 'max') ? 'pass' : 'breach';
        const trials = decided === 'undecided' ? trialsToDecide(rate.value, target) : undefined;
        return [{ gate: index, cell: cellLabel(cell), rule: `${what} ${bound === 'max' ? '≤' : '≥'} ${formatPercent(limit)}`, runs: cell.runs, rate, decided, target, ...(trials !== undefined && { trialsToDecide: trials }) }];
      });
    }),
  );
}

/** The false-success rate a gate judges: the trials that lied on any attempt, named so when a retried attempt adds to them. */
function falseSuccessLimit(cell: Cell, limit: number | undefined): [string, number, '>', number | undefined] {
  const retriedLies = cell.falseSuccessTrials > cell.falseSuccesses;
  const observed = cell.runs === 0 ? 0 : cell.falseSuccessTrials / cell.runs;
  return [retriedLies ? 'false-success rate, retried attempts included,' : 'false-success rate', observed, '>', limit];
}

/** Gates that match no cell, as `gates[1] {"layers":"verified"}`: a gate that checks nothing is a mistake. */
export function unmatchedGates(summary: Pick<Summary, 'cells'>, gates: readonly Gate[]): string[] {
  return parseGates(gates).flatMap((gate, index) => {
    if (summary.cells.some((cell) => gateMatches(gate, cell))) return [];
    const keys = Object.fromEntries(conditionKeys.filter((key) => gate[key] !== undefined).map((key) => [key, gate[key]]));
    return [`gates[${index}] ${JSON.stringify(keys)}`];
  });
}

const conditionKeys = ['task', 'agent', 'model', 'layers', 'site'] as const;

function parseGates(gates: readonly Gate[]) {
  return gates.map((gate, index) => parseInput(gateSchema, gate, `gates[${index}]`));
}

/** What a gate's key may say for a cell's name: its label (a model as shown), the label without the `#hash` that told two conditions apart, a site's without its setting, an agent's without its packages. */
function namesFor(cell: CellKeys, key: (typeof conditionKeys)[number]): string[] {
  const label = key === 'model' ? modelName(cell) : cell[key];
  const unhashed = label.replace(/#[0-9a-f]{6}$/, '');
  return [label, unhashed, ...(key === 'site' || key === 'agent' ? [unhashed.replace(/ \(.*\)$/, '')] : [])];
}

function gateMatches(gate: Partial<CellNames>, cell: CellKeys): boolean {
  return conditionKeys.every((key) => gate[key] === undefined || namesFor(cell, key).includes(gate[key]));
}

function breach(cell: CellKeys, gate: number, what: string, observed: number, comparison: '>' | '<', limit: number): GateBreach {
  const [shownObserved, shownLimit] = formatDistinct(observed, limit);
  return { cell: cellLabel(cell), rule: `${what} ${shownObserved} ${comparison} ${shownLimit}`, observed, limit, gate };
}

/** Two decimals, or more when two decimals would show a breach as `0.00 > 0.00`. */
function formatDistinct(a: number, b: number): [string, string] {
  for (let digits = 2; digits < 8; digits++) {
    if (a.toFixed(digits) !== b.toFixed(digits)) return [a.toFixed(digits), b.toFixed(digits)];
  }
  return [String(a), String(b)];
}
