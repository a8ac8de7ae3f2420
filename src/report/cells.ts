import { compareStrings } from '../text.ts';
import type { CellNames } from '../core/run.ts';

/** Orders cells by task, agent, model, layers, site; code-unit order, so it is the same in every locale. */
export function compareCells(a: CellNames, b: CellNames): number {
  return compareStrings(a.task, b.task) || compareStrings(a.agent, b.agent) || compareStrings(a.model, b.model) || compareStrings(a.layers, b.layers) || compareStrings(a.site, b.site);
}
