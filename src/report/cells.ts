import { compareStrings } from '../text.ts';
import type { CellNames } from '../core/run.ts';

/** A cell's names: its model's none (null) when its agent called none. */
type Named = Omit<CellNames, 'model'> & { model: string | null };

/** How the reports show the model of a cell whose agent called none (null in summary.json), as `-` shows the layers of an agent with none of harness-eval's. */
export const NO_MODEL = '-';

/** A cell's model as the reports show it: its name, or `-` when its agent called none. */
export function modelName({ model }: Pick<Named, 'model'>): string {
  return model ?? NO_MODEL;
}

/** Orders cells by task, agent, model, layers, site; code-unit order, so it is the same in every locale. */
export function compareCells(a: Named, b: Named): number {
  return compareStrings(a.task, b.task) || compareStrings(a.agent, b.agent) || compareStrings(modelName(a), modelName(b)) || compareStrings(a.layers, b.layers) || compareStrings(a.site, b.site);
}
