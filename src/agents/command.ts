import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants, statSync } from 'node:fs';
import { mkdir, open, rm } from 'node:fs/promises';
import { basename, delimiter, join, resolve } from 'node:path';
import { z } from 'zod';
import { redact } from '../harness/trace.ts';
import { InputError, parseInput } from '../input.ts';
import type { Agent, AgentRun } from '../eval/agent.ts';
import { launchCdpBrowser } from './cdp-browser.ts';
import { foreignAgent, readClaim, type ForeignOutcome } from './foreign.ts';

export const commandAgentOptionsSchema = z
  .object({
    /** The agent's name in cells (default: the script's file name, else the program's). */
    name: z.string().min(1).optional(),
    /** Where the command runs (default: the current folder). */
    cwd: z.string().min(1).optional(),
    /** More environment for the command (PATH and HOME are passed; nothing else of harness-eval's own environment is). */
    env: z
      .record(z.string(), z.string().refine((value) => !value.includes('\0'), 'contains a NUL byte'))
      .superRefine((env, context) => {
        for (const key of Object.keys(env)) {
          const problem = key === '' ? 'an empty name' : key.includes('\0') ? 'its name contains a NUL byte' : key.includes('=') ? 'its name contains "="' : undefined;
          if (problem) context.addIssue({ code: 'custom', path: [key], message: problem });
        }
      })
      .default({}),
    /** The command's own time limit; the test's timeout also stops it. At either, its whole process group is killed. */
    timeoutMs: z.number().int().positive().optional(),
    /** Give the command the site's account as HN_USERNAME / HN_PASSWORD. */
    account: z.boolean().default(false),
  })
  .strict();
export type CommandAgentOptions = z.input<typeof commandAgentOptionsSchema>;

const argvSchema = z.array(z.string().min(1)).min(1);

/** Of harness-eval's own environment, only what any program needs to start: never its keys. */
const INHERITED_ENV = ['PATH', 'HOME', 'LANG', 'LC_ALL', 'TMPDIR', 'SYSTEMROOT'];
/** Each of stdout and stderr is attached up to this size: a chatty agent cannot fill the report. */
export const OUTPUT_CAP_BYTES = 1024 * 1024;
/** Between SIGTERM to the process group and SIGKILL: a moment to flush, not to go on. */
const TERM_GRACE_MS = 1_000;
/** After the command exits, how long its output pipes may take to drain (a grandchild in its own session may hold them). */
const DRAIN_MS = 1_000;

/**
 * A command in any language as the agent. It starts in its own process group with a minimal
 * environment and the run's: HARNESS_TASK, HARNESS_SITE_URL, HARNESS_CDP_URL, OPENAI_BASE_URL,
 * OPENAI_API_KEY (the gateway's token for this run), OLLAMA_HOST and HARNESS_CLAIM_FILE, where it
 * writes its claim as JSON. At its time limit the whole group is killed; stdout and stderr are
 * attached to the test, redacted.
 */
export function commandAgent(argv: readonly string[], options: CommandAgentOptions = {}): Agent {
  const command = parseInput(argvSchema, argv, 'commandAgent() argv');
  // A NUL byte cannot reach a program (node throws a stack at spawn): named here, in one line.
  const nul = command.findIndex((arg) => arg.includes('\0'));
  if (nul !== -1) throw new InputError(`commandAgent() argv[${nul}]: contains a NUL byte`);
  const { cwd, env, timeoutMs, account, ...named } = parseInput(commandAgentOptionsSchema, options, 'commandAgent() options');
  // A program that is not there is bad input, not a run: named now, and again before each run starts.
  const check = () => findProgram(command[0]!, cwd, env.PATH ?? process.env.PATH);
  check();
  const name = named.name ?? defaultName(command, cwd);
  // The environment's names only: its values may be keys, and the condition is written to every report.
  const condition = { agent: 'command', argv: command, ...(cwd && { cwd }), ...(timeoutMs && { timeoutMs }), account, ...(Object.keys(env).length > 0 && { envKeys: Object.keys(env).sort() }) };
  return foreignAgent({ name, condition, account, prepare: check }, async (input, run) => {
    const claimFile = join(run.outputDir, 'agent-claim.json');
    await mkdir(run.outputDir, { recursive: true });
    await rm(claimFile, { force: true });
    const browser = await launchCdpBrowser(run.site);
    try {
      const harnessEnv: Record<string, string> = {
        HARNESS_TASK: input.task,
        HARNESS_SITE_URL: input.site.url,
        HARNESS_CDP_URL: browser.url,
        OPENAI_BASE_URL: input.model.baseURL,
        OPENAI_API_KEY: input.model.apiKey,
        OLLAMA_HOST: input.model.ollamaHost,
        HARNESS_CLAIM_FILE: claimFile,
        ...(input.site.account && { HN_USERNAME: input.site.account.username, HN_PASSWORD: input.site.account.password }),
      };
      const { stdout, stderr, ...exit } = await runCommand(command, { cwd, env: { ...inheritedEnv(), ...env, ...harnessEnv }, timeoutMs, signal: input.signal });
      input.trace.record('command ended', exit);
      const secrets = [...run.secrets, input.model.apiKey];
      await attachOutput(run, 'agent-stdout.txt', stdout, secrets);
      await attachOutput(run, 'agent-stderr.txt', stderr, secrets);
      return await outcomeOf(exit, claimFile, timeoutMs);
    } finally {
      await browser.close();
    }
  });
}

/** How a command ended: by itself (its exit code or signal), or killed at a time limit. */
type Exit = { kind: 'exited'; code: number | null; signal: NodeJS.Signals | null } | { kind: 'killed'; by: 'timeoutMs' | 'signal' } | { kind: 'unstarted'; message: string };
type Ended = Exit & { stdout: Output; stderr: Output };

async function outcomeOf(ended: Exit, claimFile: string, timeoutMs: number | undefined): Promise<ForeignOutcome> {
  // Not there, or not executable (gone since the check before the run): bad input, never a run.
  if (ended.kind === 'unstarted') throw new InputError(`commandAgent: ${ended.message}`);
  if (ended.kind === 'killed') {
    const reason = ended.by === 'timeoutMs' ? `killed at its time limit (${timeoutMs} ms)` : 'killed at the run’s time limit';
    return { reason, stopReason: 'timeout' };
  }
  const read = await readCapped(claimFile, CLAIM_FILE_CAP_BYTES).catch(() => undefined);
  if (read === undefined) {
    if (ended.code === 0) return { reason: 'wrote no claim file' };
    const how = ended.signal ? `was killed by ${ended.signal}` : `exited with code ${ended.code}`;
    return { reason: `${how} and wrote no claim file`, stopReason: 'error' };
  }
  if (read.size > CLAIM_FILE_CAP_BYTES) return { reason: `the claim file is ${read.size} bytes, past the cap of ${CLAIM_FILE_CAP_BYTES}: only its first ${CLAIM_FILE_CAP_BYTES} were read, and they are no claim` };
  // A byte-order mark (as some editors and Windows tools write) is not part of the JSON.
  const text = read.bytes.toString('utf8').replace(/^\uFEFF/, '');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { reason: `the claim file is not JSON (${(error as Error).message.split('\n')[0]!.slice(0, 200)})` };
  }
  return readClaim(value, 'the claim file');
}

/** The most of a claim file that is read: a claim is a few lines, and a flood must not fill the memory. */
export const CLAIM_FILE_CAP_BYTES = 1024 * 1024;

/** A file's first `cap` bytes, and its whole size. */
async function readCapped(file: string, cap: number): Promise<{ bytes: Buffer; size: number }> {
  const handle = await open(file, 'r');
  try {
    const { size } = await handle.stat();
    const bytes = Buffer.alloc(Math.min(size, cap));
    const { bytesRead } = await handle.read(bytes, 0, bytes.length, 0);
    return { bytes: bytes.subarray(0, bytesRead), size };
  } finally {
    await handle.close();
  }
}

interface RunOptions {
  cwd?: string;
  env: Record<string, string>;
  timeoutMs?: number;
  signal: AbortSignal;
}

/**
 * Runs the command in its own process group and waits for it; at `timeoutMs` or when `signal`
 * aborts, kills the whole group. When the command ends by itself, the group is killed too: what it
 * left running in the background must not outlive the run.
 */
function runCommand(argv: string[], { cwd, env, timeoutMs, signal }: RunOptions): Promise<Ended> {
  return new Promise((resolve) => {
    const child = spawn(argv[0]!, argv.slice(1), { cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    const stdout = capture(child.stdout!);
    const stderr = capture(child.stderr!);
    let killedBy: 'timeoutMs' | 'signal' | undefined;
    const stop = (by: 'timeoutMs' | 'signal') => {
      if (killedBy || child.exitCode !== null || child.signalCode !== null) return;
      killedBy = by;
      killGroup(child, 'SIGTERM');
      setTimeout(() => killGroup(child, 'SIGKILL'), TERM_GRACE_MS).unref();
    };
    const timer = timeoutMs === undefined ? undefined : setTimeout(() => stop('timeoutMs'), timeoutMs);
    const onAbort = () => stop('signal');
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
    let finished = false;
    const done = (exit: Exit) => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      killGroup(child, 'SIGKILL');
      // The group is gone: the pipes close at once, unless something outside it still holds them.
      void Promise.race([Promise.all([stdout.closed, stderr.closed]), new Promise((wake) => setTimeout(wake, DRAIN_MS))]).then(() => {
        child.stdout!.destroy();
        child.stderr!.destroy();
        resolve({ ...exit, stdout: stdout.output(), stderr: stderr.output() });
      });
    };
    child.once('error', (error) => done({ kind: 'unstarted', message: spawnProblem(argv[0]!, error as NodeJS.ErrnoException) }));
    child.once('exit', (code, exitSignal) => done(killedBy ? { kind: 'killed', by: killedBy } : { kind: 'exited', code, signal: exitSignal }));
  });
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // ESRCH: the group has no process left.
  }
}

interface Output {
  /** The first bytes, a little past the cap: a secret across the cap is still whole when redacted. */
  head: Buffer;
  /** Every byte written. */
  total: number;
}

/** Bytes kept past the cap, so that the secrets redacted are whole (any key or password is shorter). */
const SECRET_SLACK_BYTES = 4096;

/** A stream's first bytes, and how many it wrote in all. */
function capture(stream: NodeJS.ReadableStream) {
  const chunks: Buffer[] = [];
  let total = 0;
  const closed = new Promise<void>((resolve) => stream.once('close', resolve));
  stream.on('data', (chunk: Buffer) => {
    chunks.push(chunk.subarray(0, Math.max(0, OUTPUT_CAP_BYTES + SECRET_SLACK_BYTES - total)));
    total += chunk.length;
  });
  return { closed, output: (): Output => ({ head: Buffer.concat(chunks), total }) };
}

/** Attached redacted, then cut at the cap (redacting first, so no secret is cut in two). */
async function attachOutput(run: AgentRun, name: string, { head, total }: Output, secrets: readonly string[]): Promise<void> {
  if (total === 0) return;
  const text = redact(head.toString('utf8'), secrets);
  const body = total > OUTPUT_CAP_BYTES ? `${text.slice(0, OUTPUT_CAP_BYTES)}\n[harness-eval: cut here; it wrote ${total} bytes in all]\n` : text;
  await run.attach(name, body, 'text/plain');
}

/** A spawn that failed, in one line: `no-such-program: command not found`, `./agent.sh: not executable (EACCES)`. */
function spawnProblem(program: string, error: NodeJS.ErrnoException): string {
  // A file that is there and still ENOENT: the interpreter its #! line names is not.
  if (error.code === 'ENOENT' && program.includes('/') && statSync(program, { throwIfNoEntry: false })?.isFile()) return `${program}: cannot start (ENOENT: the interpreter its #! line names is not there)`;
  if (error.code === 'ENOENT') return `${program}: ${program.includes('/') ? 'no such file' : 'command not found'}`;
  if (error.code === 'EACCES') return `${program}: not executable (EACCES)`;
  return `${program}: cannot start (${error.code ?? error.message.split('\n')[0]})`;
}

/**
 * The program as spawn would find it: a path (relative to `cwd`) that is an executable file, or a
 * name on PATH. Throws an InputError naming what is wrong.
 */
function findProgram(program: string, cwd: string | undefined, path: string | undefined): void {
  if (cwd !== undefined && !statSync(resolve(cwd), { throwIfNoEntry: false })?.isDirectory()) throw new InputError(`commandAgent() options: cwd: no folder at ${resolve(cwd)}`);
  const executable = (file: string) => {
    if (!statSync(file, { throwIfNoEntry: false })?.isFile()) return false;
    accessSync(file, constants.X_OK);
    return true;
  };
  try {
    if (program.includes('/')) {
      if (!executable(resolve(cwd ?? '.', program))) throw Object.assign(new Error(), { code: 'ENOENT' });
      return;
    }
    let denied: NodeJS.ErrnoException | undefined;
    for (const dir of (path ?? '').split(delimiter).filter(Boolean)) {
      try {
        if (executable(resolve(cwd ?? '.', dir, program))) return;
      } catch (error) {
        denied ??= error as NodeJS.ErrnoException;
      }
    }
    throw denied ?? Object.assign(new Error(), { code: 'ENOENT' });
  } catch (error) {
    throw new InputError(`commandAgent: ${spawnProblem(program, error as NodeJS.ErrnoException)}`);
  }
}

function inheritedEnv(): Record<string, string> {
  return Object.fromEntries(INHERITED_ENV.flatMap((name) => (process.env[name] === undefined ? [] : [[name, process.env[name]!]])));
}

/** The script's file name (the first argument that is a file: `agent.py` in `python3 -u agent.py`), else the program's. */
function defaultName(argv: readonly string[], cwd = '.'): string {
  const script = argv.slice(1).find((arg) => !arg.startsWith('-') && statSync(resolve(cwd, arg), { throwIfNoEntry: false })?.isFile());
  return basename(script ?? argv[0]!);
}
