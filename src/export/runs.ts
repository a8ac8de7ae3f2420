import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { runRecordSchema } from '../core/run.ts';
import { stampedEventSchema } from '../core/trace.ts';
import { InputError, readJsonFile } from '../input.ts';

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

/** A run to export: its name (its test's id and its run's number in it, unique in the folder), its record, and when it started (ms since the epoch). */
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
  return files.map((file) => {
    const path = join(dir, file);
    const { attached: run } = readJsonFile(path, journalEntrySchema, 'run journal entry', { label: `export: ${path}` });
    const startMs = run.startedAt ? Date.parse(run.startedAt) : statSync(path).mtimeMs - run.wallMs;
    return { name: `${run.test.id}-${run.test.run}`, run, startMs };
  });
}
