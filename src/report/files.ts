import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { cellLabel, conditionKey, groupByCell } from './summarize.ts';
import type { Cell, Interval, ReportedRun, Summary } from './types.ts';
import { escapeHtml, writeFileAtomic } from '../text.ts';

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
export async function writeSummaryFiles(dir: string, summary: Summary, runs: readonly ReportedRun[]): Promise<SummaryFiles> {
  await mkdir(dir, { recursive: true });
  const files = { json: join(dir, 'summary.json'), markdown: join(dir, 'summary.md'), html: join(dir, 'index.html') };
  writeFileAtomic(files.json, `${JSON.stringify(summary, null, 2)}\n`);
  writeFileAtomic(files.markdown, renderMarkdown(summary));
  writeFileAtomic(files.html, renderHtml(summary, runs));
  return files;
}

// ── Markdown ─────────────────────────────────────────────────────────────────────────────────────

/** The summary as a Markdown table, one row per cell: for a CI step summary or a pull request. */
export function renderMarkdown(summary: Summary): string {
  const withCost = summary.cells.some((cell) => cell.cost !== undefined);
  const header = ['task', 'model', 'layers', 'site', 'runs', 'success rate', 'false-success rate', 'false-failure rate', 'side-effect rate', 'incomplete', 'retried', 'unsupported claims', 'iterations (mean / median / p95 / max)', 'tokens in / out', ...(withCost ? ['cost'] : []), 'median wall time', 'stop reasons'];
  const rows = summary.cells.map((cell) => [
    cell.task,
    cell.model,
    cell.layers,
    cell.site,
    String(cell.runs),
    formatInterval(cell.successRate),
    formatInterval(cell.falseSuccessRate),
    formatInterval(cell.falseFailureRate),
    formatInterval(cell.sideEffectRate),
    String(cell.incomplete),
    String(cell.retried),
    String(cell.unsupportedClaims),
    formatIterations(cell),
    formatTokens(cell),
    ...(withCost ? [formatCellCost(cell)] : []),
    formatDuration(cell.wallMs.median),
    formatStopReasons(cell.stopReasons),
  ]);
  return [
    '# harness-eval summary',
    '',
    totalsLine(summary),
    ...missingLines(summary).map((line) => `- ${escapeMarkdownCell(line)}`),
    '',
    markdownRow(header),
    markdownRow(header.map(() => '---')),
    ...rows.map(markdownRow),
    '',
  ].join('\n');
}

function markdownRow(cells: readonly string[]): string {
  return `| ${cells.map(escapeMarkdownCell).join(' | ')} |`;
}

/** Keeps names literal in a table cell: `|` would split the cell, `<x>` would vanish as a tag, `*` would emphasise. */
function escapeMarkdownCell(text: string): string {
  return text
    .replace(/[\\|*`]/g, (char) => `\\${char}`)
    .replace(/[&<>]/g, (char) => escapeHtml(char))
    .replace(/[\r\n]+/g, ' ');
}

// ── HTML ─────────────────────────────────────────────────────────────────────────────────────────

/**
 * The report as one self-contained page: inline CSS and SVG, no scripts, no external resources, so
 * it can be opened from a CI artifact with no network. Heatmaps per task × site (rows = model,
 * columns = layer stack) link to the cells' rows, which link to their runs.
 */
export function renderHtml(summary: Summary, runs: readonly ReportedRun[]): string {
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
<p>${escapeHtml(totalsLine(summary))}</p>
${renderMissing(summary)}<section id="heatmaps">
<h2>Heatmaps</h2>
${renderHeatmaps(summary.cells, cellIds)}
</section>
<section id="cells">
<h2>Cells</h2>
${renderCellTable(summary.cells, cellIds, runsByCell, runIds)}
</section>
<section id="runs">
<h2>Runs</h2>
${renderRunTable(summary.cells, cellIds, runsByCell, runIds)}
</section>
</body>
</html>
`;
}

const STYLE = `
body{font:14px/1.4 system-ui,sans-serif;margin:1.5rem;color:#1a1a1a}
table{border-collapse:collapse;margin:.5rem 0 1.5rem}
th,td{border:1px solid #ccc;padding:.25rem .5rem;text-align:left;vertical-align:top}
th{background:#f3f3f3}
td.num{text-align:right;font-variant-numeric:tabular-nums}
.pair{display:flex;flex-wrap:wrap;gap:2rem}
.heat td{text-align:center;min-width:5.5rem}
.heat a{display:block;color:inherit;text-decoration:none}
.heat small{color:#444}
.hist rect{fill:#4a6fa5}
tr:target{outline:2px solid #4a6fa5}
.success{color:#1b7a2b}.false-success{color:#b3261e;font-weight:600}.truthful-failure{color:#555}.false-failure{color:#8a5a00}
details a{margin-right:.3rem}
`.trim();

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
${renderHeatmap(group, cellIds, 'success rate', (cell) => cell.successRate, successColour)}
${renderHeatmap(group, cellIds, 'false-success rate', (cell) => cell.falseSuccessRate, (rate) => successColour(1 - rate))}
${renderHeatmap(group, cellIds, 'false-failure rate', (cell) => cell.falseFailureRate, (rate) => successColour(1 - rate))}
${renderHeatmap(group, cellIds, 'side-effect rate', (cell) => cell.sideEffectRate, (rate) => successColour(1 - rate))}
</div>`;
    })
    .join('\n');
}

function renderHeatmap(cells: readonly Cell[], cellIds: ReadonlyMap<string, string>, title: string, rateOf: (cell: Cell) => Interval, colourOf: (rate: number) => string): string {
  const models = distinct(cells.map((cell) => cell.model));
  const stacks = distinct(cells.map((cell) => cell.layers));
  const byPosition = new Map(cells.map((cell) => [`${cell.model}\u0000${cell.layers}`, cell]));
  const header = `<tr><th>model \\ layers</th>${stacks.map((stack) => `<th>${escapeHtml(stack)}</th>`).join('')}</tr>`;
  const rows = models.map((model) => {
    const heatCells = stacks.map((stack) => {
      const cell = byPosition.get(`${model}\u0000${stack}`);
      if (!cell) return '<td>—</td>';
      const rate = rateOf(cell);
      const tooltip = `${title} ${formatInterval(rate)}, n = ${cell.runs}`;
      return `<td style="background:${colourOf(rate.value)}"><a href="#${cellIds.get(conditionKey(cell))}" title="${escapeHtml(tooltip)}">${formatPercent(rate.value)}<br><small>n=${cell.runs}</small></a></td>`;
    });
    return `<tr><th>${escapeHtml(model)}</th>${heatCells.join('')}</tr>`;
  });
  return `<figure><figcaption>${escapeHtml(title)}</figcaption><table class="heat">${header}${rows.join('')}</table></figure>`;
}

/** Red (0) through yellow to green (1); the lightness keeps dark text readable on every hue. */
function successColour(rate: number): string {
  return `hsl(${Math.round(rate * 120)} 65% 78%)`;
}

function renderCellTable(cells: readonly Cell[], cellIds: ReadonlyMap<string, string>, runsByCell: ReadonlyMap<string, ReportedRun[]>, runIds: ReadonlyMap<ReportedRun, string>): string {
  const withCost = cells.some((cell) => cell.cost !== undefined);
  const header = ['task', 'model', 'layers', 'site', 'runs', 'success rate', 'false-success rate', 'false-failure rate', 'side-effect rate', 'incomplete', 'retried', 'iterations', 'distribution', 'tokens in / out', ...(withCost ? ['cost'] : []), 'median wall', 'stop reasons', 'runs'];
  const rows = cells.map((cell) => {
    const cellRuns = runsByCell.get(conditionKey(cell)) ?? [];
    const columns = [
      td(cell.task),
      td(cell.model),
      td(cell.layers),
      td(cell.site),
      td(String(cell.runs), 'num'),
      td(formatInterval(cell.successRate), 'num'),
      td(formatInterval(cell.falseSuccessRate), 'num'),
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
    return `<tr id="${cellIds.get(conditionKey(cell))}">${columns.join('')}</tr>`;
  });
  return `<table>\n<tr>${header.map((name) => `<th>${escapeHtml(name)}</th>`).join('')}</tr>\n${rows.join('\n')}\n</table>`;
}

/** Numbered links to a cell's runs, coloured by outcome; folded, since a cell may hold hundreds. */
function renderRunLinks(runs: readonly ReportedRun[], runIds: ReadonlyMap<ReportedRun, string>): string {
  const links = sortRuns(runs).map((run, index) => {
    return `<a href="#${runIds.get(run)}" class="${outcomeClass(outcomeOf(run))}">${index + 1}</a>`;
  });
  return `<details><summary>${runs.length} run${runs.length === 1 ? '' : 's'}</summary>${links.join(' ')}</details>`;
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
    const label = binWidth === 1 ? `${from}` : `${from}–${from + binWidth - 1}`;
    return `<rect x="${(index * barWidth).toFixed(1)}" y="${(HISTOGRAM.height - barHeight).toFixed(1)}" width="${Math.max(barWidth - 1, 1).toFixed(1)}" height="${barHeight.toFixed(1)}"><title>${label} iterations: ${count}</title></rect>`;
  });
  return `<svg class="hist" width="${HISTOGRAM.width}" height="${HISTOGRAM.height}" viewBox="0 0 ${HISTOGRAM.width} ${HISTOGRAM.height}" role="img" aria-label="iterations ${low}–${high}">${bars.join('')}</svg>`;
}

function renderRunTable(cells: readonly Cell[], cellIds: ReadonlyMap<string, string>, runsByCell: ReadonlyMap<string, ReportedRun[]>, runIds: ReadonlyMap<ReportedRun, string>): string {
  const header = ['test', 'project', 'outcome', 'iterations', 'stop reason', 'side effects', 'wall time'];
  const rows: string[] = [];
  for (const [key, cellRuns] of orderedRunGroups(cells, runsByCell)) {
    // One heading row per cell instead of a cell column: it keeps a 10,000-run page a few MB smaller.
    const label = escapeHtml(cellLabel(cellRuns[0]!));
    rows.push(`<tr><th colspan="${header.length}">${cellIds.has(key) ? `<a href="#${cellIds.get(key)}">${label}</a>` : label}</th></tr>`);
    for (const run of sortRuns(cellRuns)) {
      const outcome = outcomeOf(run);
      rows.push(
        `<tr id="${runIds.get(run)}">${td(runTitle(run))}${td(run.test.project)}${td(runOutcome(run), outcomeClass(outcome))}${td(String(run.iterations), 'num')}${td(run.stopReason)}${td(run.sideEffects.map((change) => change.detail).join('; ') || 'none')}${td(formatDuration(run.wallMs), 'num')}</tr>`,
      );
    }
  }
  return `<table>\n<tr>${header.map((name) => `<th>${name}</th>`).join('')}</tr>\n${rows.join('\n')}\n</table>`;
}

/** The summary's cells in order, then any runs whose cell the summary lacks, so no run is hidden. */
function orderedRunGroups(cells: readonly Cell[], runsByCell: ReadonlyMap<string, ReportedRun[]>): Array<[string, ReportedRun[]]> {
  const inCells = new Set(cells.map(conditionKey));
  const groups: Array<[string, ReportedRun[]]> = [];
  for (const cell of cells) {
    const cellRuns = runsByCell.get(conditionKey(cell));
    if (cellRuns) groups.push([conditionKey(cell), cellRuns]);
  }
  for (const [key, cellRuns] of runsByCell) if (!inCells.has(key)) groups.push([key, cellRuns]);
  return groups;
}

/** A unique `run-…` anchor for every run; a test's runs share its id, so later ones get a suffix. */
function assignRunIds(cells: readonly Cell[], runsByCell: ReadonlyMap<string, ReportedRun[]>): Map<ReportedRun, string> {
  const ids = new Map<ReportedRun, string>();
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

function sortRuns(runs: readonly ReportedRun[]): ReportedRun[] {
  return [...runs].sort((a, b) => (a.test.id < b.test.id ? -1 : a.test.id > b.test.id ? 1 : a.test.run - b.test.run || a.test.retry - b.test.retry));
}

/** The test's title, with the run's number when the test has several and its retry when it was retried. */
function runTitle(run: ReportedRun): string {
  return `${run.test.title}${run.test.run > 1 ? ` (run ${run.test.run})` : ''}${run.test.retry > 0 ? ` (retry ${run.test.retry})` : ''}`;
}

/** The outcome, and whether the run was cut short or could not be judged. */
function runOutcome(run: ReportedRun): string {
  const notes = [...(run.incomplete ? ['incomplete'] : []), ...(run.judged ? [] : ['unjudged'])];
  return `${outcomeOf(run)}${notes.length > 0 ? ` (${notes.join(', ')})` : ''}`;
}

function renderMissing(summary: Summary): string {
  const lines = missingLines(summary);
  return lines.length === 0 ? '' : `<ul id="missing">${lines.map((line) => `<li>${escapeHtml(line)}</li>`).join('')}</ul>\n`;
}

export type Outcome = 'success' | 'false success' | 'truthful failure' | 'false failure';

/** What claimed and actual together say about a run. */
export function outcomeOf(run: Pick<ReportedRun, 'claimed' | 'actual'>): Outcome {
  if (run.claimed) return run.actual ? 'success' : 'false success';
  return run.actual ? 'false failure' : 'truthful failure';
}

function outcomeClass(outcome: Outcome): string {
  return outcome.replace(/ /g, '-');
}

function td(text: string, className?: string): string {
  return `<td${className ? ` class="${className}"` : ''}>${escapeHtml(text)}</td>`;
}


/** A fragment-safe id: readable where the name is plain ASCII, never containing quotes or spaces. */
function slug(text: string): string {
  return text.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '') || 'x';
}

function distinct(values: readonly string[]): string[] {
  return [...new Set(values)];
}

// ── Shared formatting ────────────────────────────────────────────────────────────────────────────

function totalsLine(summary: Summary): string {
  const { runs, successes, falseSuccesses, falseFailures, sideEffectRuns, incomplete } = summary.totals;
  const share = (count: number) => (runs === 0 ? '' : ` (${formatPercent(count / runs)})`);
  const state = summary.complete ? 'complete' : `incomplete: ${summary.missing.length > 0 ? `${summary.missing.length} planned tests recorded no run` : 'the run had not finished'}`;
  return [
    `${formatCount(runs)} runs of ${formatCount(summary.planned)} planned in ${summary.cells.length} cells`,
    `${formatCount(successes)} successes${share(successes)}`,
    `${formatCount(falseSuccesses)} false successes${share(falseSuccesses)}`,
    `${formatCount(falseFailures)} false failures${share(falseFailures)}`,
    `${formatCount(sideEffectRuns)} with side effects${share(sideEffectRuns)}`,
    `${formatCount(incomplete)} cut short`,
    state,
    `generated ${summary.generatedAt}`,
  ].join(' · ');
}

/** One line per test that planned a run and recorded none. */
function missingLines(summary: Summary): string[] {
  return summary.missing.map((test) => `missing: ${test.title} (${test.project})`);
}

/** Token sums, with how many runs had no count to trust: unknown is never shown as 0. */
function formatTokens({ runs, tokens }: Cell): string {
  if (runs > 0 && tokens.unknownRuns === runs) return 'unknown';
  const sums = `${formatCount(tokens.input)} / ${formatCount(tokens.output)}`;
  return tokens.unknownRuns > 0 ? `${sums} (+${tokens.unknownRuns} unknown)` : sums;
}

/** `60% (31–83%)`: the rate with its 95% Wilson interval. */
export function formatInterval({ value, low, high }: Interval): string {
  return `${formatPercent(value)} (${Math.round(low * 100)}–${formatPercent(high)})`;
}

function formatPercent(rate: number): string {
  return `${Math.round(rate * 100)}%`;
}

function formatIterations({ iterations }: Cell): string {
  return `${round1(iterations.mean)} / ${round1(iterations.median)} / ${round1(iterations.p95)} / ${round1(iterations.max)}`;
}

function formatStopReasons(counts: Record<string, number>): string {
  return Object.entries(counts)
    .map(([reason, count]) => `${reason} ${count}`)
    .join(', ');
}

function formatCount(count: number): string {
  return count.toLocaleString('en-US');
}

/** The cell's cost, `—` with no price, and a lower bound (`≥`) when some runs' tokens are unknown. */
function formatCellCost({ cost, tokens }: Cell): string {
  if (cost === undefined) return '—';
  return `${tokens.unknownRuns > 0 ? '≥ ' : ''}${formatCost(cost)}`;
}

function formatCost(usd: number): string {
  return `$${usd.toFixed(usd < 1 ? 4 : 2)}`;
}

function formatDuration(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${round1(ms / 1000)} s`;
}

function round1(x: number): string {
  return String(Math.round(x * 10) / 10);
}

