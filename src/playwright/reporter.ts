import { appendFileSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { FullConfig, FullResult, Reporter, Suite, TestCase, TestResult } from '@playwright/test/reporter';
import { compareSummaries, readSummary, renderComparison } from '../report/compare.ts';
import { outcomeOf, renderMarkdown, writeSummaryFiles } from '../report/files.ts';
import { checkGates, cellLabel, summarize } from '../report/summarize.ts';
import { gateSchema, reportedRunSchema, type Gate, type PriceTable, type ReportedRun, type Summary } from '../report/types.ts';
import { parseInput } from '../input.ts';
import { HARNESS_RUN_ATTACHMENT } from './fixtures.ts';

export interface HarnessReporterOptions {
  /** Where summary.json, summary.md and index.html go, relative to the config file. */
  outputDir?: string;
  /** Cells that must stay within limits; by default every cell: no false success at all. */
  gates?: Gate[];
  prices?: PriceTable;
  /** One line per finished run, with the count done and left. */
  progress?: boolean;
  /** A summary.json from an earlier run: each cell's change is printed, flagged where the intervals part. */
  baseline?: string;
  /** Set by Playwright: `'merge'` inside merge-reports. */
  _mode?: string;
}

/** Partial summaries are written at most this often while a matrix runs. */
const WRITE_INTERVAL_MS = 1000;

/**
 * `harness-eval/reporter`: turns the `harness-run.json` attachment of every test into cells and
 * their numbers. It reads nothing else, so `merge-reports` of shards gives the same summary.
 */
export default class HarnessReporter implements Reporter {
  private readonly runs: ReportedRun[] = [];
  private readonly gates: Gate[];
  /** Read when the config loads, so a bad baseline fails at once, in one line. */
  private readonly baseline?: Summary;
  private outputDir = '';
  private total = 0;
  private done = 0;
  private lastWrite = 0;
  private writing: Promise<unknown> = Promise.resolve();

  constructor(private readonly options: HarnessReporterOptions = {}) {
    this.baseline = options.baseline ? readSummary(options.baseline) : undefined;
    this.gates = (options.gates ?? [{ maxFalseSuccessRate: 0 }]).map((gate, index) => parseInput(gateSchema, gate, `harness-eval reporter gates[${index}]`));
  }

  printsToStdio(): boolean {
    return this.options.progress !== false;
  }

  onBegin(config: FullConfig, suite: Suite): void {
    this.outputDir = resolve(config.configFile ? dirname(config.configFile) : config.rootDir, this.options.outputDir ?? 'reports');
    this.total = suite.allTests().length;
  }

  onTestEnd(test: TestCase, result: TestResult): void {
    this.done += 1;
    const runs = result.attachments.filter((attachment) => attachment.name === HARNESS_RUN_ATTACHMENT).map((attachment) => {
      const json = attachment.body ? attachment.body.toString('utf8') : readFileSync(attachment.path!, 'utf8');
      return parseInput(reportedRunSchema, JSON.parse(json), `${HARNESS_RUN_ATTACHMENT} of "${test.title}"`);
    });
    this.runs.push(...runs);
    if (this.options.progress !== false) this.printProgress(test, result, runs);
    if (Date.now() - this.lastWrite >= WRITE_INTERVAL_MS) void this.write(false);
  }

  async onEnd(result: FullResult): Promise<{ status?: FullResult['status'] } | undefined> {
    const summary = await this.write(result.status !== 'interrupted');
    if (process.env.GITHUB_STEP_SUMMARY) appendFileSync(process.env.GITHUB_STEP_SUMMARY, renderMarkdown(summary));
    console.log(`harness-eval: ${summary.totals.runs} runs in ${summary.cells.length} cells; report in ${this.outputDir}`);
    if (this.baseline) console.log(renderComparison(compareSummaries(this.baseline, summary)));
    const breaches = checkGates(summary, this.gates);
    if (breaches.length === 0) return undefined;
    console.log(`harness-eval: gate breached in ${breaches.length} cell${breaches.length === 1 ? '' : 's'}:`);
    for (const breach of breaches) console.log(`  ${breach.cell}: ${breach.rule}`);
    // merge-reports ignores the status onEnd returns and fails only when a reporter throws.
    if (this.options._mode === 'merge') throw new Error(`harness-eval: gate breached in ${breaches.length} cell${breaches.length === 1 ? '' : 's'}`);
    return { status: 'failed' };
  }

  /** Writes are chained, so a late partial write never lands after the final one. */
  private write(complete: boolean) {
    this.lastWrite = Date.now();
    const summary = summarize(this.runs, { prices: this.options.prices, complete });
    const runs = [...this.runs];
    const written = this.writing.then(() => writeSummaryFiles(this.outputDir, summary, runs));
    this.writing = written.catch(() => undefined);
    return written.then(() => summary);
  }

  private printProgress(test: TestCase, result: TestResult, runs: ReportedRun[]): void {
    const count = `[${this.done}/${this.total}, ${this.total - this.done} left]`;
    const seconds = `${(result.duration / 1000).toFixed(1)} s`;
    if (runs.length === 0) console.log(`${count} ${test.parent.project()?.name ?? ''} › ${test.title}: ${result.status}, ${seconds}`);
    for (const run of runs) {
      console.log(`${count} ${cellLabel(run)}: ${outcomeOf(run)}, ${run.iterations} iterations, ${run.stopReason}, ${seconds}`);
    }
    // Failures keep their whole message: the matchers' lines say what was claimed and found.
    if (result.status === 'failed' || result.status === 'timedOut') console.log(indent(result.error?.message ?? result.status));
  }
}

function indent(text: string): string {
  return text.split('\n').map((line) => `    ${line}`).join('\n');
}
