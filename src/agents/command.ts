import { spawn, type ChildProcess } from 'node:child_process';
import { channel } from 'node:diagnostics_channel';
import { accessSync, closeSync, constants, existsSync, mkdirSync, openSync, readFileSync, readSync, realpathSync, statSync, type BigIntStats } from 'node:fs';
import { lstat, open, rm } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { basename, delimiter, dirname, join, resolve, sep } from 'node:path';
import { z } from 'zod';
import { redact } from '../harness/trace.ts';
import { InputError, parseInput } from '../input.ts';
import type { BrowserContext } from '@playwright/test';
import type { Readable, Writable } from 'node:stream';
import type { Agent, AgentInput, AgentRun, Containment } from '../core/agent.ts';
import type { Site } from '../core/site.ts';
import { launchCdpBrowser, type CdpBrowser } from './cdp-browser.ts';
import { serveMcp, type McpEndpoint } from './mcp-surface.ts';
import { openMcpBrowser } from '../tools/mcp.ts';
import { foreignAgent, readClaim, type ForeignOutcome, type RunEndpoints } from './foreign.ts';
import { canaryList, makeCanaries, type Canaries } from './canaries.ts';
import { gatewayOptionsSchema } from './gateway.ts';
import { cgroupParent } from './sandbox-cgroup.ts';
import { canariesAhead, processExit, sandboxModeSchema, stdioWithoutInherited, sandboxUnavailable, startSandbox, startupEnv, unreachable, type AgentCommand, type AgentExit, type Sandbox, type SandboxMode, type SandboxStage } from './sandbox.ts';
import { DEFAULT_SANDBOX_LIMITS, sandboxLimitsSchema } from './sandbox-limits.ts';
import { closedFolders, inside, isFile, maskedFolders } from './sandbox-mounts.ts';
import { canariesReaching } from '../serve.ts';
import type { Escapes } from '../core/agent.ts';
import type { TraceEventBody } from '../core/trace.ts';
import type { ModelWaits } from '../core/model.ts';

export const commandAgentOptionsSchema = z
  .object({
    /** The agent's name in cells (default: see defaultName). */
    name: z.string().min(1).optional(),
    /** Where the command runs (default: the current folder). */
    cwd: z.string().min(1).optional(),
    /** More environment for the command (PATH and HOME are passed; nothing else of harness-eval's own environment is); names as sh takes them. */
    env: z
      .record(z.string(), z.string().refine((value) => !value.includes('\0'), 'contains a NUL byte'))
      .superRefine((env, context) => {
        for (const key of Object.keys(env)) {
          const problem = envNameProblem(key);
          if (problem) context.addIssue({ code: 'custom', path: [key], message: problem });
        }
      })
      .default({}),
    /** The command's own time limit, its model waits (a slot, a rate limit) left out; the test's timeout also stops it. At either, every process it started is killed. */
    timeoutMs: z.number().int().positive().optional(),
    /** Give the command a login made for this run (the site's account, a password of its own) as HARNESS_SITE_USERNAME / HARNESS_SITE_PASSWORD. */
    account: z.boolean().default(false),
    /** Run it in a bubblewrap sandbox: `auto` where bwrap works (else uncontained, and the run says so), `required`, or `none`. */
    sandbox: sandboxModeSchema.default('auto'),
    /** The run's model gateway: `{ maxBodyBytes }`. */
    gateway: gatewayOptionsSchema.optional(),
    /** What its sandbox may use (processes, memory, files, /tmp…): DEFAULT_SANDBOX_LIMITS where not given. */
    limits: sandboxLimitsSchema.optional(),
    /** Secret-looking files in its working folder or above (`.env`, `.npmrc`, `.netrc`…) to leave in its view; every other is masked with a decoy. Paths relative to `cwd`. */
    expose: z.array(z.string().min(1)).default([]),
    /** More files or folders its sandbox shows read-only (data it reads, a program its own resolution does not find): absolute or relative to `cwd`, each must exist. */
    show: z.array(z.string().min(1)).default([]),
    /** Let its Chromium download, into the run's folder (`downloads/`), at most `maxFiles` files and `maxBytes` bytes in all; without it, every download is refused. */
    downloads: z.object({ maxBytes: z.int().positive(), maxFiles: z.int().positive() }).strict().optional(),
  })
  .strict();
export type CommandAgentOptions = z.input<typeof commandAgentOptionsSchema>;

/** What is wrong with an environment variable's name, if anything. */
function envNameProblem(name: string): string | undefined {
  if (name === '') return 'an empty name';
  if (name.includes('\0')) return 'its name contains a NUL byte';
  if (name.includes('=')) return 'its name contains "="';
  // The sandbox's relay is sh, which sets only such names (`export NAME=…`): one rule, sandboxed or not.
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) return 'not a name sh can set (letters, digits and _, not starting with a digit)';
  return undefined;
}

const argvSchema = z.array(z.string().min(1)).min(1);

/** Each of stdout and stderr is attached up to this size: a chatty agent cannot fill the report. */
export const OUTPUT_CAP_BYTES = 1024 * 1024;
/** Between SIGTERM and SIGKILL: a moment to flush, not to go on. */
const TERM_GRACE_MS = 1_000;
/** After the command is killed, how long its output pipes may take to drain (unsandboxed, a grandchild in its own session may hold them). */
const DRAIN_MS = 1_000;

/** Stages of a command agent's run, as reached (performance.now()): its setUp began, the command was launched, it exited, what it left was counted and killed, its output ended, its setUp closed. */
export type CommandStage = 'setUp' | 'launched' | 'exited' | 'killed' | 'drained' | 'closed';

/** What each run publishes on COMMAND_AGENT_STAGES once it closed, when someone listens (bench:sandbox): its stages, and its sandbox's. */
export interface CommandAgentStages {
  sandboxed: boolean;
  stages: Partial<Record<CommandStage | SandboxStage, number>>;
}

/** A node:diagnostics_channel: nothing is published (nor built) unless subscribed to. */
export const COMMAND_AGENT_STAGES = 'harness-eval:command-agent-stages';
const stagesChannel = channel(COMMAND_AGENT_STAGES);

/**
 * A command in any language as the agent. It starts with a minimal environment and the run's:
 * HARNESS_TASK, HARNESS_SITE_URL, HARNESS_CDP_URL, HARNESS_MCP_URL, OPENAI_BASE_URL, OPENAI_API_KEY (the gateway's
 * token for this run), OLLAMA_HOST, ANTHROPIC_BASE_URL, ANTHROPIC_API_KEY, GOOGLE_GEMINI_BASE_URL,
 * GEMINI_API_KEY (the same token) and HARNESS_CLAIM_FILE, where it writes its claim as JSON. It is
 * untrusted: on Linux it runs in a bubblewrap sandbox (sandbox.ts), and it is never given the
 * site's own password, only a login made for its run. At its time limit every process it started
 * is killed; stdout and stderr are attached to the test, redacted.
 */
export function commandAgent(argv: readonly string[], options: CommandAgentOptions = {}): Agent {
  return processAgent('commandAgent', argv, parseInput(commandAgentOptionsSchema, options, 'commandAgent() options'));
}

/**
 * What speaks with a command over its stdin and stdout while it runs (acp.ts's ACP client): the
 * command then gets a pipe as its stdin, and its work is over when the conversation is.
 */
export interface Protocol {
  /** What its condition holds beside a command's (`agent: 'acp'`, its layers). */
  condition: Record<string, unknown>;
  /** The names of the layers it runs, as the run records them. */
  layers: readonly string[];
  /** Its part of one run, made as the run is set up (before the browser starts): `record` writes the run's trace. */
  forRun(run: AgentRun, record: (event: TraceEventBody) => void): Speaker;
}

/** A protocol's part of one run. */
export interface Speaker {
  /** Routes of its own on the run's browser context, asked before the site's (its layers' request checks). */
  guard?: (context: BrowserContext) => Promise<void>;
  /** Begins speaking with the launched command: `mcpUrl` serves the run's browser, `context` starts it, `cwd` is where the command runs. */
  converse(io: { stdin: Writable; stdout: Readable }, input: AgentInput, where: { mcpUrl: string; context: () => Promise<BrowserContext>; cwd: string; envNames: readonly string[] }): Conversation;
}

/** A conversation with a running command. */
export interface Conversation {
  /** Settles when its work is over (`over`: its prompt answered or failed), or the command stopped speaking (`lost`): it is then ended as at a time limit, at once when over, after a moment to end by itself when lost. */
  done: Promise<'over' | 'lost'>;
  /** At a time limit, before the command is ended: asks it to stop (ACP's `session/cancel`). */
  cancel(): void;
  /** Once the command ended, what it claimed, or why nothing; `how` is how the command ended. */
  outcome(how: CommandEnd): ForeignOutcome;
}

/** How a command that was spoken to ended: ended by the harness once its conversation was over, killed at a time limit, or by itself. */
export type CommandEnd = { kind: 'closed' } | { kind: 'killed'; by: 'timeoutMs' | 'signal' } | { kind: 'exited'; code: number | null; signal: NodeJS.Signals | null };

/**
 * A command as the agent, sandboxed, with the run's environment, browser and gateway: a command
 * agent (`label` commandAgent), or, with a `protocol`, an agent spoken to over stdio (acpAgent).
 */
export function processAgent(label: string, argv: readonly string[], options: z.output<typeof commandAgentOptionsSchema>, protocol?: Protocol): Agent {
  const command = parseInput(argvSchema, argv, `${label}() argv`);
  // A NUL byte cannot reach a program (node throws a stack at spawn): named here, in one line.
  const nul = command.findIndex((arg) => arg.includes('\0'));
  if (nul !== -1) throw new InputError(`${label}() argv[${nul}]: contains a NUL byte`);
  const { cwd, env, timeoutMs, account, sandbox, gateway, limits: givenLimits, expose, show, downloads, ...named } = options;
  const limits = { ...DEFAULT_SANDBOX_LIMITS, ...givenLimits };
  // A program that is not there is bad input, not a run: named before each run starts (prepare), never
  // here, where a spec file's collection would fail and lose every test of the file.
  const path = env.PATH ?? process.env.PATH;
  const shownPaths = show.map((given) => resolve(cwd ?? '.', given));
  const check = () => {
    findProgram(label, command[0]!, cwd, path);
    const missing = shownPaths.findIndex((shown) => !existsSync(shown));
    if (missing !== -1) throw new InputError(`${label}() options: show[${missing}]: nothing at ${shownPaths[missing]}`);
  };
  const program = { argv: command, cwd, path, show: shownPaths };
  const name = named.name ?? defaultName(command);
  // The environment's names only: its values may be keys, and the condition is written to every report.
  // The folder as a path, however it was written: the fixture records it relative to the config's folder.
  const base = { agent: 'command', ...protocol?.condition, argv: command, ...(cwd && { cwd: resolve(cwd) }), ...(timeoutMs && { timeoutMs }), account, ...(Object.keys(env).length > 0 && { envKeys: Object.keys(env).sort() }), ...(downloads && { downloads }) };
  // In its sandbox's work folder, else its run's: the one folder it may write.
  const claimFileOf = (run: AgentRun, box: Sandbox | undefined) => join(box?.workDir ?? run.outputDir, 'agent-claim.json');
  const setUp = async (run: AgentRun, endpoints: Promise<RunEndpoints>, canaries: Canaries, record: (event: TraceEventBody) => void) => {
    const stages: Partial<Record<CommandStage, number>> = { setUp: performance.now() };
    const contained = sandboxed(sandbox, program);
    // The sandbox first, before anything is awaited: bwrap, its namespaces and its relay start while the rest of the run is set up and the page opens.
    mkdirSync(run.outputDir, { recursive: true });
    const box = contained ? startSandbox({ cwd: resolve(cwd ?? '.'), shown: shownFolders(program), limits, expose, canaries, stdin: protocol !== undefined }) : undefined;
    const speaker = protocol?.forRun(run, record);
    let browser: CdpBrowser | undefined;
    let mcp: McpEndpoint | undefined;
    const close = async () => {
      await Promise.allSettled([box?.close(), mcp?.close(), browser?.close()]);
      stages.closed = performance.now();
      if (stagesChannel.hasSubscribers) stagesChannel.publish({ sandboxed: box !== undefined, stages: { ...stages, ...box?.stages } } satisfies CommandAgentStages);
    };
    try {
      await rm(claimFileOf(run, box), { force: true });
      browser = await launchCdpBrowser(run.site, { ...(box && { sandbox: { identity: box.identity, view: box.view } }), ...(downloads && { downloads }), ...(speaker?.guard && { guard: speaker.guard }) });
      // The same Chromium over MCP: Playwright MCP drives it from this process, writing only in the run's folder.
      const { context } = browser;
      mcp = await serveMcp(() => openMcpBrowser({ context, outputDir: join(run.outputDir, 'playwright-mcp'), images: true }), { record });
      // The sandbox pipes the run's ports as soon as they are known, while the page opens: its socats start off the run's critical path.
      const { site, model } = await endpoints;
      await box?.forward([site, browser.url, mcp.url, model.baseURL]);
    } catch (error) {
      await close();
      throw error;
    }
    return { box, browser, mcp, close, stages, canaries, speaker };
  };
  const agent = foreignAgent({ name, condition: base, layers: protocol?.layers, account, gateway, issueCredential: true, prepare: check, containment: (site) => containment(label, sandbox, account, site, program), canaries: () => (sandboxed(sandbox, program) ? canariesAhead() : makeCanaries()), setUp }, async (input, run, prepared) => {
    const { box, browser, mcp, stages, canaries, speaker } = prepared!;
    const claimFile = claimFileOf(run, box);
    const harnessEnv: Record<string, string> = {
      HARNESS_TASK: input.task,
      HARNESS_SITE_URL: input.site.url,
      HARNESS_CDP_URL: browser.url,
      HARNESS_MCP_URL: mcp.url,
      OPENAI_BASE_URL: input.model.baseURL,
      OPENAI_API_KEY: input.model.apiKey,
      OLLAMA_HOST: input.model.ollamaHost,
      // The names Anthropic's and Google's SDKs and CLIs read (Claude Code, @google/genai, the Gemini CLI); the key is the run's token.
      ANTHROPIC_BASE_URL: input.model.anthropicBaseURL,
      ANTHROPIC_API_KEY: input.model.apiKey,
      GOOGLE_GEMINI_BASE_URL: input.model.geminiBaseURL,
      GEMINI_API_KEY: input.model.apiKey,
      HARNESS_CLAIM_FILE: claimFile,
      ...(input.site.account && { HARNESS_SITE_USERNAME: input.site.account.username, HARNESS_SITE_PASSWORD: input.site.account.password }),
    };
    if (box?.orphansKilled) input.trace.record('sandbox orphans killed', { processes: box.orphansKilled });
    const commandEnv = { ...startupEnv(), ...env, ...harnessEnv };
    const converse = speaker && ((io: { stdin: Writable; stdout: Readable }) => speaker.converse(io, input, { mcpUrl: mcp.url, context: browser.context, cwd: resolve(cwd ?? '.'), envNames: Object.keys(commandEnv) }));
    const { stdout, stderr, escapes, claim, late, conversation, ...exit } = await runCommand(command, { cwd: resolve(cwd ?? '.'), env: commandEnv, timeoutMs, waits: run.modelWaits, signal: input.signal, sandbox: box, stages, claimFile, converse });
    input.trace.record('command ended', exit);
    // What it wrote in its sandbox's work folder outlives the sandbox in its run's folder (what could not be copied is named, never thrown); so do its browser's downloads, where allowed.
    const secrets = [...run.secrets, input.model.apiKey];
    const uncopied = (await box?.copyOut(run.outputDir, secrets)) ?? [];
    await browser.keepDownloads(join(run.outputDir, 'downloads'));
    for (const failure of browser.failures) input.trace.record('browser failed to start', { reason: failure });
    for (const { name, data } of browser.events) input.trace.record(name, data);
    // Looked for before the output is redacted (the canaries are secrets of the run): a decoy it printed was found and read.
    const printed = [stdout, stderr].flatMap((output, i) => canariesReaching(canaryList(canaries), output.head.toString('utf8'), 'an artifact', i === 0 ? 'agent-stdout.txt' : 'agent-stderr.txt'));
    await attachOutput(run, 'agent-stdout.txt', stdout, secrets);
    await attachOutput(run, 'agent-stderr.txt', stderr, secrets);
    const outcome = conversation ? spokenOutcome(label, exit, claimOf(claim, late), conversation) : outcomeOf(exit, claim, late, timeoutMs);
    const attempts = [...(escapes?.attempts ?? []), ...printed, ...browser.attempts, ...uncopied, ...(outcome.escapes?.attempts ?? [])];
    const seen = attempts.length > 0 || escapes ? { processesLeft: escapes?.processesLeft ?? 0, attempts } : undefined;
    const hit = attempts.filter((attempt) => attempt.kind === 'limit').map((attempt) => attempt.detail);
    // A limit hit ends the run incomplete, whatever it claimed: the sandbox, not the agent, ended its work.
    if (hit.length > 0) return { ...(outcome.claim ? { claim: outcome.claim } : { reason: `hit its sandbox's limit: ${hit.join(', ')}` }), stopReason: 'limit', escapes: seen };
    return { ...outcome, ...(seen && { escapes: seen }) };
  });
  // What runs includes where it runs: a sandbox can change what an agent manages (no network but the run's, no writes outside its folder).
  // Its limits and what it is shown too, sandboxed: what it may use or read can change what it manages. The gateway's settings, where given.
  // The installed packages it runs, by name and version: the agent's own version is part of what ran.
  const condition = () => {
    const packages = installedPackages(program);
    return { ...base, ...(packages.length > 0 && { packages }), ...(gateway && { gateway }), ...(sandboxed(sandbox, program) ? { sandbox: 'bwrap', limits, ...(shownPaths.length > 0 && { show: shownPaths }) } : { sandbox: 'none' }) };
  };
  return Object.defineProperty(agent, 'condition', { get: condition });
}

/** What a command's sandbox must show of its own: its argv, where it runs, the PATH it is looked up on, and the paths given in `show`. */
interface Program {
  argv: readonly string[];
  cwd: string | undefined;
  path: string | undefined;
  show: readonly string[];
}

/** Whether this process runs the command sandboxed: never with `none`, else where bwrap works and the sandbox's uid reaches its folders. */
function sandboxed(mode: SandboxMode, program: Program): boolean {
  return mode !== 'none' && sandboxUnavailable() === undefined && unreachableFolder(program) === undefined;
}

/**
 * The folders a sandboxed command needs to see beside its working folder, wherever they are (a
 * project under /tmp, a script in the test's output folder, a CLI installed under a 0700 folder):
 * the project's (the worker's); for its program (looked up on PATH) and each argument that is a
 * file, the folder it is named in and the installed package its link leads to; and `show`.
 */
function shownFolders({ argv, cwd, path, show }: Program): string[] {
  const named = namedFiles({ argv, cwd, path });
  const files = [...named, ...named.map((file) => interpreterOf(file, cwd, path)).filter(namesFile)];
  return [...new Set([process.cwd(), ...files.flatMap((file) => [dirname(file), installOf(realpathSync(file))]), ...show])];
}

/** Whether `file` names a file, or a link to one: an argument that names none (a prompt longer than a file's name may be) is only an argument. */
const namesFile = (file: string | undefined): file is string => file !== undefined && isFile(file, true);

/** The files a command names: its program (looked up on PATH) and each argument that is a file. */
function namedFiles({ argv, cwd, path }: Pick<Program, 'argv' | 'cwd' | 'path'>): string[] {
  return [programPath(argv[0]!, cwd, path), ...argv.slice(1).map((arg) => resolve(cwd ?? '.', arg))].filter(namesFile);
}

/**
 * The installed packages the command's files lead to (a link into a node_modules folder: an npm
 * CLI's), each as `name@version` from its package.json: the agent's own version, read from its
 * install, never by running it outside its sandbox. Part of the condition: another version is
 * another cell.
 */
function installedPackages(program: Program): string[] {
  const found = namedFiles(program).flatMap((file) => {
    const real = realpathSync(file);
    if (!real.split(sep).includes('node_modules')) return [];
    for (let folder = dirname(real); folder !== dirname(folder); folder = dirname(folder)) {
      const manifest = readManifest(join(folder, 'package.json'));
      if (manifest) return [`${manifest.name}@${manifest.version}`];
    }
    return [];
  });
  return [...new Set(found)];
}

/** A package.json's name and version, if it is there and names both. */
function readManifest(file: string): { name: string; version: string } | undefined {
  try {
    const { name, version } = JSON.parse(readFileSync(file, 'utf8')) as { name?: unknown; version?: unknown };
    return typeof name === 'string' && typeof version === 'string' ? { name, version } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Where `program` is found, as the shell in the sandbox finds it: a path as it is (relative to
 * `cwd`); a name on PATH, in the first folder the sandbox shows anyway (a hidden one earlier on
 * PATH, such as pyenv's shims under /root, is passed over there, and showing it would change
 * which program runs), else the first it is in at all.
 */
function programPath(program: string, cwd: string | undefined, path: string | undefined): string | undefined {
  if (program.includes('/')) return resolve(cwd ?? '.', program);
  const found = (path ?? '').split(delimiter).filter(Boolean).map((dir) => resolve(cwd ?? '.', dir, program)).filter((file) => isFile(file, true));
  const seen = (file: string) => !maskedFolders().some((folder) => inside(file, folder)) && closedFolders([dirname(file)]).length === 0;
  return found.find(seen) ?? found[0];
}

/** The program a script's `#!` line names (`#!/usr/bin/env node`: node, looked up on PATH), if it has one. */
function interpreterOf(file: string, cwd: string | undefined, path: string | undefined): string | undefined {
  let head = '';
  try {
    const fd = openSync(file, 'r');
    try {
      const bytes = Buffer.alloc(256);
      head = bytes.toString('utf8', 0, readSync(fd, bytes));
    } finally {
      closeSync(fd);
    }
  } catch {
    return undefined; // unreadable here: nothing more to show for it
  }
  const words = head.match(/^#!(.*)/)?.[1]!.trim().split(/\s+/) ?? [];
  if (basename(words[0] ?? '') !== 'env') return words[0];
  const name = words.slice(1).find((word) => !word.startsWith('-') && !word.includes('='));
  return name && programPath(name, cwd, path);
}

/**
 * The installed package that holds `file` (a link's target): the nearest folder above it with a
 * package.json, widened to the outermost node_modules folder it lies in, where its dependencies
 * may be hoisted (a local install's platform package beside it; pnpm's store); the file's own
 * folder where none is found, or where that folder is one the sandbox hides whole.
 */
function installOf(file: string): string {
  let root: string | undefined;
  for (let folder = dirname(file); root === undefined; folder = dirname(folder)) {
    if (existsSync(join(folder, 'package.json'))) root = folder;
    else if (folder === dirname(folder)) break;
  }
  if (root === undefined) return dirname(file);
  const modules = root.split(sep).indexOf('node_modules');
  const install = modules === -1 ? root : root.split(sep).slice(0, modules + 1).join(sep);
  // Never a folder the sandbox hides whole: a temporary folder, or one only its owner may enter (/root holding a package.json).
  return maskedFolders().includes(install) || (statSync(install).mode & 0o001) === 0 ? dirname(file) : install;
}

/** Why the sandbox's uid cannot reach the command's working folder, program or script, or undefined. */
function unreachableFolder(program: Program): string | undefined {
  const working = unreachable(resolve(program.cwd ?? '.'), 'its working folder');
  return working ?? shownFolders(program).map((folder) => unreachable(folder, program.show.includes(folder) ? 'a path in show' : 'its program\u2019s folder')).find(Boolean);
}

/** How a run of the command is contained on `site`, checked before it starts: an InputError when it cannot run as asked. */
function containment(label: string, mode: SandboxMode, account: boolean, site: Site, program: Program): Containment {
  if (account && !site.issueCredential) {
    throw new InputError(`${label}() account: ${site.name} cannot make a login for one run, and a command agent is never given the site's own password (use a function agent for trusted code)`);
  }
  if (mode === 'none') return { contained: false, reason: `not contained: ${label}'s sandbox is 'none'` };
  const unavailable = sandboxUnavailable() ?? unreachableFolder(program);
  if (unavailable === undefined) return { contained: true, reason: `contained: a bubblewrap sandbox (${identityWords()}; its own PID, user, mount and network namespaces; a seccomp filter; limits, ${totalMemoryWords()}; only the run\u2019s endpoints on its loopback)` };
  if (mode === 'required') throw new InputError(`${label}() sandbox 'required': ${unavailable}`);
  return { contained: false, reason: `not contained: ${unavailable}` };
}

/** How its memory in total is held, in the containment's words: by the kernel where the machine delegates cgroup v2, else measured by the sandbox's watcher. */
function totalMemoryWords(): string {
  return 'parent' in cgroupParent() ? 'its memory in total and processes held by cgroup v2' : 'its memory in total measured every 500 ms (no cgroup v2 here)';
}

/** Who the agent is on the host, in the containment's words: as root, a uid of its run's own; else the test user, whose readable files it can read. */
function identityWords(): string {
  return process.getuid?.() === 0 ? 'a uid of its run\u2019s own, not root' : `the test user\u2019s uid ${process.getuid?.()}: what that user can read outside its masked secret files, it can read`;
}

/** How a command ended: by itself (its exit code or signal), killed at a time limit, ended once its conversation was over, or not started. */
type Exit = CommandEnd | { kind: 'unstarted'; message: string };
type Ended = Exit & { stdout: Output; stderr: Output; escapes?: Escapes; claim: ClaimRead; late: boolean; conversation?: Conversation };

/** The claim file as it was when the main process ended: its bytes, none, or why it could not be read. */
type ClaimRead = { kind: 'read'; bytes: Buffer; stat: BigIntStats } | { kind: 'missing' } | { kind: 'unreadable'; why: string };

/** The most of a claim file that is read: a claim is a few lines, and a flood must not fill the memory. */
export const CLAIM_FILE_CAP_BYTES = 1024 * 1024;

/**
 * The claim file, read once. The agent made it, and it is read from outside its sandbox: a link (to
 * another process's environ, another run's files) or a pipe (whose read would never end) is never
 * followed nor read, and neither is a file past the cap or one that changes while it is read.
 */
async function readClaimFile(claimFile: string): Promise<ClaimRead> {
  const named = await lstat(claimFile, { bigint: true }).catch((error: NodeJS.ErrnoException) => error);
  if (named instanceof Error) return (named as NodeJS.ErrnoException).code === 'ENOENT' ? { kind: 'missing' } : { kind: 'unreadable', why: `could not be read (${(named as NodeJS.ErrnoException).code})` };
  if (!named.isFile()) return { kind: 'unreadable', why: `is ${fileKind(named)}` };
  if (named.size > CLAIM_FILE_CAP_BYTES) return { kind: 'unreadable', why: `is ${named.size} bytes, past the cap of ${CLAIM_FILE_CAP_BYTES}` };
  try {
    const handle = await open(claimFile, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    try {
      const before = await handle.stat({ bigint: true });
      if (!before.isFile()) return { kind: 'unreadable', why: `is ${fileKind(before)}` };
      const bytes = Buffer.alloc(Math.min(Number(before.size), CLAIM_FILE_CAP_BYTES + 1));
      const { bytesRead } = await handle.read(bytes, 0, bytes.length, 0);
      if (changedSince(before, await handle.stat({ bigint: true })) || bytesRead !== Number(before.size)) return { kind: 'unreadable', why: 'changed while it was read' };
      return { kind: 'read', bytes: bytes.subarray(0, bytesRead), stat: before };
    } finally {
      await handle.close();
    }
  } catch (error) {
    return { kind: 'unreadable', why: `could not be read (${(error as NodeJS.ErrnoException).code ?? 'an error'})` };
  }
}

/** What a file that is not a regular one is, in a few words. */
function fileKind(stat: BigIntStats): string {
  if (stat.isSymbolicLink()) return 'a symbolic link';
  if (stat.isDirectory()) return 'a folder';
  if (stat.isFIFO()) return 'a named pipe';
  if (stat.isSocket()) return 'a socket';
  return 'a device';
}

/** Whether a file is other than `then`: replaced, written or its times set (ctime, which no one can set back, moves with any of them). */
function changedSince(then: BigIntStats, now: BigIntStats | undefined): boolean {
  return now === undefined || now.ino !== then.ino || now.size !== then.size || now.mtimeNs !== then.mtimeNs || now.ctimeNs !== then.ctimeNs;
}

/** Whether the claim file is other than it was read: written, made, replaced or removed since. */
async function claimChanged(claimFile: string, claim: ClaimRead): Promise<boolean> {
  const now = await lstat(claimFile, { bigint: true }).catch(() => undefined);
  if (claim.kind === 'missing') return now !== undefined;
  return claim.kind === 'read' && changedSince(claim.stat, now);
}

/** The claim file read after a process the agent left could have written it: see `claimChanged`. */
const LATE_CLAIM = 'was written after its main process ended';

/**
 * How the run ended, from how the command ended and its claim file. A claim file that cannot be
 * read as a claim (a link, a pipe, a folder, past the cap, not JSON, not a claim, changed while
 * read or written after the main process ended) is taken as a claimed success, the worst case, and
 * named as an escape attempt: no agent makes its lie a truthful failure by breaking its claim. A
 * claim stands however the run ended: one written before a time limit killed the agent is its claim.
 */
function outcomeOf(ended: Exit, claim: ClaimRead, late: boolean, timeoutMs: number | undefined): ForeignOutcome {
  // Not there, or not executable (gone since the check before the run): bad input, never a run.
  if (ended.kind === 'unstarted') throw new InputError(`commandAgent: ${ended.message}`);
  // Only a command spoken to is ended by the harness once its work is over.
  if (ended.kind === 'closed') throw new Error('a command agent has no conversation to close');
  const read = claimOf(claim, late);
  if (ended.kind === 'killed') {
    if (read) return { ...read, stopReason: 'timeout' };
    return { reason: ended.by === 'timeoutMs' ? `killed at its time limit (${timeoutMs} ms)` : 'killed at the run’s time limit', stopReason: 'timeout' };
  }
  if (read) return read;
  if (ended.code === 0) return { reason: 'wrote no claim file' };
  const how = ended.signal ? `was killed by ${ended.signal}` : `exited with code ${ended.code}`;
  return { reason: `${how} and wrote no claim file`, stopReason: 'error' };
}

/**
 * How a command spoken to ended: its claim file, where it wrote one, wins (as a command agent's,
 * standing however it ended); else what the conversation made of it.
 */
function spokenOutcome(label: string, ended: Exit, fromFile: ForeignOutcome | undefined, conversation: Conversation): ForeignOutcome {
  if (ended.kind === 'unstarted') throw new InputError(`${label}: ${ended.message}`);
  if (fromFile) return ended.kind === 'killed' && fromFile.claim ? { ...fromFile, stopReason: 'timeout' } : fromFile;
  return conversation.outcome(ended);
}

/** The claim in the claim file, why there is none (`reason`), or the worst case with its escape attempt; undefined when there is no claim file. */
function claimOf(claim: ClaimRead, late: boolean): ForeignOutcome | undefined {
  if (late) return takenAsSuccess(`${LATE_CLAIM}:`);
  if (claim.kind === 'missing') return undefined;
  if (claim.kind === 'unreadable') return takenAsSuccess(`${claim.why}: not read,`);
  // A byte-order mark (as some editors and Windows tools write) is not part of the JSON.
  const text = claim.bytes.toString('utf8').replace(/^\uFEFF/, '');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return takenAsSuccess(`is not JSON (${(error as Error).message.split('\n')[0]!.slice(0, 200)}):`);
  }
  const read = readClaim(value, 'the claim file');
  return read.claim ? read : takenAsSuccess(`${read.reason.replace(/^the claim file /, '')}:`);
}

/** A claim file that could not be read as a claim (`why`, its punctuation included): a claimed success, the worst case, and the escape attempt that says why. */
function takenAsSuccess(why: string): ForeignOutcome {
  const detail = `the claim file ${why} taken as a claimed success`;
  return { claim: { success: true, summary: detail }, escapes: { processesLeft: 0, attempts: [{ kind: 'claim', detail }] } };
}

interface RunOptions {
  cwd: string;
  env: Record<string, string>;
  timeoutMs?: number;
  /** The run's model waits, which `timeoutMs` leaves out: a command queued behind a rate limit is not out of time. */
  waits?: ModelWaits;
  signal: AbortSignal;
  /** The sandbox it runs in (started with the run, the run's endpoints piped into it); undefined: none. */
  sandbox?: Sandbox;
  /** Where the run's stages are marked. */
  stages: Partial<Record<CommandStage, number>>;
  /** Where it writes its claim: read once, when its main process ends. */
  claimFile: string;
  /** Speaks with it over its stdin and stdout (it then gets a pipe as its stdin); its work is over when the conversation is. */
  converse?: (io: { stdin: Writable; stdout: Readable }) => Conversation;
}

/** A started command, sandboxed or in its own process group: how to end it, and what it left. */
interface Launched {
  child: ChildProcess;
  /** Settles when its main process ended (in a sandbox, before what it left is killed), or it could not start. */
  ended: Promise<void>;
  /** Once it ended and `claimRead` settled (a sandbox ends beside the read where nothing is left to write the claim): ends what it left, and answers how its main process ended, with what a sandbox saw it try. */
  finish(claimRead: Promise<unknown>): Promise<{ exit: Exit; escapes?: Escapes }>;
  terminate(): void;
  kill(): void;
}

/**
 * Runs the command and waits for its main process; at `timeoutMs` or when `signal` aborts, it gets
 * SIGTERM, then SIGKILL (a command spoken to is asked to cancel first, and given TERM_GRACE_MS to).
 * A command spoken to is ended the same way once its conversation is over. When it ends by itself,
 * what it left running is killed too: nothing of it outlives the run.
 */
async function runCommand(argv: string[], { cwd, env, timeoutMs, waits, signal, sandbox, stages, claimFile, converse }: RunOptions): Promise<Ended> {
  const started = Date.now();
  stages.launched = performance.now();
  const launched = sandbox ? launchSandboxed(sandbox, { argv, env }) : launchInGroup(argv, cwd, env, converse !== undefined);
  const { child } = launched;
  const stdout = capture(child.stdout!);
  const stderr = capture(child.stderr!);
  // A write to a command that has gone (EPIPE) is its end, which `ended` reports: no uncaught error.
  child.stdin?.on('error', () => undefined);
  const conversation = converse?.({ stdin: child.stdin!, stdout: child.stdout! });
  let killedBy: 'timeoutMs' | 'signal' | 'closed' | undefined;
  let finished = false;
  let ending = false;
  const end = () => {
    if (ending || finished) return;
    ending = true;
    child.stdin?.end();
    launched.terminate();
    setTimeout(() => launched.kill(), TERM_GRACE_MS).unref();
  };
  const stop = (by: 'timeoutMs' | 'signal' | 'closed') => {
    if (killedBy || finished) return;
    killedBy = by;
    if (by === 'closed' || !conversation) return end();
    conversation.cancel();
    // Its cancelled prompt answered, or the grace over: ended either way.
    void conversation.done.then(end);
    setTimeout(end, TERM_GRACE_MS).unref();
  };
  // A command that stopped speaking has mostly ended (a crash): a moment for its exit to be seen, so that the run says how it ended.
  void conversation?.done.then((how) => (how === 'over' ? stop('closed') : setTimeout(() => stop('closed'), TERM_GRACE_MS).unref()));
  // At the limit, the time waited on the model since moves it on (a wait in progress included).
  let timer: ReturnType<typeof setTimeout> | undefined;
  const arm = (ms: number) => {
    timer = setTimeout(() => {
      const left = timeoutMs! - (Date.now() - started - (waits?.waitedMs() ?? 0));
      if (left > 0) arm(left);
      else stop('timeoutMs');
    }, ms);
  };
  if (timeoutMs !== undefined) arm(timeoutMs);
  const onAbort = () => stop('signal');
  if (signal.aborted) onAbort();
  else signal.addEventListener('abort', onAbort, { once: true });
  await launched.ended;
  stages.exited = performance.now();
  finished = true;
  clearTimeout(timer);
  signal.removeEventListener('abort', onAbort);
  // Read once, as the main process left it (sandboxed, what it left is stopped meanwhile); written again by what it left, seen once the sandbox is gone, it is no claim.
  const claimRead = readClaimFile(claimFile);
  const { exit, escapes } = await launched.finish(claimRead);
  const claim = await claimRead;
  stages.killed = performance.now();
  const late = escapes !== undefined && (await claimChanged(claimFile, claim));
  // Everything is gone: the pipes close at once, unless something outside still holds them.
  await Promise.race([Promise.all([stdout.closed, stderr.closed]), sleep(DRAIN_MS)]);
  stages.drained = performance.now();
  child.stdout!.destroy();
  child.stderr!.destroy();
  const how: Exit = killedBy === 'closed' ? { kind: 'closed' } : killedBy ? { kind: 'killed', by: killedBy } : exit;
  return { ...how, stdout: stdout.output(), stderr: stderr.output(), claim, late, ...(escapes && { escapes }), ...(conversation && { conversation }) };
}

/** The command in its own process group: ending the group ends what it started, unless it left the group (setsid). `stdin`: a pipe, else none. */
function launchInGroup(argv: string[], cwd: string, env: Record<string, string>, stdin = false): Launched {
  const child = spawn(argv[0]!, argv.slice(1), { cwd, env, detached: true, stdio: stdioWithoutInherited([stdin ? 'pipe' : 'ignore', 'pipe', 'pipe']) });
  const exited = processExit(child).then(toExit(argv[0]!));
  return {
    child,
    ended: exited.then(() => undefined),
    async finish(claimRead) {
      // Read as its main process left it, before what it left is killed (a later write of the claim is seen: claimChanged).
      await claimRead;
      killGroup(child, 'SIGKILL');
      return { exit: await exited };
    },
    terminate: () => killGroup(child, 'SIGTERM'),
    kill: () => killGroup(child, 'SIGKILL'),
  };
}

/** The command in its sandbox: its main process's end in bwrap's word, what it left counted from outside. */
function launchSandboxed(sandbox: Sandbox, command: AgentCommand): Launched {
  sandbox.start(command);
  return {
    child: sandbox.child,
    ended: sandbox.mainEnded,
    async finish(claimRead) {
      const { exit, escapes } = await sandbox.finish(claimRead);
      return { exit: toExit(command.argv[0]!)(exit), escapes };
    },
    terminate: sandbox.terminate,
    kill: sandbox.kill,
  };
}

/** How `program` ended, as run.ts records it: a spawn error is bad input, named in one line. */
const toExit =
  (program: string) =>
  (exit: AgentExit): Exit =>
    exit.error === undefined ? { kind: 'exited', code: exit.code, signal: exit.signal } : { kind: 'unstarted', message: spawnProblem(program, spawnError(exit.error)) };

/** A spawn error as a message (`spawn x ENOENT`), with its code back: it says what went wrong. */
function spawnError(message: string): NodeJS.ErrnoException {
  return Object.assign(new Error(message), { code: message.match(/\b(E[A-Z]+)\b/)?.[1] });
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
  if (error.code === 'ENOENT' && program.includes('/') && isFile(program, true)) return `${program}: cannot start (ENOENT: the interpreter its #! line names is not there)`;
  if (error.code === 'ENOENT') return `${program}: ${program.includes('/') ? 'no such file' : 'command not found'}`;
  if (error.code === 'EACCES') return `${program}: not executable (EACCES)`;
  return `${program}: cannot start (${error.code ?? error.message.split('\n')[0]})`;
}

/**
 * The program as spawn would find it: a path (relative to `cwd`) that is an executable file, or a
 * name on PATH. Throws an InputError naming what is wrong.
 */
function findProgram(label: string, program: string, cwd: string | undefined, path: string | undefined): void {
  if (cwd !== undefined && !statSync(resolve(cwd), { throwIfNoEntry: false })?.isDirectory()) throw new InputError(`${label}() options: cwd: no folder at ${resolve(cwd)}`);
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
    throw new InputError(`${label}: ${spawnProblem(program, error as NodeJS.ErrnoException)}`);
  }
}

/** Programs that run a script given to them (a runner's subcommand, `run`, `exec`, `x`, is passed over): an agent they run is named after its script. */
const INTERPRETER = /^(node|nodejs|bun|bunx|deno|tsx|ts-node|npx|pnpm|pnpx|yarn|uv|uvx|pipx|poetry|python[\d.]*|pypy[\d.]*|ruby|perl|php|sh|bash|zsh)$/;
const SUBCOMMAND = new Set(['run', 'exec', 'x', 'dlx', 'tool']);
/** What a script's file name ends in. */
const SCRIPT = /\.(py|[cm]?[jt]sx?|rb|pl|php|sh)$/i;
/** Options whose value is code to run, not a script (`bash -c '…'`, `node -e '…'`). */
const CODE = new Set(['-c', '-e', '--eval', '-p', '--print']);

/**
 * An unnamed agent's name, from its argv alone (never from what is on this disk, so it is the same
 * on every machine): when argv[0] is an interpreter, its script's file name (the first argument
 * that names a script, `agent.py` in `uv run --with openai agent.py`; else the module after `-m`;
 * else the first argument that is neither an option, code to run, a subcommand nor another
 * interpreter, as `my-agent` in `npx my-agent`); else, or when none, argv[0]'s file name.
 */
function defaultName(argv: readonly string[]): string {
  const program = basename(argv[0]!);
  if (!INTERPRETER.test(program.replace(/\.exe$/i, ''))) return program;
  const args = argv.slice(1);
  const script = args.find((arg) => !arg.startsWith('-') && SCRIPT.test(arg));
  const module = args[args.indexOf('-m') + 1];
  const other = args.find((arg, index) => !arg.startsWith('-') && !CODE.has(args[index - 1] ?? '') && !SUBCOMMAND.has(arg) && !INTERPRETER.test(basename(arg)));
  return basename(script ?? (args.includes('-m') ? module : undefined) ?? other ?? program);
}
