import { BUILT_IN_AGENT } from '../core/run.ts';
import { excludesZero, newcombe, trialsToDetect } from './statistics.ts';
import { canonicalJson, compareStrings } from '../text.ts';
import { compareCells, modelName } from './cells.ts';
import type { Cell, Interval, LayerEffect } from './types.ts';

/**
 * What each layer buys: for every two cells of one task, agent, model and site (equal as data, not only by
 * name) whose layer lists differ by exactly one layer with its options, the change in the success,
 * false-success and false-failure rates that adding it made, with 95% Newcombe intervals. Where
 * the nearest stacks differ by several layers (natural stacks: bare → verified → verified+login),
 * the change from each stack to the next that adds to it is an `estimate`: the added layers'
 * effect together, in that order, not each one's. Cells without a layer list in their condition
 * (a version 1 summary) take no part. `trials`: whether to find, for each rate the trials leave
 * undecided, how many per cell would decide it.
 */
export function layerEffects(cells: readonly Cell[], trials: boolean): LayerEffect[] {
  const groups = new Map<string, Array<{ cell: Cell; layers: string[] }>>();
  for (const cell of cells) {
    const layers = cell.condition?.layers;
    if (!Array.isArray(layers)) continue;
    // The agent too: another agent's cell (no layers of ours) is no stack of the built-in harness.
    const key = `${cell.task}\u0000${canonicalJson(cell.condition!.agent ?? null)}\u0000${canonicalJson(cell.condition!.model ?? null)}\u0000${canonicalJson(cell.condition!.site ?? null)}`;
    groups.set(key, [...(groups.get(key) ?? []), { cell, layers: layers.map((layer) => canonicalJson(layer)) }]);
  }
  const effects: LayerEffect[] = [];
  for (const group of groups.values()) {
    for (const without of group) {
      for (const withIt of group) {
        const added = addedLayers(without.layers, withIt.layers);
        if (added === undefined || added.length === 0) continue;
        const layers = added.map((layer) => layerOf(JSON.parse(layer) as unknown));
        if (layers.length === 1) effects.push(effect(layers[0]!, without.cell, withIt.cell, trials));
        // Only to the next stack: an estimate across one in between would count that one's layers twice.
        else if (!group.some((between) => between !== without && between !== withIt && addedLayers(without.layers, between.layers)?.length && addedLayers(between.layers, withIt.layers)?.length)) {
          effects.push({ ...effect({ layer: layers.map(layerWithOptions).join(' + ') }, without.cell, withIt.cell, trials), estimate: true });
        }
      }
    }
  }
  return effects.sort((a, b) => Number(a.estimate ?? false) - Number(b.estimate ?? false) || compareStrings(a.layer, b.layer) || compareStrings(canonicalJson(a.options ?? {}), canonicalJson(b.options ?? {})) || compareStrings(a.model, b.model) || compareCells({ ...a, agent: BUILT_IN_AGENT, layers: a.without }, { ...b, agent: BUILT_IN_AGENT, layers: b.without }));
}

/** The entries `longer` has beyond `shorter` when `shorter` is `longer` with some left out, in order; undefined otherwise. */
function addedLayers(shorter: readonly string[], longer: readonly string[]): string[] | undefined {
  if (longer.length < shorter.length) return undefined;
  const added: string[] = [];
  let next = 0;
  for (const layer of longer) {
    if (next < shorter.length && layer === shorter[next]) next++;
    else added.push(layer);
  }
  return next === shorter.length ? added : undefined;
}

/** `login`, or `login {"maxLogins":3}`: a layer with other options is another layer. */
export function layerWithOptions(effect: Pick<LayerEffect, 'layer' | 'options'>): string {
  const words = effect.options ? optionWords(effect.options) : '';
  return words ? `${effect.layer} (${words})` : effect.layer;
}

/** Options in words, as a person names them: `attempts 3, compaction half, strict` (a flag set by its name alone, one unset left out). */
export function optionWords(options: Record<string, unknown>): string {
  return Object.entries(options)
    .flatMap(([key, value]) => (value === true ? [key] : value === false || value === undefined || value === null ? [] : [`${key} ${typeof value === 'string' || typeof value === 'number' ? value : canonicalJson(value)}`]))
    .join(', ');
}

/** The layer's name and options, however the condition wrote it (a name, `[name, options]`, `{ name, options }`). */
function layerOf(layer: unknown): Pick<LayerEffect, 'layer' | 'options'> {
  if (typeof layer === 'string') return { layer };
  if (Array.isArray(layer)) return layerOf({ name: layer[0], options: layer[1] });
  const { name, options } = (layer ?? {}) as { name?: unknown; options?: unknown };
  if (typeof name !== 'string') return { layer: canonicalJson(layer) };
  const given = typeof options === 'object' && options !== null && Object.keys(options).length > 0;
  return given ? { layer: name, options: options as Record<string, unknown> } : { layer: name };
}

/** The events each compared rate counts. */
const COUNTS = { successRate: (cell: Cell) => cell.successes, falseSuccessRate: (cell: Cell) => cell.falseSuccesses, falseFailureRate: (cell: Cell) => cell.falseFailures };

/** The rates an effect compares, in the tables' order. */
export const ablatedRates = Object.keys(COUNTS) as Array<keyof typeof COUNTS>;

function effect(layer: Pick<LayerEffect, 'layer' | 'options'>, without: Cell, withIt: Cell, trials: boolean): LayerEffect {
  const differences = Object.fromEntries(ablatedRates.map((rate) => [rate, newcombe(COUNTS[rate](withIt), withIt.runs, COUNTS[rate](without), without.runs)])) as Record<keyof typeof COUNTS, Interval>;
  // What the trials leave undecided, and how many per cell would decide it at the rates seen.
  const trialsToTell = Object.fromEntries(
    ablatedRates.flatMap((rate) => {
      if (!trials || excludesZero(differences[rate])) return [];
      const needed = trialsToDetect(COUNTS[rate](without) / without.runs, COUNTS[rate](withIt) / withIt.runs);
      return needed === undefined ? [] : [[rate, needed]];
    }),
  );
  return {
    ...layer,
    task: withIt.task,
    model: modelName(withIt),
    site: withIt.site,
    without: without.layers,
    with: withIt.layers,
    runs: { without: without.runs, with: withIt.runs },
    ...differences,
    ...(Object.keys(trialsToTell).length > 0 && { trialsToTell }),
  };
}
