import { escapeHtml } from '../text.ts';
import { modelName } from './cells.ts';
import { formatInterval } from './format.ts';
import type { CostSuccess, Summary } from './types.ts';

/** The cost–success view of the reports: per task set, each configuration's cost per run against its success rate, the Pareto front marked. */

export function formatCost(usd: number): string {
  return `$${usd.toFixed(usd < 1 ? 4 : 2)}`;
}

const NOTE =
  'Each point is a configuration (agent · model · layers) over one set of tasks on one site: its cost per run (USD) against its success rate, with the 95% interval. The front (filled, joined) are the configurations no other beats on both: none costs less and succeeds as often. A front point whose interval overlaps a cheaper one’s is not shown to be better. A configuration that cost nothing (an offline double, a model priced at 0) is plotted at $0 as “no cost” and is off the front: at $0 it would beat every priced one whatever they did.';

/** A configuration's label: `agent · model · layers`. */
function pointLabel({ agent, model, layers }: CostSuccess['points'][number]): string {
  return `${agent} · ${modelName({ model })} · ${layers}`;
}

function setTitle({ site, tasks }: CostSuccess): string {
  return `${tasks.length === 1 ? tasks[0] : `${tasks.length} tasks`} · ${site}`;
}

function pointLine(point: CostSuccess['points'][number], index: number): string {
  const cost = point.costPerRun === 0 ? 'no cost (off the front)' : `${point.lowerBound ? '≥ ' : ''}${formatCost(point.costPerRun)} a run`;
  return `${index + 1}. ${pointLabel(point)}: ${cost}, success ${formatInterval(point.successRate)}, ${point.runs} runs${point.front ? ', on the front' : ''}`;
}

/** The section in summary.md: plain lines, no markup beyond Markdown's own. */
export function markdownCostSuccess(summary: Summary): string[] {
  const sets = summary.costSuccess ?? [];
  if (sets.length === 0) return [];
  return ['', '## Cost against success', '', ...sets.flatMap((set) => [`${setTitle(set)} (${set.tasks.join(', ')}):`, '', ...set.points.map((point, index) => pointLine(point, index)), ''])];
}

/** The section in index.html: a chart per task set, inline SVG, and its points in words. */
export function renderCostSuccess(summary: Summary): string {
  const sets = summary.costSuccess ?? [];
  if (sets.length === 0) return '';
  const charts = sets.map((set) => `<h3>${escapeHtml(setTitle(set))}</h3>
<p class="note">${escapeHtml(set.tasks.join(', '))}</p>
${costChart(set)}
<ol class="points">${set.points.map((point, index) => `<li>${escapeHtml(pointLine(point, index).replace(/^\d+\. /, ''))}</li>`).join('')}</ol>`);
  return `<section id="cost-success">
<h2>Cost against success</h2>
<p class="note">${escapeHtml(NOTE)}</p>
${charts.join('\n')}
</section>
`;
}

const WIDTH = 520;
const HEIGHT = 300;
const MARGIN = { left: 48, right: 16, top: 12, bottom: 36 };

/** One task set's chart: x = cost per run from 0, y = success rate 0–100%, interval bars, points numbered as the list under it. */
export function costChart(set: CostSuccess): string {
  const most = Math.max(...set.points.map((point) => point.costPerRun), 0);
  const xMax = most > 0 ? most * 1.1 : 1;
  const plotW = WIDTH - MARGIN.left - MARGIN.right;
  const plotH = HEIGHT - MARGIN.top - MARGIN.bottom;
  const x = (usd: number) => MARGIN.left + (usd / xMax) * plotW;
  const y = (rate: number) => MARGIN.top + (1 - rate) * plotH;
  const f = (n: number) => n.toFixed(1);
  const grid = [0, 0.25, 0.5, 0.75, 1].map(
    (rate) => `<line x1="${MARGIN.left}" x2="${WIDTH - MARGIN.right}" y1="${f(y(rate))}" y2="${f(y(rate))}" stroke="#e3e3e3"/><text x="${MARGIN.left - 6}" y="${f(y(rate) + 4)}" text-anchor="end">${rate * 100}%</text>`,
  );
  const ticks = [0, 0.5, 1].map((share) => `<text x="${f(x(xMax * share))}" y="${HEIGHT - MARGIN.bottom + 16}" text-anchor="middle">${escapeHtml(formatCost(xMax * share))}</text>`);
  const front = set.points.filter((point) => point.front).sort((a, b) => a.costPerRun - b.costPerRun);
  const frontLine = front.length > 1 ? `<polyline fill="none" stroke="#1b7a2b" stroke-width="1.5" points="${front.map((point) => `${f(x(point.costPerRun))},${f(y(point.successRate.value))}`).join(' ')}"/>` : '';
  const points = set.points.map((point, index) => {
    const cx = f(x(point.costPerRun));
    const title = `<title>${escapeHtml(pointLine(point, index))}</title>`;
    return `<g class="point${point.front ? ' front' : ''}">${title}<line x1="${cx}" x2="${cx}" y1="${f(y(point.successRate.low))}" y2="${f(y(point.successRate.high))}" stroke="#888"/><circle cx="${cx}" cy="${f(y(point.successRate.value))}" r="4.5" fill="${point.front ? '#1b7a2b' : '#fff'}" stroke="${point.front ? '#1b7a2b' : '#555'}"/></g>`;
  });
  const labels = placeLabels(set.points.map((point) => ({ x: x(point.costPerRun), y: y(point.successRate.value) }))).map(
    ({ text, at, from, x: lx, y: ly, anchor }) => {
      const title = `<title>${escapeHtml(from.map((index) => pointLine(set.points[index]!, index)).join('\n'))}</title>`;
      // Moved off its point's line: a leader joins them.
      const leader = Math.abs(ly + LABEL.dy - at.y) > 1 ? `<line x1="${f(at.x)}" y1="${f(at.y)}" x2="${f(lx)}" y2="${f(ly - LABEL.ascent / 3)}" stroke="#bbb"/>` : '';
      return `<g class="label">${title}${leader}<text x="${f(lx)}" y="${f(ly)}" text-anchor="${anchor}">${text}</text></g>`;
    },
  );
  return `<svg class="cost-chart" role="img" aria-label="cost per run against success rate, ${escapeHtml(setTitle(set))}" viewBox="0 0 ${WIDTH} ${HEIGHT}" width="${WIDTH}" height="${HEIGHT}" font-size="11" font-family="system-ui,sans-serif">
${grid.join('')}
<line x1="${MARGIN.left}" x2="${WIDTH - MARGIN.right}" y1="${f(y(0))}" y2="${f(y(0))}" stroke="#999"/>${ticks.join('')}
<text x="${MARGIN.left + plotW / 2}" y="${HEIGHT - 4}" text-anchor="middle">cost per run (USD)</text>
${frontLine}${points.join('')}${labels.join('')}
</svg>`;
}

/**
 * A point's number label at font size 11: a box wider and taller than the text renders (7 px a
 * character, the font's ascent and descent about the baseline), its baseline `dx` right and `dy`
 * up of its point.
 */
const LABEL = { charWidth: 7, ascent: 12, descent: 4, dx: 7, dy: 5 };
const LINE = LABEL.ascent + LABEL.descent;

interface Box {
  left: number;
  top: number;
  right: number;
  bottom: number;
}

const overlaps = (a: Box, b: Box) => a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;

/**
 * Where each point's number goes, so no two labels overlap: points drawn at one spot (doubles all
 * at $0 with one success rate) share one label, `1, 2, 3`; a label that would overlap one placed
 * before it moves up or down a line at a time, then to the point's left, staying in the chart (a
 * leader line then joins it to its point).
 */
function placeLabels(points: ReadonlyArray<{ x: number; y: number }>): Array<{ text: string; at: { x: number; y: number }; from: number[]; x: number; y: number; anchor: 'start' | 'end' }> {
  const spots = new Map<string, { at: { x: number; y: number }; from: number[] }>();
  points.forEach((point, index) => {
    const key = `${point.x.toFixed(1)},${point.y.toFixed(1)}`;
    const spot = spots.get(key) ?? { at: point, from: [] };
    spot.from.push(index);
    spots.set(key, spot);
  });
  const placed: Box[] = [];
  return [...spots.values()].map(({ at, from }) => {
    const text = from.map((index) => index + 1).join(', ');
    const width = text.length * LABEL.charWidth;
    const boxAt = (left: number, baseline: number): Box => ({ left, top: baseline - LABEL.ascent, right: left + width, bottom: baseline + LABEL.descent });
    const inChart = (box: Box) => box.left >= 0 && box.right <= WIDTH && box.top >= 0 && box.bottom <= HEIGHT - MARGIN.bottom;
    const lines = Math.ceil(HEIGHT / LINE);
    const candidates = [at.x + LABEL.dx, at.x - LABEL.dx - width].flatMap((left) => Array.from({ length: 2 * lines + 1 }, (_, step) => boxAt(left, at.y - LABEL.dy + (step % 2 === 0 ? 1 : -1) * Math.ceil(step / 2) * LINE)));
    const box = candidates.find((candidate) => inChart(candidate) && !placed.some((other) => overlaps(candidate, other))) ?? candidates[0]!;
    placed.push(box);
    // Left of its point, the text ends at the box's right edge, next to the point, whatever its rendered width.
    const leftOfPoint = box.left < at.x;
    return { text, at, from, x: leftOfPoint ? box.right : box.left, y: box.bottom - LABEL.descent, anchor: leftOfPoint ? 'end' : 'start' };
  });
}
