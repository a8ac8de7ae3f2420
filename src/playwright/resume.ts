import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { z } from 'zod';
import { runRecordSchema, type AttachedRunRecordInput, type PlannedRun, type RunRecord } from '../core/run.ts';
import type { TraceEvent } from '../core/trace.ts';
import { InputError } from '../input.ts';
import { parseJsonObject, writeFileAtomic } from '../text.ts';
import { RUNS_DIR } from '../export/runs.ts';

/**
 * Resume, as Inspect's eval sets resume: after an interruption, `HARNESS_RESUME=1 npx playwright
 * test` runs only the runs not yet recorded. Each run a test records is kept in the run journal,
 * `<report folder>/runs/`, one file per trial; a resumed invocation gives each trial the journal
 * holds its recorded run back instead of running it again (the fixture attaches it as it was), so
 * the report is written once, over every run, as if the invocation had run straight through. A
 * run that says nothing of its agent (errored, interrupted) is not kept: a resume runs it again.
 */

/** Set by the user: run only the runs the journal does not hold. */
export const RESUME_ENV = 'HARNESS_RESUME';
/** Set by the reporter, before the workers start (they inherit it): the journal's folder. */
export const JOURNAL_ENV = 'HARNESS_EVAL_JOURNAL';

/** What the test got back from `harness.run()` beside the attached record: the fields the attached form names otherwise (a task's name, not its prompt). */
const returnedSchema = z.object({ task: z.string(), agent: z.string(), model: z.string(), layers: z.array(z.string()), site: z.string() });
type Returned = z.infer<typeof returnedSchema>;

/** One trial's entry: the run as it was attached, and as the test got it. */
const entrySchema = z.object({ attached: z.record(z.string(), z.unknown()), returned: returnedSchema });

/** The note a test gets for each run the journal gave back, by which the reporter marks its line. */
export function givenBackNote(run: number): { type: string; description: string } {
  return { type: 'harness-eval', description: `run ${run}: recorded earlier, given back from the run journal (${RESUME_ENV}), not run again` };
}

/** The runs a test's notes say were given back, by number. */
export function givenBackRuns(notes: ReadonlyArray<{ type: string; description?: string }>): Set<number> {
  const runs = new Set<number>();
  for (const { type, description } of notes) {
    const run = Number(/^run (\d+):/.exec(description ?? '')?.[1]);
    if (type === givenBackNote(run).type && description === givenBackNote(run).description) runs.add(run);
  }
  return runs;
}

/** Whether this invocation resumes (HARNESS_RESUME set, and not 0). */
export function resuming(env: NodeJS.ProcessEnv = process.env): boolean {
  const value = env[RESUME_ENV];
  return value !== undefined && value !== '' && value !== '0';
}

/**
 * Opens the invocation's journal in `reportDir` and tells the workers where it is: emptied first,
 * unless resuming. Call it in the runner before the workers start (the reporter's onBegin). Answers
 * a line to print when resuming: how many runs are given back.
 */
export function openRunJournal(reportDir: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const dir = join(reportDir, RUNS_DIR);
  if (!resuming(env)) rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  env[JOURNAL_ENV] = dir;
  if (!resuming(env)) return undefined;
  const kept = readdirSync(dir).filter((name) => name.endsWith('.json')).length;
  return `harness-eval: resuming (${RESUME_ENV}): ${kept} run${kept === 1 ? '' : 's'} recorded earlier in ${dir} are given back, not run again; the rest run`;
}

/** The journal as a worker sees it: none when the runner opened none (no harness-eval reporter). */
export function runJournal(env: NodeJS.ProcessEnv = process.env): RunJournal | undefined {
  const dir = env[JOURNAL_ENV];
  if (dir) return new RunJournal(dir, resuming(env));
  if (resuming(env)) throw new InputError(`${RESUME_ENV}: this run has no run journal to resume from (${JOURNAL_ENV}): add harness-eval/reporter to the config's reporters`);
  return undefined;
}

export class RunJournal {
  constructor(
    private readonly dir: string,
    private readonly resume: boolean,
  ) {}

  /** A trial's file: its test (whose id differs per repeat) and its run's number in it. */
  private fileOf(test: PlannedRun['test']): string {
    return join(this.dir, `${createHash('sha256').update(`${test.id}\n${test.run}`).digest('hex').slice(0, 32)}.json`);
  }

  /**
   * The run recorded earlier for this trial, when resuming and it ran as planned now (same cell,
   * same task revision): its attached record, as this attempt's, and the record the test gets.
   * An entry that cannot be read, or of another cell (the config changed since), is run again.
   */
  recorded(planned: PlannedRun): { attached: AttachedRunRecordInput & { trace?: TraceEvent[] }; returned: RunRecord } | undefined {
    if (!this.resume) return undefined;
    let text: string;
    try {
      text = readFileSync(this.fileOf(planned.test), 'utf8');
    } catch {
      return undefined;
    }
    const entry = entrySchema.safeParse(parseJsonObject(text));
    if (!entry.success || !runRecordSchema.safeParse(entry.data.attached).success) return undefined;
    const attached = { ...(entry.data.attached as AttachedRunRecordInput & { trace?: TraceEvent[] }), test: planned.test };
    const cell = (run: Partial<PlannedRun>) => [run.task, run.agent, run.model, run.layers, run.site, run.condition];
    if (!isDeepStrictEqual(cell(attached), cell(planned))) return undefined;
    return { attached, returned: { ...(attached as unknown as RunRecord), ...entry.data.returned } };
  }

  /** Keeps a run as attached, for a later resume; one that says nothing of its agent is not kept. */
  keep(attached: AttachedRunRecordInput, returned: Returned): void {
    if (attached.excluded) return;
    writeFileAtomic(this.fileOf(attached.test), JSON.stringify({ attached, returned: returnedSchema.parse(returned) }));
  }
}
