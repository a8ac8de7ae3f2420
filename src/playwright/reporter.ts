import { appendFileSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import type { FullConfig, FullResult, Reporter, Suite, TestCase, TestError, TestResult } from '@playwright/test/reporter';
import { baselineMismatch, cellsDiffer, comparison, describeSelection, partialReasons, readBaseline, readSummary, renderComparison, type ComparableSummary } from '../report/compare.ts';
import { answerLines, decidedLines, renderMarkdown, retriedLies, verdictLines, writeSummaryFiles } from '../report/files.ts';
import { containmentLines, counted, endingOf, incompleteNote, testName } from '../report/format.ts';
import { DEFAULT_HISTORY_LIMIT, HISTORY_DIR, listHistory, saveToHistory } from '../report/history.ts';
import { agentLabel, cellLabel, summarize } from '../report/summarize.ts';
import { countTrials, parsePlanAttachment, parseRunAttachment, parseStartAttachment, type Attempt, type ParsedAttachment, type TestRecord } from '../report/trials.ts';
import { gateSchema, maxErrorsSchema, type FailedTest, type Gate, type NotApplicableTest, type NotRunTest, type PlaywrightFailures, type Summary } from '../report/types.ts';
import { z } from 'zod';
import type { PlannedRun, AttachedRunRecord } from '../core/run.ts';
import { parseInput } from '../input.ts';
import { AGENT_STDERR, HARNESS_RUN_ATTACHMENT, HARNESS_RUN_PLAN_ATTACHMENT, HARNESS_RUN_START_ATTACHMENT, HARNESS_RUN_VOID_ATTACHMENT } from './fixtures.ts';
import { selectionOf } from './selection.ts';
import { WORKERS_METADATA } from './matrix.ts';
import { EtaProgress, terminalColors } from './progress.ts';
import { cut, TEXT_CHARS } from '../report/caps.ts';
import { NOT_APPLICABLE } from '../eval/evaluate.ts';
import { modelSecrets } from '../models/registry.ts';
import { coordinateRun } from '../models/slots.ts';
import { defaultAccount } from '../sites/hn/options.ts';
import { redactTraceFile } from './trace-zip.ts';
import { BUDGET_SPENT, openRunLedger, pricesSchema } from './cost.ts';
import { givenBackRuns, openRunJournal } from './resume.ts';
import { portablePaths } from './condition.ts';

/** The reporter's options, checked strictly: a misspelled key (`outputFolder`) is an error, not a default. */
// The run record's schema, as the reporter reads it from each test's attachment: for tools that read reports.
export { runRecordSchema, type AttachedRunRecord, type AttachedRunRecordInput } from '../report/types.ts';

export const reporterOptionsSchema = z
  .object({
    /** Where summary.json, summary.md and index.html go, relative to the config file. */
    outputDir: z.string().min(1).optional(),
    /** Cells that must stay within limits; by default every cell: no false success at all. */
    gates: z.array(gateSchema).optional(),
    /** Runs that may end in an error (left out of every rate) with the run still passing: a count, or below 1 a share of the runs that ended; default 0. */
    maxErrors: maxErrorsSchema.optional(),
    /** USD per million tokens by model id; they price every run of a listed model (else a run's own `cost`, from the `prices` use option, stands). */
    prices: pricesSchema.optional(),
    /** One line per finished run, with the count done and left. */
    progress: z.boolean().optional(),
    /**
     * What to compare this run with: a summary.json (any version) from an earlier run, or
     * `'previous'`: the newest summary in the report's history. Each cell's change goes into the
     * reports and the console, flagged where the trials vouch for it. Like with like only: a partial
     * summary (interrupted, runs missing) is refused, and one that selected another part of the
     * suite (a shard, a grep) is not compared, with a line saying why.
     */
    baseline: z.string().min(1).optional(),
    /** Finished runs' summaries kept in `<outputDir>/history` (default 20); 0 keeps none. */
    history: z.int().min(0).optional(),
    /** Set by Playwright: `'test'`, `'list'` for `--list`, `'merge'` inside merge-reports. */
    _mode: z.string().optional(),
  })
  .strict();
export type HarnessReporterOptions = z.input<typeof reporterOptionsSchema>;

/**
 * Keys Playwright itself adds to every reporter's options (`configDir`, `_commandHash`, and
 * `onlyFailures: false` under `--list`): not the user's.
 */
const fromPlaywright = (key: string) => key === 'configDir' || key === 'onlyFailures' || (key.startsWith('_') && key !== '_mode');

/** Why a run ended before its end, by Playwright's status. */
const STOPPED: Partial<Record<FullResult['status'], string>> = { interrupted: 'interrupted', timedout: 'global timeout' };

/** Progress summaries are written at most this often while a matrix runs. */
const WRITE_INTERVAL_MS = 1000;
/** Missing tests, and runs left out of every rate, named in the final lines; summary.json lists them all. */
const NAMED = 5;

/**
 * `harness-eval/reporter`: turns the `harness-run.json` attachment of every test into trials,
 * cells and their numbers. It reads nothing else, so `merge-reports` of shards gives the same
 * summary. It writes nothing for `--list` or when no test was found, so an earlier report stays.
 */
export default class HarnessReporter implements Reporter {
  /** Every test Playwright planned, by id, in the suite's order; `failed`: the first line of why, when its last attempt failed a test Playwright counts as failed. */
  private readonly tests = new Map<string, TestRecord & { skipReasons: Set<string>; failed?: Pick<FailedTest, 'status' | 'error'> }>();
  /** Errors outside any test (a globalSetup that threw, a worker that could not start), first line each. */
  private readonly errorsOutside: string[] = [];
  /** `failOnFlakyTests`: then a flaky test fails the run, and the verdict says so. */
  private flakyFails = false;
  private readonly gates: Gate[];
  /** A file is read when the config loads, so a bad baseline fails at once, in one line; `'previous'` once the report's folder is known. */
  private baseline?: { summary: ComparableSummary; source: string };
  /** Why there is no comparison though one was asked for. */
  private noComparison?: string;
  /** The part of the suite this run selected (selection.ts); none for the whole suite. */
  private selection: string[] = [];
  /** The runs kept in flight at once (the config's workers), and why when matrixWorkers() said. */
  private workers: Summary['workers'];
  private outputDir = '';
  /** The config's folder: paths in the summary are written relative to it. */
  private configDir = '';
  /** Playwright's HTML report's folder, when one is configured: each run row links to its test there. */
  private htmlReportDir?: string;
  /** False for `--list` and when no test was found: nothing is written. */
  private writes = false;
  /** One shard of several: a gate's cells may all be in other shards, so only the merged report can say it matches none. */
  private sharded = false;
  private finished = 0;
  private eta?: EtaProgress;
  private lastWrite = 0;
  private writing: Promise<unknown> = Promise.resolve();
  /** Removes the run's cost ledger, when this reporter made it. */
  private closeLedger = () => undefined as void;

  private readonly options: HarnessReporterOptions;

  constructor(options: HarnessReporterOptions = {}) {
    const own = Object.fromEntries(Object.entries(options).filter(([key]) => !fromPlaywright(key)));
    this.options = parseInput(reporterOptionsSchema, own, 'harness-eval reporter options');
    const { baseline, gates } = this.options;
    if (baseline && baseline !== 'previous') this.baseline = { summary: readBaseline(baseline), source: baseline };
    this.gates = gates ?? [parseInput(gateSchema, {}, 'gate')];
  }

  /** Not under `--list`: Playwright then prints the list itself. */
  printsToStdio(): boolean {
    return this.options.progress !== false && this.options._mode !== 'list';
  }

  /**
   * An error outside any test (a globalSetup that threw, a worker that could not start): as the
   * reporter that prints, it says so, or a run that failed before its first test would end silent.
   */
  onError(error: TestError): void {
    const line = (error.message ?? error.value ?? 'an error outside any test').split('\n')[0]!;
    this.errorsOutside.push(line);
    if (this.printsToStdio()) say(`harness-eval: ${line}`);
  }

  /** Stops the run's slot coordinator (models/slots.ts), when this reporter started it. */
  private stopCoordinator?: () => Promise<void>;

  onBegin(config: FullConfig, suite: Suite): void {
    const configDir = config.configFile ? dirname(config.configFile) : config.rootDir;
    this.configDir = configDir;
    this.outputDir = resolve(configDir, this.options.outputDir ?? 'reports');
    this.htmlReportDir = htmlReportDir(config, configDir);
    this.selection = selectionOf(config);
    // A merge's config says nothing of how its shards ran.
    const why = config.metadata?.[WORKERS_METADATA];
    if (this.options._mode !== 'merge') this.workers = { count: config.workers, ...(typeof why === 'string' && { why }) };
    this.flakyFails = config.failOnFlakyTests === true;
    if (this.options.baseline === 'previous') this.baseline = this.previousSummary();
    const mismatch = this.baseline && baselineMismatch(this.baseline.summary, this.selection);
    if (mismatch) {
      this.noComparison = `not compared with ${this.baseline!.source}: ${mismatch}`;
      this.baseline = undefined;
    }
    for (const test of suite.allTests()) this.record(test);
    this.sharded = config.shard !== null && config.shard.total > 1;
    this.writes = this.options._mode !== 'list' && this.tests.size > 0;
    // Before any worker starts (they inherit the environment): the ledger a `maxCost` budget is kept in.
    if (this.writes && this.options._mode !== 'merge') {
      this.closeLedger = openRunLedger();
      // The run journal too: what a resume gives back, and what `harness-eval export` reads.
      const resumed = openRunJournal(this.outputDir);
      if (resumed && this.printsToStdio()) say(resumed);
    }
    this.eta = new EtaProgress(this.tests.size, Date.now());
    // At once: a run killed before its first result must not leave an earlier run's complete summary.
    if (this.writes) this.writeProgress();
    // Before any worker starts (they inherit the environment it is advertised in): every model endpoint's limit holds across the run's workers.
    if (this.writes) this.stopCoordinator = coordinateRun();
  }

  async onExit(): Promise<void> {
    await this.stopCoordinator?.();
  }

  onTestEnd(test: TestCase, result: TestResult): void {
    this.redactTraces(test, result);
    const record = this.record(test);
    const attempt = this.readAttempt(test, result);
    record.attempts.push(attempt);
    record.status = result.status;
    const skipReasons = [...test.annotations, ...(result.annotations ?? [])].flatMap((note) => (note.type === 'skip' && note.description ? [note.description] : []));
    for (const reason of skipReasons) record.skipReasons.add(reason);
    // A result Playwright will retry is not a finished trial: its next attempt is.
    const willRetry = test.outcome() === 'unexpected' && test.results.length <= test.retries;
    record.failed = willRetry ? undefined : this.failedAs(test, result);
    if (!willRetry) this.finished += 1;
    if (this.options.progress !== false) {
      this.printProgress(test, result, attempt, willRetry, result.status === 'skipped' ? skipReasons[0] : undefined);
      const eta = willRetry ? undefined : this.eta?.update(this.finished, Date.now());
      if (eta) say(eta);
    }
    if (this.writes && Date.now() - this.lastWrite >= WRITE_INTERVAL_MS) this.writeProgress();
  }

  /**
   * Whether Playwright counts the test failed, after its last attempt: failed or timed out where it
   * expected to pass (or passed where it expected to fail), or flaky where flaky tests fail the run
   * (`failOnFlakyTests`). Interrupted attempts fail nothing.
   */
  private failedAs(test: TestCase, result: TestResult): Pick<FailedTest, 'status' | 'error'> | undefined {
    const outcome = test.outcome();
    if (outcome !== 'unexpected' && !(outcome === 'flaky' && this.flakyFails)) return undefined;
    const status = outcome === 'flaky' ? 'flaky' : result.status === 'timedOut' ? 'timedOut' : 'failed';
    const why = firstLine(test.results.findLast((each) => each.error)?.error?.message) ?? (result.status === 'passed' ? 'passed where it was expected to fail' : result.status);
    return { status, error: cut(why, TEXT_CHARS) };
  }

  /**
   * What Playwright failed so far: its tests that failed, the errors outside any test, and a run it
   * ended failed for a reason neither says. A run the user or the global timeout stopped is
   * incomplete, not failed: the errors its stop raised (`Timed out waiting 4s for the test suite
   * to run`) are its shortfall, said already.
   */
  private playwrightFailures(status?: FullResult['status']): PlaywrightFailures {
    const tests = [...this.tests.values()].flatMap(({ id, title, project, failed }) => (failed ? [{ id, title, project, ...failed }] : []));
    const errors = status !== undefined && STOPPED[status] ? [] : this.errorsOutside;
    const unexplained = status === 'failed' && tests.length === 0 && errors.length === 0;
    return { tests, errors: [...errors, ...(unexplained ? ['Playwright ended the run failed; its output above says why'] : [])] };
  }

  async onEnd(result: FullResult): Promise<{ status?: FullResult['status'] } | undefined> {
    this.closeLedger();
    if (!this.writes) return undefined;
    const summary = await this.write(true, STOPPED[result.status], result.status);
    // The history is where baselines come from: a part of the suite, or a run that fell short, is no baseline for the whole.
    if (summary.partial && summary.recorded > 0) say(`harness-eval: partial (${partialReasons(summary.partial).join('; ')}): not kept in the history, never a baseline for a whole run`);
    else if (summary.recorded > 0) saveToHistory(this.outputDir, summary, this.options.history ?? DEFAULT_HISTORY_LIMIT);
    if (process.env.GITHUB_STEP_SUMMARY) appendFileSync(process.env.GITHUB_STEP_SUMMARY, renderMarkdown(summary));
    const { successes, falseSuccesses, falseSuccessAttempts, falseFailures, sideEffectRuns, incomplete } = summary.totals;
    say(
      `harness-eval: ${summary.recorded} of ${counted(summary.planned, 'planned run')} recorded (${incomplete} incomplete) in ${counted(summary.cells.length, 'cell')}: ${successes} done, ${counted(falseSuccesses, 'false success', 'false successes')}${retriedLies(falseSuccessAttempts)}, ${counted(falseFailures, 'false failure')}, ${sideEffectRuns} with side effects; report in ${this.outputDir}`,
    );
    // Which configuration to ship, every false success, and what the data decide, briefly: index.html and summary.md say it at length.
    const answer = answerLines(summary);
    const lies = answer.falseSuccesses.map((lie) => `${lie.gated ? '⚠' : '✗'} ${lie.line}`);
    for (const line of [...answer.choices, ...lies, ...decidedLines(summary)]) say(`harness-eval: ${line}`);
    for (const line of containmentLines(summary.cells, cellLabel)) say(`harness-eval: ${line}`);
    const excluded = summary.excluded?.runs ?? [];
    if (excluded.length > 0) say(`harness-eval: ${counted(excluded.length, 'run')} left out of every rate: ${someNamed(excluded.map((run) => `${testName(run)}: ${run.reason}: ${run.detail}`))}`);
    const failedTests = summary.playwrightFailures?.tests ?? [];
    if (failedTests.length > 0) say(`harness-eval: ${counted(failedTests.length, 'test')} failed outside the gates: ${someNamed(failedTests.map((test) => `${testName(test)}: ${test.error}`))}`);
    if (summary.missing.length > 0) say(`harness-eval: ${counted(summary.missing.length, 'test')} recorded no run: ${someNamed(summary.missing.map(testName))}`);
    if (summary.comparison) {
      say(`harness-eval: compared with ${summary.comparison.baseline.source} (${summary.comparison.baseline.generatedAt}):`);
      say(renderComparison(summary.comparison.cells));
      const differ = cellsDiffer(summary.comparison.cells);
      if (differ) say(`harness-eval: warning: ${differ}`);
    } else if (this.noComparison) say(`harness-eval: ${this.noComparison}`);
    else if (this.options.baseline === 'previous') say(`harness-eval: no earlier summary in ${join(this.outputDir, HISTORY_DIR)} to compare with`);
    // A run that fell short of what it selected is no success, even where Playwright saw every test pass (a run attachment that could not be read): its gates were not judged. (One whole shard is not short: the merge judges.)
    const short = (summary.partial?.shortfall.length ?? 0) > 0;
    const verdict = verdictLines(summary);
    const failure = this.failure(summary) ?? (short && result.status === 'passed' ? `harness-eval: ${verdict.headline}` : undefined);
    // Last, so the run's last line is its verdict, and it agrees with the exit status: this reporter turns a run failed, never green.
    say(`harness-eval: ${verdict.mark} ${verdict.headline}`);
    // An interrupted run keeps Playwright's own status (130 at Ctrl-C): already not green, and what a user's scripts expect of it.
    if (!failure || result.status === 'interrupted') return undefined;
    // merge-reports ignores the status onEnd returns and fails only when a reporter throws.
    if (this.options._mode === 'merge') throw new Error(failure);
    return { status: 'failed' };
  }

  /** Prints why the run fails (nothing measured, a gate matching no cell, breaches, too many errors, what Playwright failed) and answers it in one line; undefined when it holds. */
  private failure(summary: Summary): string | undefined {
    if (summary.totals.runs === 0) {
      const line = `harness-eval: nothing was measured: ${this.whyNothing(summary)}`;
      say(line);
      return line;
    }
    const { unmatched, breaches } = summary.gates!;
    for (const gate of unmatched) say(`harness-eval: gate matches no cell: ${gate}`);
    if (breaches.length > 0) {
      say(`harness-eval: gate breached in ${counted(breaches.length, 'cell')}:`);
      for (const breach of breaches) say(`  ${breach.cell}: ${breach.rule}`);
    }
    if (breaches.length > 0) return `harness-eval: gate breached in ${counted(breaches.length, 'cell')}`;
    if (unmatched.length > 0) return `harness-eval: gate matches no cell: ${unmatched.join(', ')}`;
    if (summary.excluded?.tooManyErrors) return `harness-eval: ${counted(summary.totals.errors ?? 0, 'run')} errored, more than maxErrors allows`;
    if (summary.playwrightFailures) return `harness-eval: ${verdictLines(summary).headline}`;
    return undefined;
  }

  /** `12 tests skipped (openai:gpt-4o-mini: OPENAI_API_KEY is not set)`, and what the other tests did. */
  private whyNothing({ recorded }: Summary): string {
    const tests = [...this.tests.values()];
    const skipped = tests.filter((test) => test.status === 'skipped');
    const reasons = [...new Set(skipped.flatMap((test) => [...test.skipReasons]))];
    const notRun = tests.filter((test) => test.status === 'notRun').length;
    const ran = tests.length - skipped.length - notRun;
    const parts = [
      skipped.length > 0 && `${counted(skipped.length, 'test')} skipped${reasons.length > 0 ? ` (${reasons.slice(0, 3).join('; ')}${reasons.length > 3 ? '; …' : ''})` : ''}`,
      recorded > 0 && `${counted(recorded, 'run')} recorded, each left out of every rate`,
      ran > 0 && recorded === 0 && `${counted(ran, 'test')} ran and recorded no harness run`,
      notRun > 0 && `${counted(notRun, 'test')} never ran`,
    ];
    return parts.filter(Boolean).join(', ');
  }

  /**
   * Each trace.zip of the attempt, rewritten before anything else reads it: cookies and credential
   * headers replaced wholesale, and the secrets this process knows (API keys, HN_PASSWORD) redacted
   * in every encoding (see trace-zip.ts).
   */
  private redactTraces(test: TestCase, result: TestResult): void {
    // HN_PASSWORD, else the replica's default account's password (the account a run signs in with unless a spec names another).
    const secrets = [...modelSecrets(), defaultAccount().password];
    for (const attachment of result.attachments) {
      if (attachment.name !== 'trace' || !attachment.path) continue;
      const { error } = redactTraceFile(attachment.path, secrets);
      if (error) say(`harness-eval: the trace of "${test.title}" could not be redacted: ${error}`);
    }
  }

  private record(test: TestCase) {
    let record = this.tests.get(test.id);
    if (!record) {
      record = { id: test.id, title: test.titlePath().slice(3).join(' › '), project: test.parent.project()?.name ?? '', status: 'notRun', attempts: [], skipReasons: new Set() };
      this.tests.set(test.id, record);
    }
    return record;
  }

  /**
   * The runs and starts one attempt attached, each run with the agent's stderr attached before it
   * (a run attaches its agent's output, then its record). An attachment that cannot be read is
   * named in one line and its trial counts as missing: no reporter exception drops the other runs.
   */
  private readAttempt(test: TestCase, result: TestResult): Attempt {
    const attempt: Attempt = { retry: result.retry, ...(result.status === 'interrupted' && { interrupted: true }), runs: [], starts: [], unreadable: [] };
    const voided: PlannedRun[] = [];
    const plans: number[][] = [];
    const project = test.parent.project()?.name;
    const where = `"${test.title}"${project ? ` (${project})` : ''}`;
    const text = (attachment: TestResult['attachments'][number]) => (attachment.body ? attachment.body.toString('utf8') : readFileSync(attachment.path!, 'utf8'));
    const read = <T>(attachment: TestResult['attachments'][number], parse: (text: string, label: string) => ParsedAttachment<T>, into: T[]) => {
      const label = `harness-eval: ${attachment.name} of ${where}`;
      let parsed: ParsedAttachment<T>;
      try {
        parsed = parse(text(attachment), label);
      } catch (error) {
        parsed = { ok: false, error: `${label}: cannot read it (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})` };
      }
      if (parsed.ok) into.push(parsed.value);
      else {
        say(`${parsed.error}; the run counts as missing`);
        attempt.unreadable.push(parsed.run);
      }
    };
    let stderr: string | undefined;
    for (const attachment of result.attachments) {
      if (attachment.name === HARNESS_RUN_ATTACHMENT) {
        const before = attempt.runs.length;
        read(attachment, parseRunAttachment, attempt.runs);
        if (stderr !== undefined && attempt.runs.length > before) attempt.runs[before] = { ...attempt.runs[before]!, agentStderr: stderr };
        stderr = undefined;
      } else if (attachment.name === HARNESS_RUN_START_ATTACHMENT) {
        read(attachment, parseStartAttachment, attempt.starts);
        stderr = undefined;
      } else if (attachment.name === HARNESS_RUN_VOID_ATTACHMENT) read(attachment, parseStartAttachment, voided);
      else if (attachment.name === HARNESS_RUN_PLAN_ATTACHMENT) read(attachment, parsePlanAttachment, plans);
      else if (attachment.name === AGENT_STDERR) stderr = readStderr(() => text(attachment));
    }
    // A start the fixture took back (bad input met once the run had started: a corrupt store, a program gone): no run, not an incomplete one.
    const taken = new Set(voided.map((start) => start.test.run));
    attempt.starts = attempt.starts.filter((start) => !taken.has(start.test.run));
    if (plans.length > 0) attempt.plans = plans.flat().filter((run) => !taken.has(run));
    const links = this.links(test, result);
    if (links) attempt.runs = attempt.runs.map((run) => ({ ...run, links }));
    return attempt;
  }

  /**
   * Where a run's evidence is, relative to the report's folder so the links work from disk and
   * served alike: its test's entry in Playwright's HTML report, and the attempt's trace.
   */
  private links(test: TestCase, result: TestResult): AttachedRunRecord['links'] {
    const trace = result.attachments.find((attachment) => attachment.name === 'trace' && attachment.path)?.path;
    const links = {
      ...(this.htmlReportDir && { testReport: `${urlPath(relative(this.outputDir, join(this.htmlReportDir, 'index.html')))}#?testId=${encodeURIComponent(test.id)}` }),
      ...(trace && { trace: urlPath(relative(this.outputDir, trace)) }),
    };
    return Object.keys(links).length > 0 ? links : undefined;
  }

  /**
   * The newest whole summary in the history, read before this run saves its own: entries an older
   * version kept of partial runs are passed over. None for a run of a part of the suite.
   */
  private previousSummary(): HarnessReporter['baseline'] {
    if (this.selection.length > 0) {
      this.noComparison = `no comparison: this run is partial (${describeSelection(this.selection)}), and the history keeps whole runs only`;
      return undefined;
    }
    for (const name of listHistory(this.outputDir)) {
      const summary = readSummary(join(this.outputDir, HISTORY_DIR, name));
      if (!baselineMismatch(summary, [])) return { summary, source: `${HISTORY_DIR}/${name}` };
    }
    return undefined;
  }

  /** A progress write; if it fails, the final write fails the same way and says why. */
  private writeProgress(): void {
    this.write(false).catch(() => undefined);
  }

  /** The skipped tests whose task does not apply to their site, with the fixture's reason. */
  private notApplicable(): NotApplicableTest[] {
    return [...this.tests.values()].flatMap(({ id, title, project, status, skipReasons }) => {
      const reason = status === 'skipped' ? [...skipReasons].find((why) => why.startsWith(NOT_APPLICABLE)) : undefined;
      return reason ? [{ id, title, project, reason: cut(reason, TEXT_CHARS) }] : [];
    });
  }

  /** The skipped tests the `maxCost` budget did not let start. */
  private notRun(): NotRunTest[] {
    return [...this.tests.values()].flatMap(({ id, title, project, status, skipReasons }) => {
      const reason = status === 'skipped' ? [...skipReasons].find((why) => why.startsWith(BUDGET_SPENT)) : undefined;
      return reason ? [{ id, title, project, reason }] : [];
    });
  }

  /** Writes are chained, so a late progress write never lands after the final one. `ended`: the run is over; `stopped`: why it ended early; `status`: Playwright's, at the end. */
  private write(ended: boolean, stopped?: string, status?: FullResult['status']) {
    this.lastWrite = Date.now();
    const { runs, planned, missing } = countTrials([...this.tests.values()]);
    const complete = ended && !stopped;
    const notRun = this.notRun();
    // Each test the budget stopped planned a run it never started.
    const measured = summarize(runs, {
      prices: this.options.prices,
      complete,
      planned: planned + notRun.length,
      missing,
      notApplicable: this.notApplicable(),
      notRun,
      gates: this.gates,
      maxErrors: this.options.maxErrors,
      playwrightFailures: this.playwrightFailures(status),
      sharded: this.sharded,
      selection: this.selection,
      stopped,
      workers: this.workers,
    });
    // No absolute path in a summary: a baseline file given by one is named relative to the config's folder.
    const summary = this.baseline ? { ...measured, comparison: comparison(this.baseline.summary, portablePaths(this.baseline.source, this.configDir), measured) } : measured;
    const written = this.writing.then(() => writeSummaryFiles(this.outputDir, summary, runs));
    this.writing = written.catch(() => undefined);
    return written.then(() => summary);
  }

  /** `why`: a skipped test's reason (a model without its key; "not applicable: …", a task the site cannot pose). */
  private printProgress(test: TestCase, result: TestResult, attempt: Attempt, willRetry: boolean, why: string | undefined): void {
    const total = this.tests.size;
    const count = `[${this.finished}/${total}, ${Math.max(0, total - this.finished)} left]`;
    const seconds = `${(result.duration / 1000).toFixed(1)} s`;
    const retry = willRetry ? `, attempt ${result.retry + 1}: Playwright retries it` : result.retry > 0 ? `, retry ${result.retry}` : '';
    // The title under the project and the file: a cells() cell's describe block names it there.
    const title = test.titlePath().slice(3).join(' \u203a ');
    const project = test.parent.project()?.name;
    const givenBack = givenBackRuns([...test.annotations, ...(result.annotations ?? [])]);
    if (attempt.runs.length === 0) say(`${count} ${project ? `${project} \u203a ` : ''}${title}: ${result.status}${why ? ` (${why})` : ''}${retry}, ${seconds}`);
    for (const run of attempt.runs) {
      const extra = run.excluded
        ? [run.excluded.detail, 'out of every rate']
        : [...(run.sideEffects.length > 0 ? [counted(run.sideEffects.length, 'side effect')] : []), ...(run.incomplete ? [incompleteNote(run)] : [])];
      say(`${count} ${cellLabel({ ...run, agent: agentLabel(run.agent, run.condition.agent), model: run.modelCalls === 0 ? null : run.model })}: ${endingOf(run)}${extra.map((note) => `, ${note}`).join('')}, ${counted(run.iterations, 'iteration')}, ${run.stopReason}${retry}, ${givenBack.has(run.test.run) ? 'given back (recorded earlier, not run again)' : seconds}`);
    }
    // Failures keep their whole message: the matchers' lines say what was claimed and found.
    if (result.status === 'failed' || result.status === 'timedOut') say(indent(result.error?.message ?? result.status));
  }
}

/**
 * The folder of Playwright's HTML reporter when the config names one: its `outputFolder` option,
 * else PLAYWRIGHT_HTML_OUTPUT_DIR, else `playwright-report`, beside the config as Playwright puts it.
 */
function htmlReportDir(config: FullConfig, configDir: string): string | undefined {
  const html = config.reporter.find(([name]) => name === 'html');
  if (!html) return undefined;
  const folder = (html[1] as { outputFolder?: string } | undefined)?.outputFolder ?? process.env.PLAYWRIGHT_HTML_OUTPUT_DIR ?? 'playwright-report';
  return resolve(configDir, folder);
}

/** The first `NAMED` of a list, joined, and how many more: `a, b, c, d, e, and 3 more (summary.json lists them)`. */
function someNamed(names: readonly string[]): string {
  const more = names.length > NAMED ? `, and ${names.length - NAMED} more (summary.json lists them)` : '';
  return `${names.slice(0, NAMED).join(', ')}${more}`;
}

/** Prints a line of the reporter's: without the terminal's colours where they would not show (terminalColors). */
function say(text: string): void {
  console.log(terminalColors(process.stdout.isTTY, process.env) ? text : stripVTControlCharacters(text));
}

/** A message's first line that says something, without the terminal's colours. */
function firstLine(message: string | undefined): string | undefined {
  return stripVTControlCharacters(message ?? '').split('\n').map((line) => line.trim()).find((line) => line !== '');
}

/** The agent's stderr as the report shows it (redacted when attached), cut at TEXT_CHARS so a 10,000-run page stays openable; unreadable, it says so. */
function readStderr(read: () => string): string {
  try {
    return cut(read(), TEXT_CHARS);
  } catch (error) {
    return `[harness-eval: ${AGENT_STDERR} could not be read: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}]`;
  }
}

/** A relative file path as a URL path: forward slashes, each segment escaped. */
function urlPath(path: string): string {
  return path.split(sep).map(encodeURIComponent).join('/');
}

function indent(text: string): string {
  return text.split('\n').map((line) => `    ${line}`).join('\n');
}
