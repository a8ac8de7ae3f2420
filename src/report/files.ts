import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { BUILT_IN_AGENT } from '../core/run.ts';
import { cellsDiffer, partialReasons, rateNames, undecidedChanges } from './compare.ts';
import { containmentLines, containmentMarks, counted, formatRuns, leftOut, unverifiedMarks, formatCount, formatDifference, formatDuration, formatInterval, formatPercent, endingOf, EXCLUSIONS, OUTCOMES, round1, runOutcome, testName, type Outcome } from './format.ts';
import { cellLabel, conditionKey, errorsAllowed, groupByCell, modelName } from './summarize.ts';
import { configurationOf } from './recommend.ts';
import { ablatedRates, layerWithOptions, optionWords } from './ablation.ts';
import { DETECT_LIMIT, excludesZero, TRIALS_SEARCHED } from './statistics.ts';
import { comparedRates, type Cell, type CellChange, type Choice, type Comparison, type GateDecision, type Interval, type LayerEffect, type RunWithStderr, type Summary } from './types.ts';
import { escapeHtml, writeFileAtomic } from '../text.ts';
import { formatCost, markdownCostSuccess, renderCostSuccess } from './cost-chart.ts';

export interface SummaryFiles {
  json: string;
  markdown: string;
  html: string;
}

/**
 * Writes `summary.json`, `summary.md` and `index.html` into `dir`, creating it. Each file is written
 * to a temporary name in the same directory and renamed over the old one, so a reader (a CI step,
 * a browser refreshing a progress report) never sees half a file.
 */
export async function writeSummaryFiles(dir: string, summary: Summary, runs: readonly RunWithStderr[]): Promise<SummaryFiles> {
  await mkdir(dir, { recursive: true });
  const files = { json: join(dir, 'summary.json'), markdown: join(dir, 'summary.md'), html: join(dir, 'index.html') };
  writeFileAtomic(files.json, `${JSON.stringify(summary, null, 2)}\n`);
  writeFileAtomic(files.markdown, renderMarkdown(summary));
  writeFileAtomic(files.html, renderHtml(summary, runs));
  return files;
}

// ── What every report says first ─────────────────────────────────────────────────────────────────

/** Lines of a list under the verdict that summary.md shows before `… and N more`, and index.html before folding; summary.json lists them all. */
const LISTED = 10;
/** Lines of a folded list index.html shows. */
const FOLDED = 100;

/** How the verdict reads: `fail` when a gate is breached, errors exceed `maxErrors` or Playwright failed something; else `incomplete` when a planned run is not recorded or was interrupted (never a green pass); else `pass`. */
export type VerdictState = 'pass' | 'fail' | 'incomplete';
const VERDICT_MARK: Record<VerdictState, string> = { pass: '✓', fail: '✗', incomplete: '⚠' };

/** A list under the verdict: its lines, and for one that may run long what a line is (`missing test`) and their count in words (`13 tests recorded no run`), to cut or fold it by. */
export interface VerdictList {
  lines: string[];
  long?: { noun: string; fold: string };
}

export interface Verdict {
  headline: string;
  state: VerdictState;
  mark: string;
  /** In the reports' order: the runs left out of every rate and what Playwright failed first, the missing tests last. */
  lists: VerdictList[];
}

/**
 * The verdict in words. It leads with what says nothing of the agent and with what Playwright
 * failed (`2 runs errored, none allowed (maxErrors 0) · 1 test failed outside the gates`), then the
 * gates (`gates breached in 2 cells`, `1 gate passed`, `no gates set`) and what the run covers
 * (`incomplete: 12 of 13 planned runs recorded · 1 gate not judged: incomplete`); then the lists
 * for the reports to cut or fold. Breaches in the part that ran show whatever else holds; a gate
 * is judged on the whole matrix only, so one that held on part of the runs is never reported as
 * passed.
 */
export function verdictLines(summary: Summary): Verdict {
  const { gates, excluded, playwrightFailures } = summary;
  const breachedCells = new Set(gates?.breaches.map((breach) => breach.cell));
  // A whole run whose every run was skipped or left out judged nothing: never a pass.
  const nothingMeasured = summary.complete && summary.totals.runs === 0;
  const failed = breachedCells.size > 0 || (gates?.unmatched.length ?? 0) > 0 || !!excluded?.tooManyErrors || !!playwrightFailures || nothingMeasured;
  const state: VerdictState = failed ? 'fail' : summary.complete ? 'pass' : 'incomplete';
  const gateWords = nothingMeasured ? 'nothing measured' : gatesInWords(gates, breachedCells.size, summary.complete);
  const recorded = `${formatCount(summary.recorded)} of ${counted(summary.planned, 'planned run')} recorded`;
  const shard = summary.partial?.selection.filter((part) => part.startsWith('shard ')) ?? [];
  const coverage = summary.complete ? `complete · ${recorded}` : `incomplete: ${[...shard, recorded].join(', ')}`;
  const first = [...excludedWords(summary), ...failureWords(playwrightFailures)];
  const headline = [...first, ...(state === 'incomplete' ? [coverage, gateWords] : [gateWords, coverage])].join(' · ');
  const details = [
    ...(gates?.breaches ?? []).map((breach) => `breach: ${breach.cell}: ${breach.rule} (by ${round1(Math.abs(breach.observed - breach.limit) * 100)} percentage points)`),
    ...(gates?.unmatched ?? []).map((gate) => `gate matches no cell: ${gate}`),
    ...(playwrightFailures?.errors ?? []).map((error) => `error outside any test: ${error}`),
    ...(summary.partial ? [`partial: ${partialReasons(summary.partial).join('; ')}; not a baseline for the whole suite`] : []),
    ...(summary.notApplicable ?? []).map((test) => `n/a: ${testName(test)}: ${test.reason}`),
    ...containmentLines(summary.cells, cellLabel),
    // After what failed: whether the data decide each gate. Judged on the whole matrix only, as the gates are.
    ...decidedLines(summary),
  ];
  const left = excluded?.runs ?? [];
  const failedTests = playwrightFailures?.tests ?? [];
  const lists: VerdictList[] = [
    { lines: left.map((run) => `${run.reason}: ${testName(run)}${run.run > 1 ? ` (run ${run.run})` : ''}: ${run.detail}`), long: { noun: 'run left out', fold: `${counted(left.length, 'run')} left out of every rate` } },
    { lines: failedTests.map((test) => `${test.status === 'flaky' ? 'flaky' : 'failed'}: ${testName(test)}: ${test.error}`), long: { noun: 'failed test', fold: `${counted(failedTests.length, 'test')} failed outside the gates` } },
    // Whole: a breach, an unmatched gate and why the run is partial are read at once.
    { lines: details },
    { lines: summary.missing.map((test) => `missing: ${testName(test)}`), long: { noun: 'missing test', fold: `${counted(summary.missing.length, 'test')} recorded no run` } },
  ];
  return { headline, state, mark: VERDICT_MARK[state], lists: lists.filter((list) => list.lines.length > 0) };
}

/** What the gates say: `gates breached in 2 cells`, `1 gate matching no cell`, `no gates set`, `1 gate not judged: incomplete`, `1 gate passed`. */
function gatesInWords(gates: Summary['gates'], breachedCells: number, complete: boolean): string {
  if (!gates) return 'no gates checked';
  if (breachedCells > 0) return `gates breached in ${counted(breachedCells, 'cell')}`;
  if (gates.unmatched.length > 0) return `${counted(gates.unmatched.length, 'gate')} matching no cell`;
  if (gates.checked === 0) return 'no gates set';
  return complete ? `${counted(gates.checked, 'gate')} passed` : `${counted(gates.checked, 'gate')} not judged: incomplete`;
}

/** `2 runs errored, none allowed (maxErrors 0)`, `1 run errored, 2 allowed (maxErrors 10%)`, `3 runs interrupted`; nothing when every run counts. */
function excludedWords({ excluded, totals }: Summary): string[] {
  if (!excluded) return [];
  const errors = totals.errors ?? 0;
  const allowed = errorsAllowed(excluded.maxErrors, totals.runs + errors);
  const limit = excluded.maxErrors < 1 && excluded.maxErrors > 0 ? formatPercent(excluded.maxErrors) : String(excluded.maxErrors);
  return [
    ...(errors > 0 ? [`${counted(errors, 'run')} errored, ${allowed === 0 ? 'none' : formatCount(allowed)} allowed (maxErrors ${limit})`] : []),
    ...(totals.interrupted ? [`${counted(totals.interrupted, 'run')} interrupted`] : []),
  ];
}

/** `2 tests failed outside the gates`, `1 error outside any test`; nothing when Playwright failed nothing. */
function failureWords(failures: Summary['playwrightFailures']): string[] {
  if (!failures) return [];
  return [...(failures.tests.length > 0 ? [`${counted(failures.tests.length, 'test')} failed outside the gates`] : []), ...(failures.errors.length > 0 ? [`${counted(failures.errors.length, 'error')} outside any test`] : [])];
}

/** The answer to "which configuration should we ship?": a line per task and site, and one per cell with false successes, gated or not (see report/recommend.ts). */
export interface Answer {
  choices: string[];
  /** Cells with a false success under no gate first: no gate failed for them, so only this says so. */
  falseSuccesses: Array<{ line: string; gated: boolean }>;
}

export function answerLines(summary: Summary): Answer {
  const recommendation = summary.recommendation;
  if (!recommendation) return { choices: [], falseSuccesses: [] };
  const several = recommendation.choices.length > 1;
  // A matrix still running, or cut short, has a best so far, not one to ship.
  const verb = summary.complete ? 'Ship' : 'Best so far (incomplete)';
  const choices = recommendation.choices.map(({ task, site, best, tiedWith, cells, disqualified }) => {
    const where = several ? ` for ${task} · ${site}` : '';
    if (!best) return `No configuration to ship${where}: every cell had a false success`;
    const others = disqualified > 0 ? `; ${counted(disqualified, 'cell')} left out for false successes` : '';
    const rivals = cells - disqualified - 1;
    const beaten = rivals - tiedWith.length;
    const ties = [
      ...(rivals === 0 ? ['the only cell with none'] : []),
      ...(tiedWith.length > 0 ? [`not yet told apart from ${tiedWith.map((tie) => `${tie.configuration} (${[successWords(tie), ...(summary.complete ? [tieTrials(best, tie)] : [])].join('; ')})`).join(', ')}`] : []),
      ...(beaten > 0 ? [`better beyond chance than ${tiedWith.length > 0 ? '' : 'the '}${counted(beaten, 'other cell')} with none`] : []),
    ];
    return `${verb}${where}: ${best.configuration}: ${successWords(best)}, no false success; ${ties.join('; ')}${others}`;
  });
  const falseSuccesses = [...recommendation.falseSuccesses]
    .sort((a, b) => Number(a.gated) - Number(b.gated))
    .map(({ cell, trials, runs, gated }) => ({ line: `${counted(trials, 'false success', 'false successes')} in ${formatCount(trials)} of ${counted(runs, 'trial')}: ${cell}${gated ? '' : ', under no gate'}`, gated }));
  return { choices, falseSuccesses };
}

/** How many trials per cell would tell a tie from the best (`16 trials per cell would tell them apart`), or why none would; a whole matrix's only (see summarize). */
function tieTrials(best: { successRate: Interval }, tie: Choice['tiedWith'][number]): string {
  if (tie.trialsToTell !== undefined) return `${counted(tie.trialsToTell, 'trial')} per cell would tell them apart`;
  return tie.successRate.value === best.successRate.value ? 'the same rate seen' : `more than ${formatCount(DETECT_LIMIT)} trials per cell would tell them apart`;
}

/** `3 of 3 done (44–100%)`. */
function successWords({ successes, runs, successRate }: { successes: number; runs: number; successRate: Interval }): string {
  return `${formatCount(successes)} of ${formatCount(runs)} done (${formatRange(successRate)})`;
}

/** An interval's ends in percent: `44–100%`. */
function formatRange({ low, high }: Interval): string {
  return `${Math.round(low * 100)}–${formatPercent(high)}`;
}

/**
 * Whether the data decide what the report judges: each gate's limits, then what each layer buys.
 * Judged on the whole matrix only, as the gates are: while it runs, or cut short, nothing.
 */
export function decidedLines(summary: Summary): string[] {
  if (!summary.complete) return [];
  const ablation = ablationDecisionLine(summary.ablation ?? []);
  return [...gateDecisionLines(summary.gates), ...(ablation ? [ablation] : [])];
}

/**
 * Whether the data decide each gate, a line per gate and rule: `gates[0] false-success rate ≤ 0%,
 * 4 cells: not decided by the data in 3 (0 of 3: 0–56%); 73 trials per cell would decide (an
 * interval under 5%, for a limit of 0)`.
 */
export function gateDecisionLines(gates: Summary['gates']): string[] {
  const groups = new Map<string, GateDecision[]>();
  for (const decision of gates?.decisions ?? []) {
    const key = `gates[${decision.gate}] ${decision.rule}`;
    groups.set(key, [...(groups.get(key) ?? []), decision]);
  }
  return [...groups].map(([key, decisions]) => {
    const count = (decided: GateDecision['decided']) => decisions.filter((decision) => decision.decided === decided).length;
    const undecided = decisions.filter((decision) => decision.decided === 'undecided');
    const decided = [...(count('pass') > 0 ? [`a pass decided by the data in ${formatCount(count('pass'))}`] : []), ...(count('breach') > 0 ? [`a breach decided by the data in ${formatCount(count('breach'))}`] : [])];
    const parts = [...decided, ...(undecided.length > 0 ? [`not decided by the data in ${formatCount(undecided.length)}${undecided.length === 1 ? ` (${undecidedWords(undecided[0]!)})` : ''}`] : [])];
    const needed = undecided.map((decision) => decision.trialsToDecide);
    const most = needed.every((trials) => trials !== undefined) && needed.length > 0 ? Math.max(...(needed as number[])) : undefined;
    const target = undecided[0]?.target;
    const zero = target !== undefined && decisions[0]!.rule.endsWith(' 0%');
    const would = undecided.length === 0 ? '' : most !== undefined ? `; ${counted(most, 'trial')} per cell would decide it at the rates seen (the interval ${zero ? `under ${formatPercent(target!)}, for a limit of 0` : `clear of ${formatPercent(target!)}`})` : `; no count of trials up to ${formatCount(TRIALS_SEARCHED)} would decide it at the rates seen (a rate at or near the limit)`;
    return `${key}, ${counted(decisions.length, 'cell')}: ${parts.join(', ')}${would}`;
  });
}

/**
 * Whether the data decide what each layer buys, in one line over every rate a layer changed:
 * `What each layer buys: 1 of 4 changes seen decided by the data; 16 to 94 trials per cell would
 * decide the other 3 at the rates seen`; none when no layer changed any rate.
 */
export function ablationDecisionLine(effects: readonly LayerEffect[]): string | undefined {
  const changes = effects.flatMap((effect) => ablatedRates.filter((rate) => effect[rate].value !== 0).map((rate) => ({ decided: excludesZero(effect[rate]), trials: effect.trialsToTell?.[rate] })));
  if (changes.length === 0) return undefined;
  const open = changes.filter((change) => !change.decided);
  const needed = open.flatMap((change) => (change.trials === undefined ? [] : [change.trials]));
  const [least, most] = [Math.min(...needed), Math.max(...needed)];
  const range = least === most ? counted(least, 'trial') : `${formatCount(least)} to ${formatCount(most)} trials`;
  const beyond = open.length - needed.length;
  const decided = changes.length - open.length;
  const all = needed.length === open.length;
  const which = decided === 0 ? (all ? (open.length === 1 ? 'it' : 'them') : `${formatCount(needed.length)} of them`) : all ? (open.length === 1 ? 'the other' : `the other ${formatCount(open.length)}`) : `${formatCount(needed.length)} of the other ${formatCount(open.length)}`;
  const rest = [
    ...(needed.length > 0 ? [`${range} per cell would decide ${which} at the rates seen`] : []),
    ...(beyond > 0 ? [`${formatCount(beyond)} would take more than ${formatCount(DETECT_LIMIT)} trials per cell`] : []),
  ];
  return `What each layer buys: ${formatCount(decided)} of ${counted(changes.length, 'change')} seen decided by the data${rest.length > 0 ? `; ${rest.join('; ')}` : ''}`;
}

/** Under a difference the trials leave undecided: the trials per cell that would decide it at the rates seen; nothing for one decided, no change seen, or a matrix not whole (see summarize). */
function trialsToTellWords(effect: LayerEffect, rate: (typeof ablatedRates)[number], complete: boolean): string | undefined {
  if (!complete || excludesZero(effect[rate]) || effect[rate].value === 0) return undefined;
  const trials = effect.trialsToTell?.[rate];
  return trials === undefined ? `more than ${formatCount(DETECT_LIMIT)} trials per cell would decide` : `${counted(trials, 'trial')} per cell would decide`;
}

function undecidedWords(decision: GateDecision): string {
  return `${formatCount(Math.round(decision.rate.value * decision.runs))} of ${formatCount(decision.runs)}: ${formatRange(decision.rate)}`;
}

/** A list's first `limit` lines, then `… and N more missing tests (summary.json lists them all)`; a list that is never long, whole. */
function cutList({ lines, long }: VerdictList, limit: number): string[] {
  const more = lines.length - limit;
  return long && more > 0 ? [...lines.slice(0, limit), `… and ${counted(more, `more ${long.noun}`)} (summary.json lists them all)`] : [...lines];
}

function totalsLine(summary: Summary): string {
  const { runs, successes, falseSuccesses, falseSuccessAttempts, falseFailures, sideEffectRuns, incomplete, errors = 0, interrupted = 0 } = summary.totals;
  const share = (count: number) => (runs === 0 ? '' : ` (${formatPercent(count / runs)})`);
  const left = [...(errors > 0 ? [counted(errors, 'error')] : []), ...(interrupted > 0 ? [`${formatCount(interrupted)} interrupted`] : [])];
  return [
    `${counted(runs, 'run')} of ${formatCount(summary.planned)} planned in ${counted(summary.cells.length, 'cell')}`,
    ...(summary.workers ? [`${counted(summary.workers.count, 'worker')}${summary.workers.why ? ` (${summary.workers.why})` : ''}`] : []),
    ...(left.length > 0 ? [`${left.join(' and ')} out of every rate`] : []),
    `${formatCount(successes)} done${share(successes)}`,
    `${counted(falseSuccesses, 'false success', 'false successes')}${share(falseSuccesses)}${retriedLies(falseSuccessAttempts)}`,
    `${counted(falseFailures, 'false failure')}${share(falseFailures)}`,
    `${formatCount(sideEffectRuns)} with side effects${share(sideEffectRuns)}`,
    `${formatCount(incomplete)} incomplete`,
    ...(summary.totals.cost !== undefined ? [`cost ${formatCost(summary.totals.cost)}`] : []),
    `generated ${summary.generatedAt}`,
  ].join(' · ');
}

/** A cell's column: false successes on attempts Playwright retried, which the rates (of the last attempts) leave out and the gates count. */
const RETRIED_LIES_COLUMN = 'false successes on retried attempts';

/** `, and 1 false success on a retried attempt`; nothing when there is none. */
export function retriedLies(count: number, [one, many] = ['on a retried attempt', 'on retried attempts']): string {
  return count > 0 ? `, and ${counted(count, 'false success', 'false successes')} ${count === 1 ? one : many}` : '';
}

// ── Markdown ─────────────────────────────────────────────────────────────────────────────────────

/** The summary as Markdown: the verdict, the answer, the cells (a narrow table and a line each), the ablation and the baseline comparison. For a CI step summary or a pull request. */
export function renderMarkdown(summary: Summary): string {
  const verdict = verdictLines(summary);
  return [
    '# harness-eval summary',
    '',
    // The verdict first, never greener than the run; then which configuration to ship.
    `**${verdict.mark} ${escapeMarkdownCell(verdict.headline)}**`,
    '',
    ...markdownAnswer(answerLines(summary)),
    totalsLine(summary),
    ...verdict.lists.flatMap((list) => cutList(list, LISTED)).map((line) => `- ${escapeMarkdownCell(line)}`),
    ...markdownCells(summary.cells),
    ...markdownObservations(summary.cells),
    ...markdownCostSuccess(summary),
    ...markdownAblation(summary.ablation ?? [], summary.complete),
    ...markdownComparison(summary.comparison),
    '',
  ].join('\n');
}

/**
 * The cells, per task and site: a narrow table of what decides a choice (configuration, success,
 * false success, runs), read whole in a CI log or a phone, then each cell's other figures as a line.
 */
function markdownCells(cells: readonly Cell[]): string[] {
  const groups = new Map<string, Cell[]>();
  for (const cell of cells) groups.set(`${cell.task} · ${cell.site}`, [...(groups.get(`${cell.task} · ${cell.site}`) ?? []), cell]);
  const withCost = cells.some((cell) => cell.cost !== undefined);
  return [...groups].flatMap(([where, group]) => {
    const rows = group.map((cell) => [
      configurationOf(cell),
      [formatInterval(cell.successRate), ...containmentMarks(cell).map(({ mark }) => mark)].join(' · '),
      [formatInterval(cell.falseSuccessRate), ...retriedMarks(cell), ...unverifiedMarks(cell)].join(' · '),
      formatRuns(cell),
    ]);
    const details = group.map((cell) => {
      const figures = [
        `false failure ${formatInterval(cell.falseFailureRate)}`,
        `side effects ${formatInterval(cell.sideEffectRate)}`,
        `${formatCount(cell.incomplete)} incomplete`,
        `${formatCount(cell.retried)} retried`,
        counted(cell.unsupportedClaims, 'unsupported claim'),
        `iterations ${formatIterations(cell)} (mean / median / p95 / max)`,
        `tokens in / out ${formatTokens(cell)}`,
        ...(withCost ? [`cost ${formatCellCost(cell)}`] : []),
        `median wall time ${formatDuration(cell.wallMs.median)}`,
        `stop reasons ${formatStopReasons(cell.stopReasons)}`,
      ];
      return `- ${escapeMarkdownCell(configurationOf(cell))}: ${escapeMarkdownCell(figures.join(' · '))}`;
    });
    return ['', `## Cells: ${escapeMarkdownCell(where)}`, '', markdownTable(['configuration', 'success', 'false success', 'runs'], rows), '', ...details];
  });
}

/** Beside a false-success rate: the false successes on attempts Playwright retried, which the rate (of the last attempts) leaves out and the gates count: `1 more on a retried attempt`. */
function retriedMarks({ falseSuccessAttempts }: Cell): string[] {
  return falseSuccessAttempts > 0 ? [`${formatCount(falseSuccessAttempts)} more on ${falseSuccessAttempts === 1 ? 'a retried attempt' : 'retried attempts'}`] : [];
}

/** The answer's lines in bold, the false successes under no gate marked ✗, then a blank line; nothing for a summary with no cell measured. */
function markdownAnswer({ choices, falseSuccesses }: Answer): string[] {
  const lines = [...choices.map((line) => `**${escapeMarkdownCell(line)}**`), ...falseSuccesses.map(({ line, gated }) => `${gated ? '⚠' : '✗'} ${escapeMarkdownCell(line)}`)];
  return lines.flatMap((line) => [line, '']);
}

/** Screenshot tokens against text tools' tokens, per run, for the cells that sent screenshots and their neighbours without. */
function markdownObservations(cells: readonly Cell[]): string[] {
  // Neighbours: the same task, model and site, whatever the layers.
  const neighbours = ({ task, model, site }: Cell) => `${task}\u0000${model}\u0000${site}`;
  const seeing = new Set(cells.filter((cell) => (cell.observationTokens?.screenshots ?? 0) > 0).map(neighbours));
  if (seeing.size === 0) return [];
  const perRun = (count: number, runs: number) => formatCount(Math.round(count / runs));
  const rows = cells.flatMap((cell) => {
    const observed = cell.observationTokens;
    if (!observed || !seeing.has(neighbours(cell))) return [];
    return [[cell.task, modelName(cell), cell.layers, cell.site, perRun(observed.screenshots, observed.runs), perRun(observed.text, observed.runs)]];
  });
  return ['', '## What the model was shown', '', 'Prompt tokens per run: screenshots sent (estimated, see docs/agents.md) and the text tools\' outputs (o200k_base).', '', markdownTable(['task', 'model', 'layers', 'site', 'screenshot tokens', 'text-tool tokens'], rows)];
}

function markdownAblation(effects: readonly LayerEffect[], complete: boolean): string[] {
  if (effects.length === 0) return [];
  const header = ['layer', 'model', 'task', 'site', 'without → with', 'runs', 'success rate', 'false-success rate', 'false-failure rate'];
  const difference = (effect: LayerEffect, rate: (typeof ablatedRates)[number]) => [formatDifference(effect[rate]), trialsToTellWords(effect, rate, complete)].filter(Boolean).join('; ');
  const rows = effects.map((effect) => [effectName(effect), effect.model, effect.task, effect.site, `${effect.without} → ${effect.with}`, `${effect.runs.without} / ${effect.runs.with}`, ...ablatedRates.map((rate) => difference(effect, rate))]);
  return ['', '## What each layer buys', '', ABLATION_NOTE, '', markdownTable(header, rows)];
}

function markdownComparison(comparison: Comparison | undefined): string[] {
  if (!comparison) return [];
  const header = ['cell', 'runs', ...comparedRates.map((key) => rateNames[key][1]), 'verdict'];
  const rows = comparison.cells.map((change) => [change.cell, `${change.runs.before ?? '—'} → ${change.runs.after ?? '—'}`, ...comparedRates.map((key) => rateChangeText(change, key)), changeVerdict(change)]);
  const differ = cellsDiffer(comparison.cells);
  return ['', `## Since ${comparison.baseline.source} (${comparison.baseline.generatedAt})`, '', COMPARISON_NOTE, ...(differ ? ['', `⚠ ${capitalised(differ)}.`] : []), '', markdownTable(header, rows)];
}

function markdownTable(header: readonly string[], rows: ReadonlyArray<readonly string[]>): string {
  return [markdownRow(header), markdownRow(header.map(() => '---')), ...rows.map(markdownRow)].join('\n');
}

function markdownRow(cells: readonly string[]): string {
  return `| ${cells.map(escapeMarkdownCell).join(' | ')} |`;
}

/**
 * Keeps names literal in a table cell, and readable as plain text (a CI log, a terminal): `|`
 * would split the cell, `<x>` would vanish as a tag, `*` would emphasise, `&amp;` would become `&`;
 * a backslash escapes each, and `>` needs none.
 */
function escapeMarkdownCell(text: string): string {
  return text
    .replace(/[\\|*`<]|&(?=#?\w+;)/g, (char) => `\\${char}`)
    .replace(/[\r\n]+/g, ' ');
}

const ABLATION_NOTE = 'Each row: two cells of one task, model and site whose layer stacks differ by this layer alone; the change adding it made (with − without, in percentage points) with its 95% Newcombe interval. An interval that excludes 0 is a change the trials vouch for. A row marked estimate comes from the next stack that adds several layers at once (bare → verified): their effect together, in that order, not each one\'s; layerPlan() gives stacks that measure each.';
const COMPARISON_NOTE = 'Each rate: baseline → now, and the difference in percentage points with its 95% Newcombe interval. Flagged when that interval excludes 0.';

function capitalised(text: string): string {
  return `${text.charAt(0).toUpperCase()}${text.slice(1)}`;
}

function rateChangeText(change: CellChange, key: (typeof comparedRates)[number]): string {
  const { before, after, difference } = change[key];
  const shown = (interval?: Interval) => (interval ? formatPercent(interval.value) : '—');
  return `${shown(before)} → ${shown(after)}${difference ? ` ${formatDifference(difference)}` : ''}`;
}

function changeVerdict(change: CellChange): string {
  if (change.status !== 'changed') return change.status;
  const undecided = undecidedChanges(change);
  const verdict = change.flagged.length > 0 ? `⚑ ${change.flagged.join(', ')} changed` : change.tooFewTrials ? 'too few trials to detect any change' : 'no change detected';
  return undecided ? `${verdict}; ${undecided}` : verdict;
}

// ── HTML ─────────────────────────────────────────────────────────────────────────────────────────

/**
 * The report as one self-contained page: inline CSS and SVG, no scripts, no external resources, so
 * it can be opened from a CI artifact with no network. It opens with which configuration to ship
 * and every false success, then the verdict, the baseline comparison, heatmaps per task × site
 * (rows = model, columns = layer stack) that link to the cells' rows, which link to their runs,
 * and what each layer buys.
 */
export function renderHtml(summary: Summary, runs: readonly RunWithStderr[]): string {
  const runsByCell = groupByCell(runs);
  const cellIds = new Map(summary.cells.map((cell, index) => [conditionKey(cell), `cell-${index + 1}-${slug(cellLabel(cell))}`]));
  const runIds = assignRunIds(summary.cells, runsByCell);
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>harness-eval report</title>
<style>${STYLE}</style>
</head>
<body>
<h1>harness-eval report</h1>
${renderAnswer(answerLines(summary))}${renderVerdict(summary)}
${renderComparisonSection(summary.comparison)}${renderCostSuccess(summary)}<section id="heatmaps">
<h2>Heatmaps</h2>
${renderHeatLegend()}
${renderHeatmaps(summary.cells, cellIds)}
</section>
${renderAblation(summary.ablation ?? [], summary.complete)}
<section id="cells">
<h2>Cells</h2>
<div class="scroll">${renderCellTable(summary.cells, cellIds, runsByCell, runIds)}</div>
</section>
<section id="runs">
<h2>Runs</h2>
${renderOutcomeLegend()}
<div class="scroll">${renderRunTable(summary.cells, cellIds, runsByCell, runIds)}</div>
</section>
</body>
</html>
`;
}

const STYLE = `
body{font:14px/1.4 system-ui,sans-serif;margin:1.5rem;color:#1a1a1a;max-width:100rem}
h2{margin:1.75rem 0 .5rem;font-size:1.2rem;border-bottom:1px solid #ddd}
h3{font-size:1rem;margin:1rem 0 .25rem}
table{border-collapse:collapse;margin:.5rem 0 1rem}
th,td{border:1px solid #ccc;padding:.25rem .5rem;text-align:left;vertical-align:top}
th{background:#f3f3f3}
td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
small.contained{color:#1b7a2b}small.contain,small.unverified,td.excluded{color:#b45309}
.scroll{overflow-x:auto;max-width:100%}
/* Tables wrap, names anywhere, to fit 1280 px: a column scrolled out of sight is a column not read. */
.scroll>table{font-size:12px;width:100%}
.scroll>table th,.scroll>table td{padding:.2rem .25rem}
.scroll>table td:not(.num){overflow-wrap:break-word}
#cells td:nth-child(-n+5){min-width:4.5em}
.scroll>table th{font-size:11px}
.scroll>table td.num{white-space:normal}
svg.hist{width:100%;max-width:120px;height:auto}
.note{color:#444;max-width:60rem}
#verdict{border:2px solid;padding:.75rem 1rem;margin:0 0 1rem}
#verdict.pass{border-color:#1b7a2b;background:#eef8f0}#verdict.fail{border-color:#b3261e;background:#fdeeee}#verdict.incomplete{border-color:#8a5a00;background:#fdf6e3}
#verdict p.headline{font-size:1.25rem;font-weight:600;margin:0 0 .25rem}
#verdict ul{margin:.25rem 0 0;padding-left:1.25rem}
.cells-differ{color:#8a5a00;font-weight:600}
.pair{display:flex;flex-wrap:wrap;gap:1rem 2rem}
.pair figure{margin:0;max-width:100%;overflow-x:auto}
.heat td{text-align:center;min-width:5.5rem;white-space:nowrap}
.heat a{display:block;color:inherit;text-decoration:none}
.heat small{color:#333}
.legend{display:flex;align-items:center;gap:.5rem;flex-wrap:wrap}
.ramp{display:inline-block;width:12rem;height:.9rem;border:1px solid #999;background:linear-gradient(to right,hsl(0 65% 78%),hsl(60 65% 78%),hsl(120 65% 78%))}
.hist rect{fill:#4a6fa5}
tr:target{outline:2px solid #4a6fa5}
.success{color:#1b7a2b}.false-success{color:#b3261e;font-weight:600}.truthful-failure{color:#555}.false-failure{color:#8a5a00}.error,.interrupted{color:#6b21a8}
.better{background:#e3f4e6}.worse{background:#fbe3e1}
tr.group th{background:#e8edf5}
.flagged{font-weight:600}
.estimate{color:#8a5a00;font-weight:400;font-style:italic}
details a{margin-right:.3rem}
pre{margin:.25rem 0;max-width:60rem;max-height:24rem;overflow:auto;white-space:pre-wrap;font-size:12px;background:#f7f7f7;padding:.4rem}
dl.words{display:grid;grid-template-columns:max-content 1fr;gap:.1rem 1rem;margin:.25rem 0 1rem}
dl.words dt{font-weight:600}dl.words dd{margin:0}
ul.verdicts{display:inline-block;margin:0;padding-left:1.25rem;vertical-align:top}
table.runs tr.detail td{border-top:none;background:#fafafa;padding-left:1.5rem}
tr.detail b{display:inline-block;width:3.5rem;color:#555;font-weight:600}
tr.detail .oracle{display:flex}
#answer{border:2px solid #1d4ed8;background:#eef3fd;padding:.6rem 1rem;margin:0 0 1rem}
#answer p.ship{font-size:1.1rem;margin:0 0 .25rem}
#answer ul.lies{margin:.25rem 0 0;padding-left:0;list-style:none}
#answer li.ungated{color:#b3261e;font-weight:600}#answer li.gated{color:#8a5a00}
.heat .rate{display:block;font-weight:600}
.band{display:block;position:relative;height:6px;margin:2px 0;background:#0000001a;border-radius:3px}
.band .range{position:absolute;top:0;bottom:0;background:#0000005c;border-radius:3px;min-width:2px}
.band .tick{position:absolute;top:-2px;bottom:-2px;width:2px;margin-left:-1px;background:#111}
/* A phone: no table wider than the screen; a row of the cells, runs and ablation tables becomes a card, each value after its column's name. */
@media (max-width:600px){
body{margin:.75rem}
svg.cost-chart{width:100%;height:auto}
.pair{display:block}.pair figure{margin:0 0 .75rem}
.heat{table-layout:fixed;width:100%}.heat td{min-width:0;white-space:normal}.heat th{overflow-wrap:break-word}
.scroll>table,.scroll>table tbody,.scroll>table tr,.scroll>table td{display:block;width:auto}
.scroll>table tr:first-child{display:none}
.scroll>table tr{border:1px solid #ccc;margin:0 0 .5rem}
.scroll>table th{display:block}
.scroll>table td{border:none;border-top:1px solid #eee;text-align:left}
.scroll>table td.num{text-align:left}
.scroll>table td[data-label]::before{content:attr(data-label) ": ";font-weight:600;color:#555}
table.runs tr.detail td{padding-left:.5rem}
dl.words{grid-template-columns:1fr}
}
`.trim();

/** Which configuration to ship, and every false success: the page's first block, above the gates' verdict. */
function renderAnswer({ choices, falseSuccesses }: Answer): string {
  if (choices.length === 0) return '';
  const lies = falseSuccesses.map(({ line, gated }) => `<li class="${gated ? 'gated' : 'ungated'}">${gated ? '⚠' : '✗'} ${escapeHtml(line)}</li>`).join('');
  return `<section id="answer">
${choices.map((line) => `<p class="ship">${shipLine(line)}</p>`).join('\n')}${lies ? `\n<ul class="lies">${lies}</ul>` : ''}
</section>
`;
}

/** The configuration and its rates in bold, what it cannot be told from after them in plain weight. */
function shipLine(line: string): string {
  const cut = line.indexOf('; ');
  return cut < 0 ? `<b>${escapeHtml(line)}</b>` : `<b>${escapeHtml(line.slice(0, cut))}</b>${escapeHtml(line.slice(cut))}`;
}

function renderVerdict(summary: Summary): string {
  const { headline, state, mark, lists } = verdictLines(summary);
  const item = (line: string) => `<li>${escapeHtml(line)}</li>`;
  // A long list folds under its count: an interrupted matrix can miss hundreds of tests, and the verdict must stay readable.
  const items = lists.flatMap((list) => (list.long && list.lines.length > LISTED ? [`<li><details><summary>${escapeHtml(list.long.fold)}</summary><ul>${cutList(list, FOLDED).map(item).join('')}</ul></details></li>`] : list.lines.map(item)));
  const shown = items.length > 0 ? `<ul>${items.join('')}</ul>` : '';
  return `<section id="verdict" class="${state}">
<p class="headline">${mark} ${escapeHtml(headline)}</p>
<p>${escapeHtml(totalsLine(summary))}</p>${shown}
</section>`;
}

function renderComparisonSection(comparison: Comparison | undefined): string {
  if (!comparison) return '';
  // What changed first; cells with no detected change are folded, since most of a small matrix is there.
  const shown = comparison.cells.filter((change) => change.flagged.length > 0 || change.status !== 'changed');
  const folded = comparison.cells.filter((change) => !shown.includes(change));
  const few = folded.filter((change) => change.tooFewTrials).length;
  const differ = cellsDiffer(comparison.cells);
  const rest = folded.length === 0 ? '' : `<details><summary>${counted(folded.length, 'cell')} with no change detected${few > 0 ? `, ${few} of them with too few trials to detect any` : ''}</summary>${comparisonTable(folded)}</details>`;
  return `<section id="comparison">
<h2>Since ${escapeHtml(comparison.baseline.source)} <small>(${escapeHtml(comparison.baseline.generatedAt)})</small></h2>
<p class="note">${escapeHtml(COMPARISON_NOTE)} A cell marked “too few trials” could not have shown a change even from all runs to none; docs/report.md says how many trials detect a given change.</p>
${differ ? `<p class="cells-differ">⚠ ${escapeHtml(capitalised(differ))}.</p>\n` : ''}${shown.length > 0 ? comparisonTable(shown) : '<p>No cell changed beyond chance, and none was added or removed.</p>'}
${rest}
</section>
`;
}

function comparisonTable(changes: readonly CellChange[]): string {
  const header = ['cell', 'runs', ...comparedRates.map((key) => rateNames[key][1]), 'verdict'];
  const rows = changes.map((change) => {
    const rates = comparedRates.map((key) => {
      const { before, after, difference } = change[key];
      const text = `${before ? formatPercent(before.value) : '—'} → ${after ? formatPercent(after.value) : '—'}`;
      const flagged = change.flagged.includes(rateNames[key][1]);
      return `<td class="num${flagged ? ` flagged ${directionClass(key, difference)}` : ''}">${escapeHtml(text)}${difference ? `<br><small>${escapeHtml(formatDifference(difference))}</small>` : ''}</td>`;
    });
    return `<tr>${td(change.cell)}${td(`${change.runs.before ?? '—'} → ${change.runs.after ?? '—'}`, 'num')}${rates.join('')}${td(changeVerdict(change), change.flagged.length > 0 ? 'flagged' : undefined)}</tr>`;
  });
  return `<div class="scroll"><table>
<tr>${header.map((name) => `<th>${escapeHtml(name)}</th>`).join('')}</tr>
${rows.join('\n')}
</table></div>`;
}

/** Green when the change is good for that rate (more success, fewer false outcomes), red when bad. */
function directionClass(key: (typeof comparedRates)[number], difference: Interval | undefined): string {
  if (!difference || difference.value === 0) return '';
  const up = difference.value > 0;
  return (key === 'successRate') === up ? 'better' : 'worse';
}

/** What each layer buys, after the heatmaps; no section at all when no two cells differ by added layers alone. */
function renderAblation(effects: readonly LayerEffect[], complete: boolean): string {
  if (effects.length === 0) return '';
  const note = `<p class="note">${escapeHtml(ABLATION_NOTE)} Green: the layer helped beyond chance; red: it hurt; plain: within chance.</p>`;
  const header = ['model', 'task', 'site', 'without → with', 'runs', 'success rate', 'false-success rate', 'false-failure rate'];
  const rows: string[] = [];
  let layer: string | undefined;
  for (const effect of effects) {
    if (effectName(effect) !== layer) {
      layer = effectName(effect);
      const options = effect.options ? ` <span class="note">(${escapeHtml(optionWords(effect.options))})</span>` : '';
      const estimate = effect.estimate ? ` <span class="estimate">estimate: added together</span>` : '';
      rows.push(`<tr class="group"><th colspan="${header.length}">+ ${escapeHtml(effect.layer)}${options}${estimate}</th></tr>`);
    }
    const difference = (key: (typeof ablatedRates)[number]) => {
      const interval = effect[key];
      const vouched = excludesZero(interval);
      const trials = trialsToTellWords(effect, key, complete);
      return `<td class="num${vouched ? ` ${directionClass(key, interval)}` : ''}">${breakable(formatDifference(interval))}${trials ? `<br><small class="undecided">${escapeHtml(trials)}</small>` : ''}</td>`;
    };
    rows.push(`<tr>${labelled([td(effect.model), td(effect.task), td(effect.site), td(`${effect.without} → ${effect.with}`), td(`${effect.runs.without} / ${effect.runs.with}`, 'num'), ...ablatedRates.map(difference)], header)}</tr>`);
  }
  return `<section id="ablation">
<h2>What each layer buys</h2>
${note}<div class="scroll"><table>\n<tr>${header.map((name) => `<th>${escapeHtml(name)}</th>`).join('')}</tr>\n${rows.join('\n')}\n</table></div>
</section>`;
}

/** The layer as the ablation tables name it: an estimate says so. */
function effectName(effect: LayerEffect): string {
  return effect.estimate ? `${effect.layer} (estimate)` : layerWithOptions(effect);
}

function renderHeatLegend(): string {
  return `<p class="legend note"><span>Colour:</span><span class="ramp"></span><span>red = bad, green = good, by the observed rate. Under it, its 95% interval as a band on 0–100% (the tick is the observed rate), then the interval and n: a 3/3 success is green, and its wide band (44–100%) says how little three trials tell.</span></p>`;
}

function renderOutcomeLegend(): string {
  return `<dl class="words">${Object.entries({ ...OUTCOMES, ...EXCLUSIONS }).map(([word, meaning]) => `<dt class="${outcomeClass(word)}">${escapeHtml(word)}</dt><dd>${escapeHtml(meaning)}</dd>`).join('')}</dl>`;
}

function renderHeatmaps(cells: readonly Cell[], cellIds: ReadonlyMap<string, string>): string {
  if (cells.length === 0) return '<p>No runs yet.</p>';
  const groups = new Map<string, Cell[]>();
  for (const cell of cells) {
    const key = `${cell.task}\u0000${cell.site}`;
    const group = groups.get(key);
    if (group) group.push(cell);
    else groups.set(key, [cell]);
  }
  return [...groups.values()]
    .map((group) => {
      const { task, site } = group[0]!;
      return `<h3>${escapeHtml(task)} · ${escapeHtml(site)}</h3>
<div class="pair">
${renderHeatmap(group, cellIds, 'success rate', (cell) => cell.successRate, 'up')}
${renderHeatmap(group, cellIds, 'false-success rate', (cell) => cell.falseSuccessRate, 'down')}
${renderHeatmap(group, cellIds, 'false-failure rate', (cell) => cell.falseFailureRate, 'down')}
${renderHeatmap(group, cellIds, 'side-effect rate', (cell) => cell.sideEffectRate, 'down')}
</div>`;
    })
    .join('\n');
}

/** A heatmap's column: the built-in harness's layer stack, or another agent by its name. */
function columnOf(cell: Cell): string {
  return cell.agent === BUILT_IN_AGENT ? cell.layers : cell.agent;
}

/** The colour of a rate: its observed value, on red (bad) → green (good); the interval is drawn beside it (see renderInterval), so a 3/3 cell reads as a success and its doubt as the band's width. */
export function heatColour(rate: Interval, good: 'up' | 'down'): string {
  const score = good === 'up' ? rate.value : 1 - rate.value;
  return `hsl(${Math.round(score * 120)} 65% 78%)`;
}

/** A rate's 95% interval as a band on a 0–100% track, with a tick at the observed rate: the wider the band, the less the trials say. */
function renderInterval({ value, low, high }: Interval): string {
  const percent = (x: number) => `${(x * 100).toFixed(1)}%`;
  return `<span class="band" aria-hidden="true"><span class="range" style="left:${percent(low)};width:${percent(high - low)}"></span><span class="tick" style="left:${percent(value)}"></span></span>`;
}

function renderHeatmap(cells: readonly Cell[], cellIds: ReadonlyMap<string, string>, title: string, rateOf: (cell: Cell) => Interval, good: 'up' | 'down'): string {
  const models = distinct(cells.map(modelName));
  const stacks = distinct(cells.map(columnOf));
  const byPosition = new Map(cells.map((cell) => [`${modelName(cell)}\u0000${columnOf(cell)}`, cell]));
  const header = `<tr><th>model \\ agent, layers</th>${stacks.map((stack) => `<th>${breakable(stack)}</th>`).join('')}</tr>`;
  const rows = models.map((model) => {
    const heatCells = stacks.map((stack) => {
      const cell = byPosition.get(`${model}\u0000${stack}`);
      if (!cell) return '<td>—</td>';
      // Every run of the cell was left out: no rate to colour.
      if (cell.runs === 0) return `<td><a href="#${cellIds.get(conditionKey(cell))}">—<br><small>n=0 · ${escapeHtml(leftOut(cell))}</small></a></td>`;
      const rate = rateOf(cell);
      const tooltip = `${title} ${formatInterval(rate)}, n = ${cell.runs}`;
      return `<td style="background:${heatColour(rate, good)}"><a href="#${cellIds.get(conditionKey(cell))}" title="${escapeHtml(tooltip)}"><span class="rate">${formatPercent(rate.value)}</span>${renderInterval(rate)}<small>${formatRange(rate)} · n=${cell.runs}</small></a></td>`;
    });
    return `<tr><th>${breakable(model)}</th>${heatCells.join('')}</tr>`;
  });
  return `<figure><figcaption>${escapeHtml(title)}</figcaption><table class="heat">${header}${rows.join('')}</table></figure>`;
}

function renderCellTable(cells: readonly Cell[], cellIds: ReadonlyMap<string, string>, runsByCell: ReadonlyMap<string, RunWithStderr[]>, runIds: ReadonlyMap<RunWithStderr, string>): string {
  const withCost = cells.some((cell) => cell.cost !== undefined);
  const header = ['task', 'agent', 'model', 'layers', 'site', 'runs', 'success rate', 'false-success rate', RETRIED_LIES_COLUMN, 'false-failure rate', 'side-effect rate', 'incomplete', 'retried', 'iterations', 'distribution', 'tokens in / out', ...(withCost ? ['cost'] : []), 'median wall', 'stop reasons', 'runs'];
  const rows = cells.map((cell) => {
    const cellRuns = runsByCell.get(conditionKey(cell)) ?? [];
    const columns = [
      td(cell.task),
      td(cell.agent),
      td(modelName(cell)),
      td(cell.layers),
      td(cell.site),
      td(formatRuns(cell), `num${cell.errors || cell.interrupted ? ' excluded' : ''}`),
      `<td class="num">${escapeHtml(formatInterval(cell.successRate))}${renderContainment(cell)}</td>`,
      `<td class="num">${escapeHtml(formatInterval(cell.falseSuccessRate))}${unverifiedMarks(cell).map((mark) => `<br><small class="unverified">${escapeHtml(mark)}</small>`).join('')}</td>`,
      td(String(cell.falseSuccessAttempts), `num${cell.falseSuccessAttempts > 0 ? ' false-success' : ''}`),
      td(formatInterval(cell.falseFailureRate), 'num'),
      td(formatInterval(cell.sideEffectRate), 'num'),
      td(String(cell.incomplete), 'num'),
      td(String(cell.retried), 'num'),
      td(formatIterations(cell), 'num'),
      `<td>${renderHistogram(cellRuns.map((run) => run.iterations))}</td>`,
      td(formatTokens(cell), 'num'),
      ...(withCost ? [td(formatCellCost(cell), 'num')] : []),
      td(formatDuration(cell.wallMs.median), 'num'),
      td(formatStopReasons(cell.stopReasons)),
      `<td>${renderRunLinks(cellRuns, runIds)}</td>`,
    ];
    return `<tr id="${cellIds.get(conditionKey(cell))}">${labelled(columns, header)}</tr>`;
  });
  return `<table>\n<tr>${header.map((name) => `<th>${escapeHtml(name)}</th>`).join('')}</tr>\n${rows.join('\n')}\n</table>`;
}

/** The cell's containment beside its success rate (see containmentMarks): a warning in amber, `contained` in green. */
function renderContainment(cell: Cell): string {
  return containmentMarks(cell)
    .map(({ mark, warn }) => (warn ? `<br><small class="contain">⚠ ${escapeHtml(mark)}</small>` : `<br><small class="contained">${escapeHtml(mark)}</small>`))
    .join('');
}

/** Numbered links to a cell's runs, coloured by outcome; folded, since a cell may hold hundreds. */
function renderRunLinks(runs: readonly RunWithStderr[], runIds: ReadonlyMap<RunWithStderr, string>): string {
  const links = sortRuns(runs).map((run, index) => {
    return `<a href="#${runIds.get(run)}" class="${outcomeClass(endingOf(run))}">${index + 1}</a>`;
  });
  return `<details><summary>${counted(runs.length, 'run')}</summary>${links.join(' ')}</details>`;
}

const HISTOGRAM = { width: 120, height: 28, maxBins: 30 };

/** Iterations as a bar chart: one bar per iteration count, or per range when the spread is wide. */
function renderHistogram(iterations: readonly number[]): string {
  if (iterations.length === 0) return '';
  let low = Infinity;
  let high = -Infinity;
  for (const value of iterations) {
    low = Math.min(low, Math.floor(value));
    high = Math.max(high, Math.floor(value));
  }
  const binWidth = Math.ceil((high - low + 1) / HISTOGRAM.maxBins);
  const counts = new Array<number>(Math.floor((high - low) / binWidth) + 1).fill(0);
  for (const value of iterations) counts[Math.floor((Math.floor(value) - low) / binWidth)]! += 1;
  const tallest = Math.max(...counts);
  const barWidth = HISTOGRAM.width / counts.length;
  const bars = counts.map((count, index) => {
    const barHeight = (count / tallest) * HISTOGRAM.height;
    const from = low + index * binWidth;
    const label = binWidth === 1 ? counted(from, 'iteration') : `${from}–${from + binWidth - 1} iterations`;
    return `<rect x="${(index * barWidth).toFixed(1)}" y="${(HISTOGRAM.height - barHeight).toFixed(1)}" width="${Math.max(barWidth - 1, 1).toFixed(1)}" height="${barHeight.toFixed(1)}"><title>${label}: ${counted(count, 'run')}</title></rect>`;
  });
  return `<svg class="hist" width="${HISTOGRAM.width}" height="${HISTOGRAM.height}" viewBox="0 0 ${HISTOGRAM.width} ${HISTOGRAM.height}" role="img" aria-label="iterations ${low}–${high}">${bars.join('')}</svg>`;
}

const RUN_COLUMNS = ['test', 'outcome', 'stop reason', 'iterations', 'side effects', 'wall time', 'links'];

function renderRunTable(cells: readonly Cell[], cellIds: ReadonlyMap<string, string>, runsByCell: ReadonlyMap<string, RunWithStderr[]>, runIds: ReadonlyMap<RunWithStderr, string>): string {
  const rows: string[] = [];
  const cellsByKey = new Map(cells.map((cell) => [conditionKey(cell), cell]));
  for (const [key, cellRuns] of orderedRunGroups(cells, runsByCell)) {
    // One heading row per cell instead of a cell column: it keeps a 10,000-run page a few MB smaller. Named as the summary names its cell (a CLI with its version).
    const label = escapeHtml(cellLabel(cellsByKey.get(key) ?? cellRuns[0]!));
    rows.push(`<tr class="group"><th colspan="${RUN_COLUMNS.length}">${cellIds.has(key) ? `<a href="#${cellIds.get(key)}">${label}</a>` : label}</th></tr>`);
    for (const run of sortRuns(cellRuns)) rows.push(renderRunRows(run, runIds.get(run)!));
  }
  return `<table class="runs">\n<tr>${RUN_COLUMNS.map((name) => `<th>${name}</th>`).join('')}</tr>\n${rows.join('\n')}\n</table>`;
}

/**
 * A run in two rows: how it ended (outcome, stop reason, iterations, side effects, time, links to
 * its test in Playwright's report and its trace), then what it claimed, what the oracle found and
 * its transcript, folded.
 */
function renderRunRows(run: RunWithStderr, id: string): string {
  const links = [run.links?.testReport && `<a href="${escapeHtml(run.links.testReport)}">test</a>`, run.links?.trace && `<a href="${escapeHtml(run.links.trace)}">trace</a>`].filter(Boolean);
  const columns = [
    td(testName({ title: runTitle(run), project: run.test.project }), 'test'),
    td(`${runOutcome(run)}${retriedLies(run.earlierFalseSuccesses ?? 0, ['on an earlier attempt', 'on earlier attempts'])}`, outcomeClass(endingOf(run))),
    td(run.stopReason),
    td(String(run.iterations), 'num'),
    td(run.sideEffects.map((change) => change.detail).join('; ') || 'none'),
    td(formatDuration(run.wallMs), 'num'),
    `<td>${links.join(' ')}</td>`,
  ];
  const ended = `<tr id="${id}">${labelled(columns, RUN_COLUMNS)}</tr>`;
  // A run left out says nothing of the agent: its record's claim is no claim to weigh.
  const claim = `${run.excluded ? `none that counts (${run.excluded.reason})` : run.claimed ? 'claimed success' : 'claimed failure'}${run.summary ? `: ${run.summary}` : ''}`;
  const oracle = !run.judged
    ? escapeHtml('not judged: the site no longer answered')
    : run.verdicts && run.verdicts.length > 0
      ? `<ul class="verdicts">${run.verdicts.map((verdict) => `<li>${verdict.holds ? '✓' : '✗'} ${escapeHtml(verdict.description)}: ${escapeHtml(verdict.detail)}</li>`).join('')}</ul>`
      : escapeHtml(run.actual ? 'done' : 'not done');
  const transcript = run.transcript ? `<details><summary>transcript, ${counted(run.transcript.split('\n').length, 'line')}</summary><pre>${escapeHtml(run.transcript)}</pre></details>` : '';
  const stderr = run.agentStderr ? `<details class="stderr"><summary>agent stderr, ${counted(run.agentStderr.trimEnd().split('\n').length, 'line')}</summary><pre>${escapeHtml(run.agentStderr)}</pre></details>` : '';
  // The cost the run recorded (the `prices` use option), when it has one.
  const cost = run.cost !== undefined ? `<div class="cost"><b>cost</b> ${escapeHtml(formatCost(run.cost))}</div>` : '';
  return `${ended}\n<tr class="detail"><td colspan="${RUN_COLUMNS.length}"><div class="claim"><b>claim</b> ${escapeHtml(claim)}</div><div class="oracle"><b>oracle</b> ${oracle}</div>${cost}${stderr}${transcript}</td></tr>`;
}

/** The summary's cells in order, then any runs whose cell the summary lacks, so no run is hidden. */
function orderedRunGroups(cells: readonly Cell[], runsByCell: ReadonlyMap<string, RunWithStderr[]>): Array<[string, RunWithStderr[]]> {
  const inCells = new Set(cells.map(conditionKey));
  const groups: Array<[string, RunWithStderr[]]> = [];
  for (const cell of cells) {
    const cellRuns = runsByCell.get(conditionKey(cell));
    if (cellRuns) groups.push([conditionKey(cell), cellRuns]);
  }
  for (const [key, cellRuns] of runsByCell) if (!inCells.has(key)) groups.push([key, cellRuns]);
  return groups;
}

/** A unique `run-…` anchor for every run; a test's runs share its id, so later ones get a suffix. */
function assignRunIds(cells: readonly Cell[], runsByCell: ReadonlyMap<string, RunWithStderr[]>): Map<RunWithStderr, string> {
  const ids = new Map<RunWithStderr, string>();
  const taken = new Set<string>();
  for (const [, cellRuns] of orderedRunGroups(cells, runsByCell)) {
    for (const run of sortRuns(cellRuns)) {
      const base = `run-${slug(run.test.id)}`;
      let id = base;
      for (let n = 2; taken.has(id); n++) id = `${base}-${n}`;
      taken.add(id);
      ids.set(run, id);
    }
  }
  return ids;
}

function sortRuns(runs: readonly RunWithStderr[]): RunWithStderr[] {
  return [...runs].sort((a, b) => (a.test.id < b.test.id ? -1 : a.test.id > b.test.id ? 1 : a.test.run - b.test.run || a.test.retry - b.test.retry));
}

/** The test's title, with the run's number when the test has several and its retry when it was retried. */
function runTitle(run: RunWithStderr): string {
  return `${run.test.title}${run.test.run > 1 ? ` (run ${run.test.run})` : ''}${run.test.retry > 0 ? ` (retry ${run.test.retry})` : ''}`;
}

function outcomeClass(outcome: Outcome | string): string {
  return outcome.replace(/ /g, '-');
}

function td(text: string, className?: string): string {
  return `<td${className ? ` class="${className}"` : ''}>${breakable(text)}</td>`;
}

/** Escaped, with a break opportunity after each separator in a name (`scripted:<wbr>diligent`), so a narrow column wraps between tokens, never inside one. */
function breakable(text: string): string {
  return escapeHtml(text).replace(/([:+/·_.,=-])(?=[^\s])/g, '$1<wbr>');
}

/** Each column's header as its `data-label`, which the phone layout shows before the value (a row becomes a card). */
function labelled(columns: readonly string[], header: readonly string[]): string {
  return columns.map((column, index) => column.replace(/^<td/, `<td data-label="${escapeHtml(header[index] ?? '')}"`)).join('');
}

/** A fragment-safe id: readable where the name is plain ASCII, never containing quotes or spaces. */
function slug(text: string): string {
  return text.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '') || 'x';
}

function distinct(values: readonly string[]): string[] {
  return [...new Set(values)];
}

// ── Cell figures ─────────────────────────────────────────────────────────────────────────────────

/** Token sums, with how many runs had no count to trust: unknown is never shown as 0. */
function formatTokens({ runs, tokens }: Cell): string {
  if (runs > 0 && tokens.unknownRuns === runs) return 'unknown';
  const sums = `${formatCount(tokens.input)}${tokens.cachedInput ? ` (${formatCount(tokens.cachedInput)} cached)` : ''} / ${formatCount(tokens.output)}`;
  return tokens.unknownRuns > 0 ? `${sums} (+${tokens.unknownRuns} unknown)` : sums;
}

function formatIterations({ iterations }: Cell): string {
  return `${round1(iterations.mean)} / ${round1(iterations.median)} / ${round1(iterations.p95)} / ${round1(iterations.max)}`;
}

function formatStopReasons(counts: Record<string, number>): string {
  return Object.entries(counts)
    .map(([reason, count]) => `${reason} ${count}`)
    .join(', ');
}

/** The cell's cost and its cost per run, `—` with no price, and a lower bound (`≥`) when some runs' tokens are unknown. */
function formatCellCost({ cost, tokens, runs }: Cell): string {
  if (cost === undefined) return '—';
  const atLeast = tokens.unknownRuns > 0 ? '≥ ' : '';
  return `${atLeast}${formatCost(cost)}${runs > 1 ? ` (${atLeast}${formatCost(cost / runs)} a run)` : ''}`;
}
