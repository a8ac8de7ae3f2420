import { existsSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { z } from 'zod';
import { runRecordSchema, type RunOrigin } from '../core/run.ts';
import { stampedEventSchema } from '../core/trace.ts';
import { InputError, readJsonFile } from '../input.ts';
import { writeFileAtomic } from '../text.ts';

/** Where a report folder keeps each run's record with its trace, one JSON file a run. */
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

/** A run to export: its name (its file's, unique in the folder), its record, and when it started (ms since the epoch). */
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
    const run = readJsonFile(path, exportedRunSchema, 'run record', { label: `export: ${path}` });
    const startMs = run.startedAt ? Date.parse(run.startedAt) : statSync(path).mtimeMs - run.wallMs;
    return { name: basename(file, '.json'), run, startMs };
  });
}

/**
 * Keeps a run in a report folder for `harness-eval export`: its record as attached, trace included
 * (its text cut already, as the reporter cuts it), in `runs/`, named by its test, repeat, retry and
 * number, so each attempt of each planned run has a file of its own.
 */
export function writeRunFile(folder: string, record: { test: RunOrigin }): string {
  const { id, repeatEachIndex, retry, run } = record.test;
  const path = join(folder, RUNS_DIR, `${id}-${repeatEachIndex}-${retry}-${run}.json`);
  mkdirSync(join(folder, RUNS_DIR), { recursive: true });
  writeFileAtomic(path, JSON.stringify(record));
  return path;
}
