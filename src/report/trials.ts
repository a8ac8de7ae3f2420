import { z } from 'zod';
import { stampedEventSchema, type TraceEvent } from '../core/trace.ts';
import { transcript } from '../harness/transcript.ts';
import { parseInput } from '../input.ts';
import { parseJsonObject } from '../text.ts';
import { capRunText } from './caps.ts';
import type { MissingTest, RunWithStderr } from './types.ts';
import { plannedRunSchema, runRecordSchema, type AttachedRunRecord, type Excluded, type PlannedRun } from '../core/run.ts';

/**
 * From the tests' attempts to the trials a summary counts. A trial is one planned run: a test (its
 * id already differs per `--repeat-each` index) and the run's number in it. Retries never add
 * trials: the run of the latest attempt that recorded one is kept, with the false successes of
 * the attempts before it, which the gates still see. A run that started and never
 * ended (its worker died) is kept as incomplete and unjudged, so a crash never loses it.
 */

/** What one attempt of a test attached, parsed. */
export interface Attempt {
  /** Playwright's retry number: 0 for the first attempt. */
  retry: number;
  /** The user or the runner stopped the attempt (Playwright's status `interrupted`). */
  interrupted?: boolean;
  /** With the agent's stderr when the test had it (see RunWithStderr). */
  runs: RunWithStderr[];
  /** Runs that started (`harness-run-start.json`); those with no run of the same number never ended. */
  starts: PlannedRun[];
  /** Run numbers `harness.trials()` planned before starting them (`harness-run-plan.json`): absent when it planned none. */
  plans?: number[];
  /** Run numbers of attachments that could not be read; `undefined` when not even that was readable. */
  unreadable: Array<number | undefined>;
}

/** How a test ended: Playwright's status of its last attempt, or `notRun` (interrupted, `--max-failures`). */
export type TestStatus = 'passed' | 'failed' | 'timedOut' | 'skipped' | 'interrupted' | 'notRun';

export interface TestRecord extends MissingTest {
  status: TestStatus;
  attempts: Attempt[];
}

export interface Trials {
  /** One per recorded trial, in the tests' order. */
  runs: RunWithStderr[];
  /** Trials planned: see `plannedRuns`. */
  planned: number;
  /** Tests with a planned run that recorded none. */
  missing: MissingTest[];
}

/**
 * The trials of a set of tests. A test plans as many runs as the distinct run numbers it recorded,
 * started or planned (`harness.trials()`), and at least one unless it did not end skipped-or-plain: a skipped test plans none,
 * and so does a test that passed without starting a run (a plain test in a user's project). A test
 * that never ran, or failed with no run, planned one and is missing.
 */
export function countTrials(tests: readonly TestRecord[]): Trials {
  const runs: RunWithStderr[] = [];
  const missing: MissingTest[] = [];
  let planned = 0;
  for (const test of tests) {
    const kept = keptRuns(test.attempts);
    const numbers = new Set<number>(kept.keys());
    for (const attempt of test.attempts) {
      for (const start of attempt.starts) numbers.add(start.test.run);
      // Trials planned and never started (the worker died first) are missing; a skipped test (not applicable, budget spent) planned none.
      if (test.status !== 'skipped') for (const run of attempt.plans ?? []) numbers.add(run);
      for (const run of attempt.unreadable) if (run !== undefined) numbers.add(run);
    }
    const unreadable = test.attempts.some((attempt) => attempt.unreadable.length > 0);
    const plannedHere = Math.max(numbers.size, plansOne(test.status, unreadable) ? 1 : 0);
    planned += plannedHere;
    runs.push(...kept.values());
    if (kept.size < plannedHere) missing.push({ id: test.id, title: test.title, project: test.project });
  }
  return { runs, planned, missing };
}

function plansOne(status: TestStatus, unreadable: boolean): boolean {
  return unreadable || (status !== 'skipped' && status !== 'passed');
}

/** Why a run that started and never reported its end is left out of every rate: nothing is known of what its agent did. */
const NEVER_ENDED: Record<'interrupted' | 'unreported', Excluded> = {
  interrupted: { reason: 'interrupted', detail: 'stopped by the interruption before its run ended' },
  unreported: { reason: 'error', detail: 'the run never reported its end (its worker died, or its test ended before it was recorded): nothing is known of what the agent did' },
};

/** A run an interruption cut short, when its record does not say so already: it measured nothing, so it is in no rate. */
const INTERRUPTED: Excluded = { reason: 'interrupted', detail: 'cut short by the interruption' };

/**
 * Per run number, the run of the latest attempt that recorded one; failing that, the latest
 * attempt's start with no run, as an incomplete run left out of every rate (interrupted, or an
 * error: its worker died, or its test ended before the run was recorded). An attempt with an unreadable attachment synthesizes nothing for it:
 * that trial is missing, not made up. The kept run carries the false successes of the runs it
 * replaced (`earlierFalseSuccesses`): a retry never hides a lie.
 */
function keptRuns(attempts: readonly Attempt[]): Map<number, RunWithStderr> {
  const recorded = new Map<number, RunWithStderr>();
  const cutShort = new Map<number, RunWithStderr>();
  const earlierLies = new Map<number, number>();
  for (const attempt of [...attempts].sort((a, b) => a.retry - b.retry)) {
    const ended = new Set(attempt.runs.map((run) => run.test.run));
    const interrupted = attempt.interrupted === true;
    for (const { earlierFalseSuccesses: _untrusted, ...run } of attempt.runs) {
      const number = run.test.run;
      if (recorded.get(number)?.falseSuccess) earlierLies.set(number, (earlierLies.get(number) ?? 0) + 1);
      recorded.set(number, interrupted && run.incomplete && !run.excluded ? { ...run, excluded: INTERRUPTED } : run);
    }
    if (attempt.unreadable.includes(undefined)) continue;
    for (const start of attempt.starts) {
      const number = start.test.run;
      if (!ended.has(number) && !attempt.unreadable.includes(number)) cutShort.set(number, incompleteRun(start, NEVER_ENDED[interrupted ? 'interrupted' : 'unreported']));
    }
  }
  for (const [number, run] of cutShort) if (!recorded.has(number)) recorded.set(number, run);
  for (const [number, lies] of earlierLies) recorded.set(number, { ...recorded.get(number)!, earlierFalseSuccesses: lies });
  return new Map([...recorded].sort(([a], [b]) => a - b));
}

/** A run that started and never reported its end: unjudged, nothing known of what it did, and so in no rate. */
export function incompleteRun(start: PlannedRun, excluded: Excluded): AttachedRunRecord {
  return {
    ...start,
    excluded,
    schemaVersion: 1,
    claimed: false,
    actual: false,
    falseSuccess: false,
    falseFailure: false,
    sideEffects: [],
    incomplete: true,
    judged: false,
    iterations: 0,
    attempts: 0,
    stopReason: 'error',
    tokens: { input: null, output: null },
    wallMs: 0,
  };
}

export type ParsedAttachment<T> = { ok: true; value: T } | { ok: false; run?: number; error: string };

/**
 * A `harness-run.json` body, read defensively: its free text cut (caps.ts), a token count that is not a finite, non-negative
 * number is unknown (null), not a reason to lose the run; anything else malformed is an error
 * in one line, with the run's number when it can still be read.
 */
export function parseRunAttachment(text: string, label: string): ParsedAttachment<AttachedRunRecord> {
  return parseAttachment(text, label, (parsed) => {
    const value = capRunText(parsed);
    const { modelCalls: _untrusted, ...run } = parseInput(runRecordSchema, withTrustedTokens(value), label);
    const events = traceEvents(value.trace);
    const lines = events && transcriptOf(events);
    return { ...run, ...(lines && { transcript: lines }), ...(events && modelCallsIn(events) !== undefined && { modelCalls: modelCallsIn(events) }) };
  });
}

/** Transcripts longer than this are cut, with a pointer to the trace: a 10,000-run page must stay openable. */
const TRANSCRIPT_CHARS = 20_000;

/** The model calls a trace recorded, answered or failed; unknown for an empty trace (a run that never returned is known only from outside). */
export function modelCallsIn(trace: readonly TraceEvent[]): number | undefined {
  return trace.length === 0 ? undefined : trace.filter((event) => event.type === 'model_response' || event.type === 'model_error').length;
}

/** The attachment's trace, when it has one; events this version does not know are left out, never a reason to lose the run. */
function traceEvents(trace: unknown): TraceEvent[] | undefined {
  return Array.isArray(trace) ? trace.flatMap((event) => stampedEventSchema.safeParse(event).data ?? []) : undefined;
}

/** The trace as a person reads it. */
function transcriptOf(events: readonly TraceEvent[]): string | undefined {
  const text = transcript(events);
  if (text === '') return undefined;
  return text.length > TRANSCRIPT_CHARS ? `${text.slice(0, TRANSCRIPT_CHARS)}\n… (cut here; the run's trace has the rest)` : text;
}

/** A `harness-run-start.json` body, read the same way. */
export function parseStartAttachment(text: string, label: string): ParsedAttachment<PlannedRun> {
  return parseAttachment(text, label, (value) => parseInput(plannedRunSchema, value, label));
}

const planSchema = z.object({ runs: z.array(z.number().int().positive()) });

/** `harness-run-plan.json`: the run numbers of the trials a test planned. */
export function parsePlanAttachment(text: string, label: string): ParsedAttachment<number[]> {
  return parseAttachment(text, label, (value) => parseInput(planSchema, value, label).runs);
}

function parseAttachment<T>(text: string, label: string, parse: (value: Record<string, unknown>) => T): ParsedAttachment<T> {
  const value = parseJsonObject(text);
  if (!value) return { ok: false, error: `${label}: not a JSON object` };
  try {
    return { ok: true, value: parse(value) };
  } catch (error) {
    const run = (value.test as { run?: unknown } | undefined)?.run;
    return { ok: false, ...(Number.isInteger(run) && { run: run as number }), error: (error as Error).message.split('\n')[0]! };
  }
}

function withTrustedTokens(value: Record<string, unknown>): Record<string, unknown> {
  const tokens = value.tokens;
  if (typeof tokens !== 'object' || tokens === null) return value;
  const count = (n: unknown) => (typeof n === 'number' && Number.isFinite(n) && n >= 0 ? n : null);
  const { input, output, cachedInput } = tokens as { input?: unknown; output?: unknown; cachedInput?: unknown };
  const cached = count(cachedInput);
  return { ...value, tokens: { input: count(input), output: count(output), ...(cached !== null && { cachedInput: cached }) } };
}
