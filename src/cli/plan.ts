import { parseArgs } from 'node:util';
import { InputError, readJsonFile } from '../input.ts';
import { summarySchema } from '../report/types.ts';
import { counted, formatCount } from '../report/format.ts';
import { DETECT_LIMIT, detectionPower, trialsToDetect } from '../report/statistics.ts';

export const PLAN_USAGE = `harness-eval plan --from RATE --to RATE [--power 0.8] [--cells N] [--workers N]
                    [--seconds-per-run S] [--cost-per-run USD] [--summary FILE]
                                                      trials per cell to tell two success rates apart (80% from 95%:
                                                      --from 0.8 --to 0.95), and the runs, cost and time it takes`;

/** A rate as a person writes it: `0.8`, `80%`. */
function rate(flag: string, value: string | undefined): number {
  if (value === undefined) throw new InputError(`--${flag}: required (a success rate, 0.8 or 80%)`);
  const number = value.endsWith('%') ? Number(value.slice(0, -1)) / 100 : Number(value);
  if (value.trim() === '' || !Number.isFinite(number) || number < 0 || number > 1) throw new InputError(`--${flag}: expected a rate between 0 and 1 (or 0% and 100%), got "${value}"`);
  return number;
}

function positive(flag: string, value: string | undefined, integer: boolean): number | undefined {
  if (value === undefined) return undefined;
  const number = Number(value);
  if (value.trim() === '' || !Number.isFinite(number) || number <= 0 || (integer && !Number.isInteger(number))) throw new InputError(`--${flag}: expected a positive ${integer ? 'whole number' : 'number'}, got "${value}"`);
  return number;
}

const percent = (value: number) => `${Math.round(value * 1000) / 10}%`;

/**
 * How many trials per cell tell a success rate of `from` from one of `to` (the report's own test of
 * a difference, two-sided at 95%, with the power asked), and what a matrix of `cells` then costs in
 * runs, money and wall time: the cost and time per run given, or a summary's own (its cells, its
 * cost per run, its median time per run).
 */
export function plan(args: string[]): string[] {
  const { values } = parseArgs({
    args,
    strict: true,
    options: {
      from: { type: 'string' },
      to: { type: 'string' },
      power: { type: 'string', default: '0.8' },
      cells: { type: 'string' },
      workers: { type: 'string', default: '1' },
      'seconds-per-run': { type: 'string' },
      'cost-per-run': { type: 'string' },
      summary: { type: 'string' },
    },
  });
  const [from, to] = [rate('from', values.from), rate('to', values.to)];
  if (from === to) throw new InputError(`--from and --to: the same rate (${percent(from)}): no difference to detect`);
  const power = rate('power', values.power);
  if (power <= 0 || power >= 1) throw new InputError(`--power: expected a share between 0 and 1, got "${values.power}"`);
  const observed = values.summary === undefined ? undefined : observedIn(values.summary);
  const cells = positive('cells', values.cells, true) ?? observed?.cells ?? 1;
  const workers = positive('workers', values.workers, true)!;
  const seconds = positive('seconds-per-run', values['seconds-per-run'], false) ?? observed?.secondsPerRun;
  const cost = positive('cost-per-run', values['cost-per-run'], false) ?? observed?.costPerRun;

  const trials = trialsToDetect(from, to, power);
  const head = `to tell a success rate of ${percent(from)} from ${percent(to)} (two-sided, 95% confidence, power ${percent(power)})`;
  if (trials === undefined) return [`harness-eval: ${head}: more than ${formatCount(DETECT_LIMIT)} trials per cell; no plan`];
  const runs = trials * cells;
  const lines = [`harness-eval: ${head}: ${counted(trials, 'trial')} per cell`];
  const parts = [`${counted(cells, 'cell')}: ${formatCount(runs)} runs`];
  if (cost !== undefined) parts.push(`about $${(runs * cost).toFixed(2)} at $${cost.toFixed(4)} a run`);
  if (seconds !== undefined) parts.push(`about ${duration((runs * seconds) / workers)} at ${seconds} s a run over ${counted(workers, 'worker')}`);
  lines.push(`  ${parts.join(' · ')}`);
  // What the usual small counts give: how often such a run would tell the two apart at all.
  lines.push(`  with 3, 10 and 30 trials per cell: told apart ${[3, 10, 30].map((n) => percent(detectionPower(from, to, n))).join(', ')} of the time`);
  if (observed) lines.push(`  from ${values.summary}: ${counted(observed.cells, 'cell')}${observed.costPerRun === undefined ? '' : `, $${observed.costPerRun.toFixed(4)} a run`}${observed.secondsPerRun === undefined ? '' : `, ${observed.secondsPerRun} s a run (median)`}`);
  return lines;
}

function duration(seconds: number): string {
  if (seconds < 90) return `${Math.round(seconds)} s`;
  if (seconds < 90 * 60) return `${Math.round(seconds / 60)} min`;
  return `${Math.round(seconds / 360) / 10} h`;
}

/** A summary's cells, its cost per run (when it has one) and its median time per run. */
function observedIn(file: string): { cells: number; costPerRun?: number; secondsPerRun?: number } {
  const summary = readJsonFile(file, summarySchema, 'summary', { label: `--summary ${file}` });
  const cells = summary.cells.length;
  if (cells === 0) throw new InputError(`--summary: ${file} has no cell`);
  const runs = summary.cells.reduce((sum, cell) => sum + cell.runs, 0);
  const cost = summary.cells.reduce((sum, cell) => sum + (cell.cost ?? 0), 0);
  const medians = summary.cells.map((cell) => cell.wallMs.median).sort((a, b) => a - b);
  const median = medians[Math.floor(medians.length / 2)]!;
  return { cells, ...(cost > 0 && runs > 0 && { costPerRun: cost / runs }), secondsPerRun: Math.round(median / 100) / 10 };
}
