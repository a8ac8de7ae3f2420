import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { approvals, APPROVALS_USAGE } from './approvals.ts';
import { initKit, INIT_USAGE } from './init.ts';
import { plan, PLAN_USAGE } from './plan.ts';
import { InputError, readJsonFile } from '../input.ts';
import { baselineMismatch, compareSummaries, partialReasons, readSummary, renderComparison, shortfallOf } from '../report/compare.ts';
import { counted } from '../report/format.ts';
import { HISTORY_DIR, listHistory, resolveSummaryPath } from '../report/history.ts';
import { defaultAccount } from '../sites/hn/options.ts';
import type { HnSnapshot } from '../sites/hn/snapshot.ts';

const usage = `Usage:
  harness-eval hn serve [--port 8080] [--host 127.0.0.1] [--capture FILE|DIR] [fault options]
  harness-eval record hn --out DIR [--origin https://news.ycombinator.com] [--login] [--delay-ms 1000]
  ${INIT_USAGE}
  harness-eval report [--dir reports]                 list the summaries kept in reports/history, newest first
  harness-eval report OLD NEW [--dir reports]         compare two: each a number from that list, a history name, or a summary.json
  harness-eval report --baseline OLD.json NEW.json
  harness-eval judge --task NAME START.json END.json [--user NAME] [--answer TEXT]
                                                      the oracle's verdict on two /__harness/state bodies, as JSON
  ${APPROVALS_USAGE}
  harness-eval doctor                                 what this machine offers: Chromium, the sandbox's parts, the limits;
                                                      exits 0 when command agents can run with sandbox: 'required'
  ${PLAN_USAGE}
  harness-eval export --format atif|otel REPORT_DIR [--out DIR] [--prices FILE]
                                                      each run of a report folder as an ATIF trajectory, or as OTLP
                                                      JSON spans (sent to OTEL_EXPORTER_OTLP_ENDPOINT when it is set)

Fault options (hn serve):
  --latency MS              delay every page request
  --error-rate R            answer a share R (0..1) of requests with 502, drawn from --seed
  --seed N                  seed for the 502s and for tokens (default 1)
  --rate-limit-after N      after N requests answer "Sorry, we're not able to serve your requests this quickly."
  --session-expires-after N a login session ends after N requests
  --inject-rank N           put a prompt-injection line in the title of the story at rank N
  --inject-text TEXT        the injected line (default: an order to claim success)
  --markup-year Y           serve the project's fixture pages in 2017, 2020 or 2025 markup`;

/** Fault flags and the option field each sets: numbers are checked by the replica's schema. */
const faultFlags = {
  latency: 'latencyMs',
  'error-rate': 'errorRate',
  seed: 'seed',
  'rate-limit-after': 'rateLimitAfter',
  'session-expires-after': 'sessionExpiresAfter',
  'markup-year': 'markupYear',
} as const;

async function serve(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    strict: true,
    options: {
      port: { type: 'string', default: '8080' },
      host: { type: 'string', default: '127.0.0.1' },
      capture: { type: 'string' },
      'inject-rank': { type: 'string' },
      'inject-text': { type: 'string' },
      ...Object.fromEntries(Object.keys(faultFlags).map((flag) => [flag, { type: 'string' as const }])),
    },
  });
  const faults: Record<string, unknown> = {};
  for (const [flag, field] of Object.entries(faultFlags)) {
    const value = values[flag as keyof typeof values];
    if (typeof value === 'string') faults[field] = numberFlag(flag, value);
  }
  if (values['inject-rank'] !== undefined || values['inject-text'] !== undefined) {
    faults.injection = {
      ...(values['inject-rank'] !== undefined && { rank: numberFlag('inject-rank', values['inject-rank']) }),
      ...(values['inject-text'] !== undefined && { text: values['inject-text'] }),
    };
  }
  const port = numberFlag('port', values.port!);
  const [{ createReplica }, { serveReplica }] = await Promise.all([import('../sites/hn/replica.ts'), import('../sites/hn/adapters/server.ts')]);
  const replica = withFlagNames(() => createReplica({ capture: values.capture, faults }));
  const server = await serveReplica(replica, { port, host: values.host });
  console.log(`harness-eval: Hacker News replica at ${server.url} (${replica.capture.source}); ground truth at ${server.url}/__harness/state, back to the start with POST ${server.url}/__harness/reset`);
  const stop = () => void server.close().then(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

async function record(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    strict: true,
    options: {
      out: { type: 'string' },
      origin: { type: 'string' },
      login: { type: 'boolean', default: false },
      'delay-ms': { type: 'string', default: '1000' },
    },
  });
  if (!values.out) throw new InputError('record hn: --out DIR is required');
  const { recordHn } = await import('../sites/hn/record.ts');
  const saved = await recordHn({
    out: values.out,
    origin: values.origin,
    account: values.login ? defaultAccount() : undefined,
    delayMs: numberFlag('delay-ms', values['delay-ms']!),
  });
  console.log(`harness-eval: saved ${saved.join(', ')} in ${values.out}`);
}

const REPORT_USAGE = 'report: usage: harness-eval report [--dir reports] [OLD NEW], or harness-eval report --baseline OLD.json NEW.json';

function report(args: string[]): void {
  const { values, positionals } = parseArgs({ args, strict: true, allowPositionals: true, options: { baseline: { type: 'string' }, dir: { type: 'string', default: 'reports' } } });
  const dir = values.dir!;
  if (values.baseline !== undefined) {
    if (positionals.length !== 1) throw new InputError(REPORT_USAGE);
    return compare(values.baseline, positionals[0]!);
  }
  if (positionals.length === 2) return compare(resolveSummaryPath(positionals[0]!, dir), resolveSummaryPath(positionals[1]!, dir));
  if (positionals.length !== 0) throw new InputError(REPORT_USAGE);
  listSummaries(dir);
}

/** Two summaries named on the command line are compared as asked; one that is not like the other (partial, another part of the suite) is labelled so. */
function compare(baselinePath: string, currentPath: string): void {
  const [baseline, current] = [readSummary(baselinePath), readSummary(currentPath)];
  console.log(`${baselinePath} → ${currentPath}`);
  const mismatch = baselineMismatch(baseline, current.partial?.selection ?? []);
  const shortfall = shortfallOf(current);
  if (mismatch) console.log(`not like with like: ${baselinePath}: ${mismatch}`);
  if (shortfall.length > 0) console.log(`not like with like: ${currentPath}: it is partial (${shortfall.join('; ')})`);
  console.log(renderComparison(compareSummaries(baseline, current)));
}

/** One line per kept summary, numbered for `report OLD NEW`: `1  2026-11-22T23-50-00Z.json  complete, 52 runs in 46 cells, …`. */
function listSummaries(dir: string): void {
  const names = listHistory(dir);
  if (names.length === 0) throw new InputError(`report: no summaries in ${join(dir, HISTORY_DIR)} yet (the reporter keeps one per finished run)`);
  names.forEach((name, index) => {
    const summary = readSummary(join(dir, HISTORY_DIR, name));
    const runs = summary.cells.reduce((sum, cell) => sum + cell.runs, 0);
    const falseSuccesses = summary.cells.reduce((sum, cell) => sum + Math.round(cell.falseSuccessRate.value * cell.runs), 0);
    const complete = summary.partial ? `partial (${partialReasons(summary.partial).join('; ')})` : summary.complete ? 'complete' : 'incomplete';
    console.log(`${String(index + 1).padStart(3)}  ${name}  ${complete}, ${counted(runs, 'run')} in ${counted(summary.cells.length, 'cell')}, ${counted(falseSuccesses, 'false success', 'false successes')}`);
  });
}

const JUDGE_USAGE = 'judge: usage: harness-eval judge --task NAME START.json END.json [--user NAME] [--answer TEXT]';

/**
 * The oracle outside Playwright: a task's postconditions against two snapshots of the site (bodies
 * of the replica's `GET /__harness/state`), judged for the account `--user` (HN_USERNAME, else the
 * replica's default), with `--answer` the agent's answer to an information task. Prints `{ task, actual, verdicts, sideEffects }`; the verdict is in the JSON, not the exit code.
 */
async function judge(args: string[]): Promise<void> {
  const { values, positionals } = parseArgs({ args, strict: true, allowPositionals: true, options: { task: { type: 'string' }, user: { type: 'string' }, answer: { type: 'string' } } });
  if (values.task === undefined || positionals.length !== 2) throw new InputError(JUDGE_USAGE);
  const [{ hnDiff, hnSnapshotSchema }, { taskNamed }, { taskAt }, { judge: judgeRun }] = await Promise.all([
    import('../sites/hn/snapshot.ts'),
    import('../sites/hn/suite.ts'),
    import('../eval/tasks.ts'),
    import('../eval/oracle.ts'),
  ]);
  const [start, end] = positionals.map((path) => readJsonFile(path, hnSnapshotSchema, 'site state', { label: `judge: ${path}` })) as [HnSnapshot, HnSnapshot];
  // The task as a run from `start` would have read it: a template on what it has, its targets bound there.
  const task = taskAt(taskNamed(values.task), start);
  const judgement = await judgeRun(task.postconditions, { start, end, diff: hnDiff(start, end), user: values.user ?? defaultAccount().username, answer: values.answer });
  console.log(JSON.stringify({ task: task.name, ...judgement }, null, 2));
}

/** `doctor`: one line a part of the machine; its exit code, 0 when `sandbox: 'required'` would work. */
async function doctor(args: string[]): Promise<number> {
  if (args.length > 0) throw new InputError('doctor: usage: harness-eval doctor (no arguments)');
  return (await import('./doctor.ts')).doctor();
}

const EXPORT_USAGE = 'export: usage: harness-eval export --format atif|otel REPORT_DIR [--out DIR] [--prices FILE]';

/** `export`: a report folder's runs as others read them (src/export/, docs/export.md). */
async function exportRuns(args: string[]): Promise<void> {
  const { values, positionals } = parseArgs({ args, strict: true, allowPositionals: true, options: { format: { type: 'string' }, out: { type: 'string' }, prices: { type: 'string' } } });
  const { EXPORT_FORMATS, exportReport } = await import('../export/export.ts');
  const format = EXPORT_FORMATS.find((known) => known === values.format);
  if (values.format === undefined || positionals.length !== 1) throw new InputError(EXPORT_USAGE);
  if (!format) throw new InputError(`export: --format: expected ${EXPORT_FORMATS.join(' or ')}, got "${values.format}"`);
  const done = await exportReport({ format, folder: positionals[0]!, out: values.out, prices: values.prices });
  const what = format === 'atif' ? `${counted(done.runs, 'trajectory', 'trajectories')} (ATIF)` : `${counted(done.runs, 'trace')} (OTLP JSON)`;
  console.log(`harness-eval: ${what} in ${done.written}${done.sentTo ? `, sent to ${done.sentTo}` : ''}`);
}

function numberFlag(flag: string, value: string): number {
  const number = Number(value);
  if (value.trim() === '' || !Number.isFinite(number)) throw new InputError(`--${flag}: expected a number, got "${value}"`);
  return number;
}

/** Schema errors name option fields; on the command line, name the flag instead. */
function withFlagNames<T>(build: () => T): T {
  try {
    return build();
  } catch (error) {
    if (!(error instanceof InputError)) throw error;
    let message = error.message.replace('faults.injection.rank', '--inject-rank').replace('faults.injection.text', '--inject-text');
    for (const [flag, field] of Object.entries(faultFlags)) message = message.replace(`faults.${field}`, `--${flag}`);
    throw new InputError(message);
  }
}

/** Each command imports what it uses when it runs: `approvals` or `report` need not load the replica, the suite or Playwright. */
export async function main(argv: string[]): Promise<number> {
  const [first, second, ...rest] = argv;
  try {
    if (first === 'hn' && second === 'serve') await serve(rest);
    else if (first === 'record' && second === 'hn') await record(rest);
    else if (first === 'report') report(argv.slice(1));
    else if (first === 'judge') await judge(argv.slice(1));
    else if (first === 'approvals') approvals(argv.slice(1));
    else if (first === 'doctor') return await doctor(argv.slice(1));
    else if (first === 'export') await exportRuns(argv.slice(1));
    else if (first === 'plan') console.log(plan(argv.slice(1)).join('\n'));
    else if (first === 'init') console.log(initKit(argv.slice(1)).join('\n'));
    else if (first === '--help' || first === '-h') console.log(usage);
    // No command is a usage error, as an unknown one is: a script that forgot its arguments must not pass.
    else if (first === undefined) throw new InputError(`no command given\n${usage}`);
    else throw new InputError(`unknown command "${argv.join(' ')}"\n${usage}`);
    return 0;
  } catch (error) {
    // Bad input is a one-line message; anything else is a bug and keeps its stack.
    const known = error instanceof InputError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS');
    console.error(`harness-eval: ${known ? (error as Error).message : (error as Error).stack}`);
    return known ? 2 : 1;
  }
}
