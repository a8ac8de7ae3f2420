import { createHash } from 'node:crypto';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { runRecordSchema } from '../core/run.ts';
import { stampedEventSchema } from '../core/trace.ts';
import { InputError, readJsonFile } from '../input.ts';
import { cellNamesOf, conditionKey, modelName } from '../report/summarize.ts';
import { modelCallsIn } from '../report/trials.ts';
import { compareStrings } from '../text.ts';

/** Where a report folder keeps each run's record with its trace, one JSON file a trial: the run journal (src/playwright/resume.ts), which a resume reads too. */
export const RUNS_DIR = 'runs';

/**
 * A run as the report folder keeps it: the run record as attached (`harness-run.json`), its trace
 * included. Events this version does not know are left out, never a reason to lose the run.
 */
export const exportedRunSchema = runRecordSchema.extend({
  trace: z
    .array(z.unknown())
    .default([])
    .transform((events) => events.flatMap((event) => stampedEventSchema.safeParse(event).data ?? [])),
  /** When the run started (ISO 8601); the trace's times count from it. */
  startedAt: z.iso.datetime({ offset: true }).optional(),
});
export type ExportedRun = z.infer<typeof exportedRunSchema>;

/** A journal entry: the run as attached, and (unread here) what its test got back. */
const journalEntrySchema = z.object({ attached: exportedRunSchema });

/** A run to export: its name (see runNames), its record, and when it started (ms since the epoch). */
export interface NamedRun {
  name: string;
  run: ExportedRun;
  startMs: number;
}

/**
 * The runs a report folder keeps, by name. A run that does not say when it started is taken to
 * have started its wall time before its file was written, which the reporter does as it ends.
 */
export function readRuns(folder: string): NamedRun[] {
  if (!existsSync(folder)) throw new InputError(`export: ${folder}: no such report folder`);
  const dir = join(folder, RUNS_DIR);
  if (!existsSync(dir)) throw new InputError(`export: ${folder}: no ${RUNS_DIR}/ folder of run records in it (the reporter keeps each run's record and trace there)`);
  const files = readdirSync(dir).filter((file) => file.endsWith('.json')).sort();
  if (files.length === 0) throw new InputError(`export: ${dir}: no run records (*.json) in it`);
  const read = files.map((file) => {
    const path = join(dir, file);
    const { attached } = readJsonFile(path, journalEntrySchema, 'run journal entry', { label: `export: ${path}` });
    // As the reporter reads a run: what its trace says of its model calls names its cell's model.
    const calls = modelCallsIn(attached.trace);
    const run = { ...attached, ...(calls !== undefined && { modelCalls: calls }) };
    return { run, startMs: run.startedAt ? Date.parse(run.startedAt) : statSync(path).mtimeMs - run.wallMs };
  });
  const names = runNames(read.map(({ run }) => run));
  return read.map((each, index) => ({ name: names[index]!, ...each })).sort((a, b) => compareStrings(a.name, b.name));
}

/** A part of a name beyond this many characters is cut: a name stays a file name. */
const PART_CHARS = 40;

/**
 * Each run's name: its task, its cell's agent, model, layers and site as the report names them, and
 * its trial, its number among its cell's runs (by test, repeat and run), each part as a file name
 * takes it (letters, digits, `.` and `-`; `none` for `-`):
 * `upvote-first-post__harness-eval__scripted-overclaimer__bare__hn-recorded__1`. Two cells whose
 * names read alike so get a short hash of their condition each, so every name is unique.
 */
export function runNames(runs: readonly ExportedRun[]): string[] {
  const cells = cellNamesOf(runs);
  const trials = new Map<string, ExportedRun[]>();
  for (const run of runs) trials.set(conditionKey(run), [...(trials.get(conditionKey(run)) ?? []), run]);
  for (const cellRuns of trials.values()) cellRuns.sort((a, b) => compareStrings(a.test.title, b.test.title) || compareStrings(a.test.project, b.test.project) || a.test.repeatEachIndex - b.test.repeatEachIndex || a.test.run - b.test.run || compareStrings(a.test.id, b.test.id));
  const names = runs.map((run, index) => {
    const { task, agent, model, layers, site } = cells[index]!;
    const trial = trials.get(conditionKey(run))!.indexOf(run) + 1;
    return [task, agent, modelName({ model }), layers, site].map(filePart).join('__') + `__${trial}`;
  });
  const counts = new Map<string, number>();
  for (const name of names) counts.set(name, (counts.get(name) ?? 0) + 1);
  return names.map((name, index) => (counts.get(name)! > 1 ? `${name}-${createHash('sha256').update(conditionKey(runs[index]!)).digest('hex').slice(0, 6)}` : name));
}

/** A name as a part of a file name: `openai:gpt-4o-mini` is `openai-gpt-4o-mini`, `tinydesk (startLoggedIn)` `tinydesk-startLoggedIn`, `-` is `none`. */
function filePart(name: string): string {
  const part = name.normalize('NFKD').replace(/[^A-Za-z0-9.]+/g, '-').replace(/^[-.]+/, '').slice(0, PART_CHARS).replace(/[-.]+$/, '');
  return part === '' ? 'none' : part;
}
