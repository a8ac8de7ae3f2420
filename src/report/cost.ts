import { compareStrings } from '../text.ts';
import { modelName } from './cells.ts';
import { wilson } from './statistics.ts';
import type { Cell, CostSuccess, Price, PriceTable } from './types.ts';

/** The model id a run is priced by: its condition's (a cell may name its model otherwise, `mini-t0`), else its name. */
export function pricedModel(run: { model: string; condition: { model: unknown } }): string {
  const { model } = run.condition;
  return typeof model === 'object' && model !== null && typeof (model as { id?: unknown }).id === 'string' ? (model as { id: string }).id : run.model;
}

/** The price of a model id in a table, when it is listed. */
export function priceOf(prices: PriceTable | undefined, model: string): Price | undefined {
  return prices && Object.hasOwn(prices, model) ? prices[model] : undefined;
}

/**
 * USD for a run's tokens: its cached input at the cached price (the input price when none is
 * given), the rest of its input and its output at theirs. An unknown count adds nothing, so a run
 * with one is a lower bound.
 */
export function tokensCost(tokens: { input: number | null; output: number | null; cachedInput?: number }, price: Price): number {
  const cached = Math.min(tokens.cachedInput ?? 0, tokens.input ?? 0);
  const uncached = (tokens.input ?? 0) - cached;
  return (uncached * price.input + cached * (price.cachedInput ?? price.input) + (tokens.output ?? 0) * price.output) / 1e6;
}

/** A configuration: everything that names a cell but its task. */
const configuration = ({ agent, model, layers }: Pick<Cell, 'agent' | 'model' | 'layers'>) => `${agent} · ${modelName({ model })} · ${layers}`;

/**
 * Cost against success, per task set: the configurations (agent · model · layers) that ran the
 * same tasks on the same site, each with its cost per run and its success rate over those tasks
 * (pooled, with its Wilson interval), and which of them are on the Pareto front (no other costs no
 * more and succeeds no less, and better in one; see markFront for those that cost nothing).
 * Configurations that ran other tasks are another set: their rates are not comparable. Cells
 * without a cost are left out; a set with none is too.
 */
export function costSuccess(cells: readonly Cell[]): CostSuccess[] {
  const configurations = new Map<string, Cell[]>();
  for (const cell of cells) {
    const key = `${cell.site}\u0000${configuration(cell)}`;
    configurations.set(key, [...(configurations.get(key) ?? []), cell]);
  }
  const sets = new Map<string, CostSuccess>();
  for (const group of configurations.values()) {
    if (group.some((cell) => cell.cost === undefined)) continue;
    const tasks = [...new Set(group.map((cell) => cell.task))].sort(compareStrings);
    const site = group[0]!.site;
    const runs = group.reduce((sum, cell) => sum + cell.runs, 0);
    const successes = group.reduce((sum, cell) => sum + cell.successes, 0);
    const cost = group.reduce((sum, cell) => sum + cell.cost!, 0);
    const key = `${site}\u0000${tasks.join('\u0000')}`;
    const set = sets.get(key) ?? { site, tasks, points: [] };
    const { agent, model, layers } = group[0]!;
    set.points.push({ agent, model, layers, runs, costPerRun: runs === 0 ? 0 : cost / runs, lowerBound: group.some((cell) => cell.tokens.unknownRuns > 0), successRate: wilson(successes, runs), front: false });
    sets.set(key, set);
  }
  return [...sets.values()]
    .map((set) => ({ ...set, points: markFront(set.points).sort((a, b) => a.costPerRun - b.costPerRun || b.successRate.value - a.successRate.value || compareStrings(configuration(a), configuration(b))) }))
    .sort((a, b) => compareStrings(a.site, b.site) || compareStrings(a.tasks.join(' '), b.tasks.join(' ')));
}

/**
 * The Pareto front among the configurations that cost something. One that cost nothing (an offline
 * double, a model priced at 0, tokens all unknown) is off it and beats none: at $0 it would
 * dominate every priced configuration whatever they did, and the front would say nothing.
 */
function markFront(points: CostSuccess['points']): CostSuccess['points'] {
  const priced = points.filter((point) => point.costPerRun > 0);
  const dominated = (p: CostSuccess['points'][number]) =>
    priced.some((q) => q !== p && q.costPerRun <= p.costPerRun && q.successRate.value >= p.successRate.value && (q.costPerRun < p.costPerRun || q.successRate.value > p.successRate.value));
  return points.map((point) => ({ ...point, front: point.costPerRun > 0 && !dominated(point) }));
}
