import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { readJsonFile } from '../input.ts';
import { priceTableSchema, type PriceTable } from '../report/types.ts';
import { writeFileAtomic } from '../text.ts';
import { toTrajectory } from './atif.ts';
import { otlpDestination, sendOtlp, toOtlp } from './otel.ts';
import { readRuns } from './runs.ts';

/** `harness-eval export`: a report folder's runs as ATIF trajectories or OTLP traces. */

export const EXPORT_FORMATS = ['atif', 'otel'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

/** The OTLP file: one ExportTraceServiceRequest a line, a run each, as the collector's otlpjsonfile receiver reads. */
export const OTLP_FILE = 'traces.jsonl';

export interface ExportOptions {
  format: ExportFormat;
  /** The report folder (the reporter's `outputDir`). */
  folder: string;
  /** Where the files go; default `<folder>/<format>`. */
  out?: string;
  /** A price table file (the reporter's `prices` option as JSON): each model call's cost. */
  prices?: string;
  env?: NodeJS.ProcessEnv;
}

export interface Exported {
  runs: number;
  /** The folder (ATIF: a `<run>/trajectory.json` each) or the file (OTLP) written. */
  written: string;
  /** The collector the traces were sent to. */
  sentTo?: string;
}

export async function exportReport({ format, folder, out = join(folder, format), prices: pricesFile, env = process.env }: ExportOptions): Promise<Exported> {
  const prices: PriceTable | undefined = pricesFile === undefined ? undefined : readJsonFile(pricesFile, priceTableSchema, 'price table', { label: `export: --prices ${pricesFile}` });
  // Before any file is read: a bad endpoint fails at once.
  const destination = format === 'otel' ? otlpDestination(env) : undefined;
  const runs = readRuns(folder);
  mkdirSync(out, { recursive: true });
  if (format === 'atif') {
    for (const named of runs) {
      mkdirSync(join(out, named.name), { recursive: true });
      writeFileAtomic(join(out, named.name, 'trajectory.json'), `${JSON.stringify(toTrajectory(named, prices), null, 2)}\n`);
    }
    return { runs: runs.length, written: out };
  }
  const requests = runs.map((named) => toOtlp(named, prices));
  const file = join(out, OTLP_FILE);
  writeFileAtomic(file, requests.map((request) => `${JSON.stringify(request)}\n`).join(''));
  if (destination) await sendOtlp(requests, destination);
  return { runs: runs.length, written: file, ...(destination && { sentTo: destination.url }) };
}
