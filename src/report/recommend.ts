import { compareStrings } from '../text.ts';
import { modelName } from './cells.ts';
import { differs, trialsToDetect } from './statistics.ts';
import type { Cell, Choice, LyingCell, Recommendation } from './types.ts';

/**
 * Which configuration to ship, per task and site (see choiceSchema), and every cell with a false
 * success, gated or not, so the reports can say both first. `label` names a cell; `gated` says
 * whether some gate judges its false-success rate; `trials`, whether to find how many trials per
 * cell would tell the best from each cell it cannot yet be told from.
 */
export function recommend(cells: readonly Cell[], label: (cell: Cell) => string, gated: (cell: Cell) => boolean, trials: boolean): Recommendation {
  const measured = cells.filter((cell) => cell.runs > 0);
  const groups = new Map<string, Cell[]>();
  for (const cell of measured) groups.set(`${cell.task}\u0000${cell.site}`, [...(groups.get(`${cell.task}\u0000${cell.site}`) ?? []), cell]);
  const choices = [...groups.values()].map((group) => choose(group, label, trials));
  const falseSuccesses: LyingCell[] = measured.filter((cell) => cell.falseSuccessTrials > 0).map((cell) => ({ cell: label(cell), trials: cell.falseSuccessTrials, runs: cell.runs, gated: gated(cell) }));
  return { choices, falseSuccesses };
}

function choose(cells: readonly Cell[], label: (cell: Cell) => string, trials: boolean): Choice {
  const { task, site } = cells[0]!;
  const honest = cells.filter((cell) => cell.falseSuccessTrials === 0).sort(better);
  const named = (cell: Cell) => ({ cell: label(cell), configuration: configurationOf(cell), runs: cell.runs, successes: cell.successes, successRate: cell.successRate });
  const [best, ...rest] = honest;
  const tiedWith = best
    ? rest.filter((cell) => !differs(best.successes, best.runs, cell.successes, cell.runs)).map((cell) => {
        const needed = trials ? trialsToDetect(best.successRate.value, cell.successRate.value) : undefined;
        return { ...named(cell), ...(needed !== undefined && { trialsToTell: needed }) };
      })
    : [];
  return { task, site, ...(best && { best: named(best) }), tiedWith, cells: cells.length, disqualified: cells.length - honest.length };
}

/** Higher lower bound of success first, then the higher observed rate, then the lower cost per run (unknown cost last), then by name. */
function better(a: Cell, b: Cell): number {
  const perRun = (cell: Cell) => (cell.cost === undefined ? Infinity : cell.cost / cell.runs);
  return b.successRate.low - a.successRate.low || b.successRate.value - a.successRate.value || perRun(a) - perRun(b) || compareStrings(configurationOf(a), configurationOf(b));
}

/** What one would ship: `agent · model · layers`, the cell's names but its task and site. */
export function configurationOf(cell: Cell): string {
  return `${cell.agent} · ${modelName(cell)} · ${cell.layers}`;
}
