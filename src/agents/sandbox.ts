import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, closeSync, lchownSync, mkdirSync, mkdtempSync, openSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { constants as osConstants, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { z } from 'zod';
import type { EscapeAttempt, Escapes } from '../core/agent.ts';
import { asIdentity, identityUnavailable, isExecutable, mountPath, prlimitPath, reapOrphans, releaseIdentity, runIdentity, toolPath, unsharePath, type HostIdentity } from './sandbox-identity.ts';
import { ownFolder, reapFolders, removeFolder } from '../leftovers.ts';
import { DEFAULT_SANDBOX_LIMITS, folderUsage, PATH_MAX, rlimits, tmpfsFull, usageIn, WORK_DIR_ENTRIES, type SandboxLimits } from './sandbox-limits.ts';
import { cgroupLimitsHit, makeCgroup, reapCgroups, removeCgroup } from './sandbox-cgroup.ts';
import { makeCanaries, type Canaries } from './canaries.ts';
import { closedFolders, mountArgs, readText, unopenable, viewOf, type View } from './sandbox-mounts.ts';
import { copyOut } from './copy-out.ts';
import { handOver, portsAhead, takePortsAhead } from '../loopback.ts';
import { seccompFilter, seccompPython } from './seccomp.ts';

export type { Escapes };

/**
 * The sandbox a command agent runs in: bubblewrap (bwrap), on Linux, in layers, outermost first:
 * - a host identity of its own (sandbox-identity.ts): as root, a uid per run set by setpriv, the
 *   folders on its way that only their owner may enter opened to it;
 * - limits (sandbox-limits.ts): rlimits set by prlimit, tmpfs sizes, its work folder measured, its
 *   memory in total and processes held by its cgroup (sandbox-cgroup.ts), else measured;
 * - its own user, PID, mount, IPC, UTS, cgroup and network namespaces, with no new user namespace
 *   inside (--disable-userns): it sees no process outside its run and can signal none;
 * - a filesystem read-only but for its work folder, its temporary folders empty and private
 *   whatever the layout, secret files masked with decoys (sandbox-mounts.ts);
 * - a seccomp filter (seccomp.ts): no ptrace, no pidfd_getfd, no mounts or namespaces;
 * - a network that is a loopback of its own where socat (started by the sandbox's first process,
 *   a small sh relay) answers on the ports of the run's URLs only, each piped through a Unix
 *   socket to the real port outside.
 * How its main process ended is bwrap's word (--json-status-fd), read outside the sandbox; what it
 * left is counted from outside, and the whole sandbox is torn down from outside.
 */

/** `auto`: sandboxed where bwrap works, else run uncontained and say so; `required`: refuse to run uncontained; `none`: never sandboxed. */
export const sandboxModeSchema = z.enum(['auto', 'required', 'none']);
export type SandboxMode = z.infer<typeof sandboxModeSchema>;

/** The bwrap to run: HARNESS_BWRAP (tests point it at a missing path), else bwrap on PATH. */
export const bwrapPath = () => process.env.HARNESS_BWRAP || 'bwrap';

/** The socat the relays pipe ports with: HARNESS_SOCAT (tests point it at a missing path), else the first on PATH. */
const socatPath = () => toolPath('socat', process.env.HARNESS_SOCAT);

/** The agent's user inside: nobody, with no capabilities. */
const NOBODY = '65534';

/**
 * Namespaces and isolation every sandbox gets; the probe runs with the same, so a kernel that
 * refuses one is found before a run. The filter is read from descriptor `seccompFd`.
 */
export const isolation = (seccompFd: number) => [
  '--unshare-all',
  '--unshare-user',
  '--disable-userns',
  '--uid', NOBODY,
  '--gid', NOBODY,
  '--cap-drop', 'ALL',
  // No terminal to inject keystrokes into (TIOCSTI), and no way to outlive the worker.
  '--new-session',
  '--die-with-parent',
  '--seccomp', String(seccompFd),
  '--clearenv',
];

/** Of the worker's environment, only what any program needs to start: never its keys. */
const STARTUP_ENV = ['PATH', 'HOME', 'LANG', 'LC_ALL', 'TMPDIR', 'SYSTEMROOT'];

/** The worker's environment cut to STARTUP_ENV: what a command agent and its Chromium start with. */
export function startupEnv(): Record<string, string> {
  return Object.fromEntries(STARTUP_ENV.flatMap((name) => (process.env[name] === undefined ? [] : [[name, process.env[name]!]])));
}

const probes = new Map<string, string | undefined>();

/** Why no sandbox can run here (not Linux; no bwrap, socat, prlimit, setpriv or seccomp filter; bwrap fails its probe), or undefined: probed once per set of tools. */
export function sandboxUnavailable(): string | undefined {
  if (process.platform !== 'linux') return `bubblewrap runs on Linux only (this is ${process.platform})`;
  const key = [bwrapPath(), socatPath(), prlimitPath(), process.env.HARNESS_SETPRIV, process.env.HARNESS_SECCOMP_PYTHON].join('\0');
  if (!probes.has(key)) probes.set(key, probe());
  return probes.get(key);
}

/** Runs socat in a sandbox made as every sandbox is, as a run's identity, limited and filtered: a kernel or a tool that refuses any part is found before a run. */
function probe(): string | undefined {
  const bwrap = bwrapPath();
  if (process.env.HARNESS_BWRAP ? !isExecutable(bwrap) : toolPath('bwrap', undefined) === undefined) return process.env.HARNESS_BWRAP ? `no usable bubblewrap (${bwrap}: ENOENT)` : 'no bwrap on PATH (Debian package bubblewrap)';
  const socat = socatPath();
  if (socat === undefined) return 'no socat on PATH (the sandbox pipes the run\u2019s ports with it: Debian package socat)';
  if (process.env.HARNESS_SOCAT && !isExecutable(socat)) return `no usable socat (${socat}: ENOENT)`;
  if (prlimitPath() === undefined) return 'no prlimit on PATH (the sandbox sets its limits with it: Debian package util-linux)';
  const identityProblem = identityUnavailable();
  if (identityProblem) return identityProblem;
  const filter = seccompFilter();
  if ('error' in filter) return filter.error;
  const identity = runIdentity();
  const argv = [...rlimits(DEFAULT_SANDBOX_LIMITS, identity), ...asIdentity(identity), bwrap, ...isolation(3), ...mountArgs({ shown: [], decoys: [], own: [], tmpBytes: 1024 * 1024, shmBytes: 1024 * 1024 }), '--', socat, '-V'];
  const fd = openSync(filter.path, 'r');
  const run = spawnSync(argv[0]!, argv.slice(1), { encoding: 'utf8', timeout: 10_000, stdio: ['ignore', 'pipe', 'pipe', fd] });
  releaseIdentity(identity);
  const why = run.error ? `${bwrap}: ${(run.error as NodeJS.ErrnoException).code ?? run.error.message}` : run.status !== 0 ? `${bwrap} failed its probe: ${run.stderr.trim().split('\n').at(-1)}` : undefined;
  return why && `no usable bubblewrap (${why})`;
}

/** O_CLOEXEC, as /proc/<pid>/fdinfo's octal `flags` show it. */
const O_CLOEXEC = 0o2000000;
let devNull: number | undefined;
type Stdio = 'ignore' | 'pipe';

/**
 * `stdio` for spawn, extended so that every descriptor this process holds open across exec is
 * /dev/null in the child. Node opens its own descriptors close-on-exec, so those are the ones it
 * inherited: a pipe the shell or the CI runner left open reaches every child (libuv closes no
 * others), and through bwrap the agent, which could write to it. Node can map a child's
 * descriptor, not close it: /dev/null is what the child gets there.
 */
export function stdioWithoutInherited(stdio: ReadonlyArray<Stdio | number>): Array<Stdio | number> {
  const mapped = inheritedDescriptors().filter((fd) => fd >= stdio.length);
  if (mapped.length === 0) return [...stdio];
  devNull ??= openSync('/dev/null', 'r');
  const last = Math.max(...mapped);
  return [...stdio, ...Array.from({ length: last + 1 - stdio.length }, (_, i) => (mapped.includes(stdio.length + i) ? devNull! : 'ignore'))];
}

let inherited: number[] | undefined;

/**
 * This process's descriptors open across exec, listed once: every later one is Node's own,
 * close-on-exec (one of these closed since and its number reused is mapped all the same, harmlessly).
 */
function inheritedDescriptors(): number[] {
  if (inherited) return inherited;
  try {
    inherited = readdirSync('/proc/self/fdinfo').map(Number).filter((fd) => fd > 2 && !closesOnExec(fd));
  } catch {
    inherited = []; // no /proc: not Linux, where nothing is sandboxed either
  }
  return inherited;
}

function closesOnExec(fd: number): boolean {
  const flags = readText(`/proc/self/fdinfo/${fd}`)?.match(/^flags:\s*([0-7]+)/m)?.[1];
  // Gone meanwhile (the listing's own descriptor): nothing a child could inherit.
  return flags === undefined || (parseInt(flags, 8) & O_CLOEXEC) !== 0;
}

/** How a process ended (the agent's main process, in bwrap's word; bwrap's); `error`, spawn's message (`spawn x ENOENT`), when it could not start. */
export type AgentExit = { code: number | null; signal: NodeJS.Signals | null; error?: undefined } | { error: string };

/** How `child` ends: listened for from its spawn, so an end before anyone asks is not missed. */
export function processExit(child: ChildProcess): Promise<AgentExit> {
  return new Promise((resolve) => {
    child.once('error', (error) => resolve({ error: error.message }));
    child.once('exit', (code, signal) => resolve({ code, signal }));
  });
}

/** What the sandbox is made with: known at the run's start, before its endpoints are. */
export interface SandboxOptions {
  /** Where the agent runs: bound read-only, as the rest of the filesystem. */
  cwd: string;
  /** Other folders it needs, read-only, even inside a masked folder: the project's, its program's and its script's. */
  shown?: readonly string[];
  /** Its limits: DEFAULT_SANDBOX_LIMITS where not given. */
  limits?: Partial<SandboxLimits>;
  /** Decoy values for the secret files it finds masked: a key and a password no one uses. */
  canaries?: Canaries;
  /** Secret-looking files (`.env`…) to leave in view, as paths relative to `cwd`. */
  expose?: readonly string[];
  /** Give the agent bwrap's stdin, a pipe (`child.stdin`), for a protocol spoken over stdio (ACP); else /dev/null. */
  stdin?: boolean;
}

/** What the relay starts in the sandbox, once the run's endpoints are up. */
export interface AgentCommand {
  /** The agent's command; the relay spawns it inside. */
  argv: string[];
  /** Its whole environment: nothing of the worker's reaches the sandbox otherwise. */
  env: Record<string, string>;
}

/**
 * A sandbox's stages, as reached: bwrap spawned, its relay up, its relay told to start its first
 * socats (ahead of the run, for a sandbox started ahead), the run's ports handed over, the agent
 * starting (every port listens), its first connection out, its end, bwrap's end.
 */
export type SandboxStage = 'spawned' | 'relayUp' | 'socatsAsked' | 'forwarded' | 'starting' | 'connected' | 'agentExited' | 'sandboxExited';

/** How a sandboxed agent ended, as seen from outside. */
export interface SandboxEnd {
  /** How its main process ended, in bwrap's word; `error` when it could not start. */
  exit: AgentExit;
  /** What it left running (counted before the sandbox ended), and what else it tried. */
  escapes: Escapes;
}

export interface Sandbox {
  /** bwrap: its stdout and stderr are the agent's. */
  child: ChildProcess;
  /** The host uid and gid its processes hold. */
  identity: HostIdentity;
  /** What it shows beyond the host read-only: its Chromium's sandbox shows the same. */
  view: View;
  /** The one folder the agent may write (its claim goes there); its HOME. Its identity's own, removed by `close()`. */
  workDir: string;
  /**
   * Once it ended: copies what the agent left in its work folder to `destination`, every form of `secrets` cut out of the
   * copies (copy-out.ts); never throws, and answers what it could not copy, as escape attempts.
   */
  copyOut(destination: string, secrets: readonly string[]): Promise<EscapeAttempt[]>;
  /** Processes of runs whose worker died, killed as this sandbox started. */
  orphansKilled: number;
  /** When each stage was reached (performance.now()): what bench:sandbox breaks a run down by. */
  stages: Readonly<Partial<Record<SandboxStage, number>>>;
  /** Pipes the run's endpoints: the only TCP ports the agent reaches, at the same port numbers on its own 127.0.0.1. Once, before `start`. */
  forward(urls: readonly string[]): Promise<void>;
  /** Hands the command to the relay, which starts it once every forwarded port listens: once. */
  start(command: AgentCommand): void;
  /** Settles when the agent's main process ended (the relay says so, and from outside the relay has no child left but its socats), or the sandbox ended. */
  mainEnded: Promise<void>;
  /**
   * Once the main process ended: counts what it left, ends the sandbox and answers how the main
   * process ended, in bwrap's word, with what the agent tried. What it left is woken a moment
   * before the end (a late write of the claim is seen), once `claimRead`, if given, settled.
   */
  finish(claimRead?: Promise<unknown>): Promise<SandboxEnd>;
  /** Settles when bwrap ended, or could not start: the sandbox, and everything in it, is gone. */
  sandboxExit: Promise<AgentExit>;
  /** SIGTERM to every agent process: a moment to flush. */
  terminate(): void;
  /** Ends the sandbox: SIGKILL to bwrap; its init dies with it (--die-with-parent), and with the init the whole PID namespace. */
  kill(): void;
  /** Ends the sandbox if it still runs, closes the relay's sockets outside and removes their folder. */
  close(): Promise<void>;
}

/**
 * The relay: the sandbox's first process, a POSIX sh (dash on Debian: it starts in a millisecond,
 * where a Node relay took tens of CPU milliseconds per run). It starts before the run's endpoints
 * are up, in its socket folder, and reads lines of sh from its fd 3, the control channel: a socket
 * pair with the worker, which no other process can open (not by path, not through /proc/<pid>/fd,
 * and the filter refuses pidfd_getfd and ptrace). The worker sends, once the endpoints are up
 * (while the page still opens), then once the agent's command is known:
 *
 *   listen <port>…          one socat per port: 127.0.0.1:<port> inside, piped to the Unix socket
 *                           s<port> in its folder; answers `socats <pid>…` (as pids in the sandbox)
 *   export NAME='value' …   the agent's whole environment (the relay's own is empty)
 *   start <cwd> <argv>…     sent once every port listens (the worker reads the sandbox's
 *                           /proc/<init>/net/sockstat from outside: by then they do, the socats had the
 *                           page's opening to bind), answers `starting` and runs the agent in `cwd`, stdin
 *                           /dev/null (bwrap's, a pipe, once `relay_stdin=1` was said), stdout and stderr
 *                           bwrap's, fd 3 closed; answers `unstarted
 *                           <status>` when it could not start (sh's 127: not found, 126: not
 *                           executable), stops every process the agent left (SIGSTOP), then says
 *                           `exited`, and waits for a line: what the agent left is counted from
 *                           outside meanwhile. Then it exits with the agent's status
 *                           (sh's: 128+n for signal n), which bwrap reports outside (--json-status-fd).
 *
 * Values are single-quoted, their newlines written as "$nl": one line per command. The relay says
 * `up` first: that line and `starting` mark two of its stages (`Sandbox.stages`). Every line after
 * `starting` may come from the agent, were it to reach fd 3: the worker takes none as the truth.
 */
const RELAY = `
nl='
'
socat=$1
unset PWD
# Stray signals (an agent may signal every pid it sees) do not end the relay; the agent starts with its own restored.
# socat, which handles TERM, INT, HUP and QUIT itself, still exits at those: an agent that sends them cuts only its own network.
signals='HUP INT QUIT USR1 USR2 PIPE ALRM TERM'
trap '' $signals
echo up >&3
pids=
listen() {
  for port; do
    "$socat" TCP-LISTEN:$port,bind=127.0.0.1,reuseaddr,fork,nodelay UNIX-CONNECT:s$port </dev/null >/dev/null 2>&1 3>&- &
    pids="$pids $!"
  done
  echo "socats$pids" >&3
}
start() {
  echo starting >&3
  [ -n "$relay_stdin" ] || exec </dev/null
  (trap - $signals; trap 'echo "unstarted $?" >&3' EXIT; cd "$1" && unset PWD OLDPWD && shift && exec "$@" 3>&-)
  status=$?
  # What the agent left stops where it is, at once: its claim stays as its main process left it.
  kill -STOP -1 2>/dev/null
  echo exited >&3
  read -r _ <&3
  exit $status
}
while IFS= read -r line <&3; do eval "$line"; done
`;

/** The longest line the worker takes on the control channel: the relay's are a few words; past it is a flood. */
const CONTROL_LINE_BYTES = 4096;
/** How often the work folder, the process count and the tmpfs mounts are measured while the agent runs. */
const WATCH_MS = 500;
/** How long what the agent left is woken, its claim read, before the sandbox ends: a late write of the claim is seen in it. */
const LATE_WRITE_MS = 100;
/** After the relay is told to go, how long bwrap may take to report and end before it is killed. */
const END_MS = 2_000;

/** How many servers a run's agent reaches: the site's, the gateway, its browser's CDP relay and its MCP server. */
const RUN_PORTS = 4;

/** The distinct TCP ports of the run's URLs (each on 127.0.0.1). */
function portsOf(urls: readonly string[]): number[] {
  return [...new Set(urls.map((url) => Number(new URL(url).port)))];
}

/** A word for the relay's line: single-quoted, each newline as "$nl" (the relay reads one command a line). */
const relayWord = (word: string) => word.split('\n').map(shellQuote).join('"$nl"');

/** What sh's `$?` says: 128+n is signal n, as sh reports it (a command that exits 128+n by itself reads the same). */
function shellStatus(status: number): AgentExit {
  const signal = status > 128 ? (Object.entries(osConstants.signals).find(([, number]) => number === status - 128)?.[0] as NodeJS.Signals | undefined) : undefined;
  return signal ? { code: null, signal } : { code: status, signal: null };
}

/** What bwrap writes to its --json-status-fd, a document a line: its init's pid first, the main process's exit code when it ended. */
const statusSchema = z.union([z.object({ 'child-pid': z.number().int().positive() }), z.object({ 'exit-code': z.number().int() })]);

/** bwrap reads the decoys from descriptors from this one on: past the seccomp filter's (5) and the root step's (9, sandbox-identity.ts), which it closes before bwrap starts. */
const FIRST_DECOY_FD = 10;

/**
 * Each decoy's text in a file of `dir`, the worker's alone (mode 0600): bwrap reads it from a
 * descriptor the worker opened, so neither the run's uid nor a mount's source names it.
 */
function writeDecoys(view: View, dir: string): Array<{ path: string; file: string }> {
  return view.decoys.map(({ path, text }, i) => {
    const file = join(dir, `d${i}`);
    writeFileSync(file, text, { mode: 0o600 });
    return { path, file };
  });
}

/**
 * Where a run's own folders go (its sockets, its work folder, its Chromium's profile): the
 * temporary folder, unless a run's uid cannot pass through it (a root's home), then /tmp. Each
 * sandbox masks both.
 */
export function sandboxBase(): string {
  return closedFolders([tmpdir()]).length === 0 ? tmpdir() : '/tmp';
}

/**
 * Why a sandbox's uid cannot reach `path`, or undefined. As root, a folder on the way that only its
 * owner may enter (mode 0700) is opened to the run's uid as the sandbox starts (asIdentity): only
 * one that cannot be opened here keeps it out.
 */
export function unreachable(path: string, what: string): string | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const closed = closedFolders([path]);
  const why = closed.map(unopenable).find(Boolean) ?? (closed.length > 0 ? openingUnavailable() : undefined);
  return why && `${what} ${path} is in ${closed[0]}, which only its owner may enter (mode ${(statSync(closed[0]!).mode & 0o777).toString(8)}), and the sandbox cannot open it to its own uid: ${why}`;
}

let opening: { why?: string } | undefined;

/** Why no closed folder can be opened to a run's uid here (no unshare or mount; a kernel that refuses the mount namespace or overlayfs): tried once, on a folder of its own. */
function openingUnavailable(): string | undefined {
  if (unsharePath() === undefined || mountPath() === undefined) return 'no unshare or mount on PATH (Debian package util-linux)';
  if (opening) return opening.why;
  const folder = mkdtempSync(join(sandboxBase(), 'he-open-'));
  mkdirSync(join(folder, 'in'), { mode: 0o755 });
  const identity = runIdentity();
  const argv = [...asIdentity(identity, [folder]), '/bin/sh', '-c', 'cd "$0"', join(folder, 'in')];
  const run = spawnSync(argv[0]!, argv.slice(1), { encoding: 'utf8', timeout: 10_000, env: {}, stdio: ['ignore', 'ignore', 'pipe'] });
  releaseIdentity(identity);
  rmSync(folder, { recursive: true, force: true });
  opening = { why: run.status === 0 ? undefined : `opening a folder in a mount namespace of its own failed: ${run.error?.message ?? run.stderr.trim().split('\n').at(-1)}` };
  return opening.why;
}

/** Makes `path`, which the worker has just made, the identity's own, readable by it alone. */
function own(path: string, identity: HostIdentity, mode = 0o700): void {
  if (identity.own) lchownSync(path, identity.uid, identity.gid);
  chmodSync(path, mode);
}

/** Whether this worker reaped what dead workers left (at its first sandbox). */
let reaped = false;

/** A sandbox as started, with what it was started with: what tells whether a run can take it, started ahead. */
interface Pending {
  box: Sandbox;
  /** Its decoys' canaries: a run takes the sandbox started ahead only with them (canariesAhead). */
  canaries: Canaries | undefined;
  /** Whether a run was given its canaries (canariesAhead): no other run is. */
  promised?: boolean;
  /** What it was started with: its command line, its limits, its seccomp filter, whether it has a stdin. */
  key: string;
  /** Whether it keeps the worker alive: not while it waits ahead, unused. */
  hold(held: boolean): void;
  /** Starts socats on `ports` now, before its run: the ports the next run's servers take (portsAhead), if that run takes this sandbox. */
  listen(ports: readonly number[]): void;
}

/**
 * The sandbox this process started ahead for its next run, one at most: started as a run's agent
 * starts (the worker then waits on the agent, and bwrap's start no longer slows the next run's
 * page: bench:sandbox), with canaries of its own, which the next run is given (canariesAhead);
 * taken by that run if its sandbox has the same command line (the same programs, limits,
 * temporary folders, shown folders and secret files), closed by a run whose has not. It holds no
 * agent; it dies with the worker (--die-with-parent), its folder removed at the worker's exit.
 */
let ahead: Pending | undefined;

/** Closes the sandbox started ahead, if any: what a run leaves is then nothing but what it made (a test of leftovers, a worker's end). */
export async function closeSandboxAhead(): Promise<void> {
  const pending = ahead;
  ahead = undefined;
  // Its ports are no run's now: a run given its canaries and never started leaves no turn to the next listens.
  takePortsAhead(0);
  await pending?.box.close();
}

/**
 * Canaries for a run: those of the sandbox started ahead, which only a run with them can take,
 * given to one run, whose next servers take the ports it pipes already; else new ones.
 */
export function canariesAhead(): Canaries {
  if (ahead?.canaries === undefined || ahead.promised) return makeCanaries();
  ahead.promised = true;
  if (ahead.box.stages.socatsAsked !== undefined) takePortsAhead(RUN_PORTS);
  return ahead.canaries;
}

/**
 * Starts a sandbox: bwrap and its relay, which wait on the control channel for the agent's command
 * (`start`). Each run has its own: one sandbox never runs two agents. The one started ahead is
 * taken where it fits; another is started ahead as this one's agent starts.
 */
export function startSandbox(options: SandboxOptions): Sandbox {
  const filter = seccompFilter();
  if ('error' in filter) throw new Error(filter.error);
  const limits = { ...DEFAULT_SANDBOX_LIMITS, ...options.limits };
  const view = viewOf(options.cwd, [options.cwd, ...(options.shown ?? [])], options.expose ?? [], options.canaries);
  const fits =
    ahead !== undefined &&
    ahead.canaries === options.canaries &&
    ahead.box.stages.sandboxExited === undefined &&
    ahead.key === keyOf(commandLine(limits, view, ahead.box.identity, runDirOf(ahead.box)), limits, filter.path, options);
  if (ahead && !fits) void ahead.box.close();
  const pending = fits ? ahead! : spawnSandbox(options, limits, view, filter.path);
  ahead = undefined;
  pending.hold(true);
  return pending.box;
}

/** The folder a sandbox's own folders are in: its work folder's. */
const runDirOf = (box: Sandbox) => dirname(box.workDir);

/** What a sandbox is started with beyond its command line: its limits (its cgroup's too), its seccomp filter, whether it has a stdin. */
const keyOf = (argv: readonly string[], limits: SandboxLimits, filter: string, options: SandboxOptions) => JSON.stringify([argv, limits, filter, options.stdin === true]);

/** bwrap's whole command line, from prlimit on, for a sandbox of `identity` in `runDir` showing `view`. */
function commandLine(limits: SandboxLimits, view: View, identity: HostIdentity, runDir: string): string[] {
  // As root, the folders on the way to what it is shown that only their owners may enter: opened to its uid (those it only passes through emptied).
  const closed = identity.own ? closedFolders(view.shown) : [];
  const socketDir = join(runDir, 'net');
  return [
    ...rlimits(limits, identity),
    ...asIdentity(identity, closed),
    bwrapPath(),
    ...isolation(5),
    ...mountArgs({ shown: view.shown, closed, decoys: view.decoys.map(({ path }, i) => ({ path, fd: FIRST_DECOY_FD + i })), workDir: join(runDir, 'work'), own: [socketDir], tmpBytes: limits.tmpBytes, shmBytes: limits.shmBytes }),
    '--chdir', socketDir,
    '--json-status-fd', '4',
    '--', '/bin/sh', '-c', RELAY, 'harness-eval-relay', socatPath()!,
  ];
}

/** Spawns a sandbox's bwrap: its relay then waits for its command. */
function spawnSandbox(options: SandboxOptions, limits: SandboxLimits, view: View, filter: string): Pending {
  // Its cgroup, where the machine delegates one: its Chromium, started as this identity, joins it too.
  const identity: HostIdentity = { ...runIdentity(), cgroup: makeCgroup(limits) };
  // Short: a Unix socket's path is limited to 108 bytes. Made at once, with no await: bwrap starts before the worker turns to anything else (the page's opening).
  // Its parent only to pass through; its socket folder the run's own, so another run's agent (another uid) cannot name a socket in it.
  const runDir = mkdtempSync(join(sandboxBase(), ownFolder('sbx')));
  chmodSync(runDir, 0o711);
  const [socketDir, workDir] = [join(runDir, 'net'), join(runDir, 'work')];
  for (const folder of [socketDir, workDir]) {
    mkdirSync(folder);
    own(folder, identity);
  }
  const sockets = new Set<Socket>();
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  };
  const servers: Server[] = [];
  const listen = async (name: string, onConnection: (socket: Socket) => void) => {
    const server = createServer((socket) => (track(socket), onConnection(socket)));
    // Each held connection is a descriptor of the worker's and a socat inside: past the limit, dropped at once.
    server.maxConnections = limits.connections;
    server.on('drop', () => attempt('limit', `connections to one endpoint (${limits.connections})`));
    servers.push(server);
    const path = join(socketDir, name);
    await new Promise<void>((resolve, reject) => server.once('error', reject).listen(path, resolve));
    own(path, identity);
  };
  const attempts: EscapeAttempt[] = [];
  const attempt = (kind: EscapeAttempt['kind'], detail: string) => {
    if (!attempts.some((seen) => seen.kind === kind && seen.detail === detail)) attempts.push({ kind, detail });
  };
  let program = '';
  // The relay's socats (pids in the sandbox): the network's, not the agent's; said before the agent started.
  let listeners = new Set<number>();
  const stages: Partial<Record<SandboxStage, number>> = {};
  const reach = (stage: SandboxStage) => void (stages[stage] ??= performance.now());
  const argv = commandLine(limits, view, identity, runDir);
  const filterFd = openSync(filter, 'r');
  const decoyFds = writeDecoys(view, runDir).map(({ file }) => openSync(file, 'r'));
  // Its own environment is empty: bwrap's init stays in the sandbox as pid 1, and /proc/1/environ would show the worker's keys.
  const child = spawn(argv[0]!, argv.slice(1), { detached: true, env: {}, stdio: stdioWithoutInherited([options.stdin ? 'pipe' : 'ignore', 'pipe', 'pipe', 'pipe', 'pipe', filterFd, ...Array<Stdio>(FIRST_DECOY_FD - 6).fill('ignore'), ...decoyFds]) });
  for (const fd of [filterFd, ...decoyFds]) closeSync(fd);
  reach('spawned');
  // After the spawn, while bwrap sets up: what dead workers left is reaped once per worker, at its first sandbox (a worker
  // that dies is replaced by a new one; its sandboxes' inits die with it, --die-with-parent, so this is a second line).
  const orphansKilled = reaped ? 0 : reapOrphans();
  if (!reaped) {
    reaped = true;
    reapCgroups();
    void reapFolders([sandboxBase(), tmpdir()]);
  }
  // The sandbox's init (pid 1 inside), as a pid outside: its root's /proc is the sandbox's own. And the main process's exit code, once it ended.
  let initPid: number | undefined;
  let exitCode: number | undefined;
  let status = '';
  (child.stdio[4] as Socket)
    .setEncoding('utf8')
    .on('data', (chunk: string) => {
      status += chunk;
      for (let end = status.indexOf('\n'); end !== -1; end = status.indexOf('\n')) {
        const parsed = statusSchema.safeParse(safeJson(status.slice(0, end))).data;
        status = status.slice(end + 1);
        if (parsed && 'child-pid' in parsed) initPid = parsed['child-pid'];
        if (parsed && 'exit-code' in parsed) exitCode = parsed['exit-code'];
      }
    })
    .on('end', () => {
      const parsed = statusSchema.safeParse(safeJson(status)).data;
      if (parsed && 'exit-code' in parsed) exitCode = parsed['exit-code'];
    })
    .on('error', () => undefined);
  const statusEnded = new Promise<void>((resolve) => (child.stdio[4] as Socket).once('close', () => resolve()));
  // Listened for at once: the sandbox may end before its agent is started.
  const sandboxExit = processExit(child);
  void sandboxExit.then(() => reach('sandboxExited'));
  // As pids outside, to signal them: the machine's whole /proc is read.
  const processes = () => (child.pid === undefined ? [] : descendants('/proc', child.pid, (pid) => listeners.has(namespacePid(pid))).filter((pid) => namespacePid(pid) > 2));
  /** The sandbox's own /proc, seen from outside: a few entries where the machine's has hundreds, its pids the namespace's. */
  const sandboxProc = () => (initPid === undefined ? undefined : `/proc/${initPid}/root/proc`);
  const processesLeft = () => {
    const proc = sandboxProc();
    if (proc === undefined) return processes().length;
    try {
      return descendants(proc, 1, (pid) => listeners.has(pid)).filter((pid) => pid > 2).length;
    } catch {
      return processes().length; // the sandbox ended meanwhile, and everything in it
    }
  };
  /** The ports the relay's socats were told to listen on (some ahead, maybe, for servers not yet started), and how many of its `listen`s it answered. */
  let listening: number[] = [];
  let listensAsked = 0;
  let listensAnswered = 0;
  /** Tells the relay to start a socat for each port not yet listened on. */
  const listenInside = (ports: readonly number[]) => {
    const fresh = ports.filter((port) => !listening.includes(port));
    if (fresh.length === 0) return;
    listening = [...listening, ...fresh];
    listensAsked += 1;
    control.write(`listen ${fresh.join(' ')}\n`);
    reach('socatsAsked');
  };
  /**
   * Answers true once every port listened on listens in the sandbox's network namespace, false once a
   * socat or the sandbox ended first. Read from outside: before the agent starts, the namespace's
   * only TCP sockets in use are the socats' listening ones, counted in its `/proc/<init>/net/sockstat`
   * (its `net/tcp`, which the relay's sh read, walks every socket of the machine's: 5 ms a run here).
   */
  const whenListening = async (): Promise<boolean> => {
    const ended = (pid: number) => {
      const state = readText(`${sandboxProc()}/${pid}/stat`)?.replace(/^.*\) /s, '')[0];
      return state === undefined || state === 'Z';
    };
    for (;;) {
      if (stages.sandboxExited !== undefined) return false;
      // Once the relay said which socats it started: its `listen`s are done.
      if (initPid !== undefined && listensAnswered === listensAsked) {
        const inUse = Number(/^TCP: inuse (\d+)/m.exec(readText(`/proc/${initPid}/net/sockstat`) ?? '')?.[1] ?? 0);
        if (inUse >= listening.length) return true;
        if ([...listeners].some(ended)) return false;
      }
      // A moment for the socats to bind: a busy loop would take the CPU they need on a loaded machine.
      await sleep(1);
    }
  };
  /** Whether the relay still has a child other than its socats: the agent's main process. */
  const mainRuns = () => {
    const proc = sandboxProc();
    if (proc === undefined) return false;
    try {
      return descendants(proc, 2, (pid) => listeners.has(pid), 1).length > 0;
    } catch {
      return false;
    }
  };
  // Node's own kill: it signals nothing once bwrap has ended, when its pid may be another process's.
  const kill = () => void child.kill('SIGKILL');
  let looks = 0;
  /** What the last look measured of the work folder. */
  let usage: ReturnType<typeof folderUsage> | undefined;
  const check = () => {
    usage = folderUsage(workDir, WORK_DIR_ENTRIES);
    if (usage.entries > WORK_DIR_ENTRIES) attempt('limit', `work folder entries (${WORK_DIR_ENTRIES})`);
    if (usage.bytes > limits.workDirBytes) attempt('limit', `work folder size (${limits.workDirBytes} bytes)`);
    if (usage.unmeasured) attempt('limit', `work folder measure (a name past PATH_MAX, ${PATH_MAX} bytes, or a folder closed to the worker: what is below cannot be measured)`);
    // A write past the file size fails (EFBIG; SIGXFSZ for a program that does not ignore it, as Python does): the file stops at the limit.
    if (usage.largest >= limits.fileBytes) attempt('limit', `file size (${limits.fileBytes} bytes)`);
    if (attempts.some(({ kind, detail }) => kind === 'limit' && detail.startsWith('work folder'))) kill();
    const memoryInTotal = `memory in total (${limits.totalMemoryBytes} bytes)`;
    // Its cgroup's word first: past its memory the kernel killed the whole group, and the sandbox's /proc with it.
    const hit = identity.cgroup === undefined ? undefined : cgroupLimitsHit(identity.cgroup);
    if (hit?.memory) attempt('limit', memoryInTotal);
    if (hit?.processes) attempt('limit', `processes (${limits.processes})`);
    const proc = sandboxProc();
    if (proc === undefined) return;
    try {
      // Counted in the sandbox first (a few entries). As root, on the whole machine too, where bwrap and its Chromium count: near a limit, and, once
      // its Chromium started, every 4th look (2 s) where no cgroup holds its memory (it grows outside the sandbox); a look at hundreds of processes is not taken every 500 ms a run.
      const inSandbox = usageIn(proc);
      const near = inSandbox.tasks * 2 >= limits.processes || (identity.cgroup === undefined && identity.outside === true && (looks++ % 4 === 0 || inSandbox.residentBytes * 2 >= limits.totalMemoryBytes));
      const run = identity.own && near ? usageIn('/proc', identity.uid) : inSandbox;
      if (identity.own && run.tasks >= limits.processes) attempt('limit', `processes (${limits.processes})`);
      if (identity.cgroup === undefined && run.residentBytes > limits.totalMemoryBytes) {
        attempt('limit', memoryInTotal);
        kill();
      }
    } catch {
      return; // the sandbox ended meanwhile: what it held went with it
    }
    if (tmpfsFull(`/proc/${initPid}/root/tmp`)) attempt('limit', `/tmp size (${limits.tmpBytes} bytes)`);
    if (tmpfsFull(`/proc/${initPid}/root/dev/shm`)) attempt('limit', `/dev/shm size (${limits.shmBytes} bytes)`);
  };
  let watch: ReturnType<typeof setInterval> | undefined;
  let started = false;
  let signalMainEnded: () => void;
  const mainEnded = new Promise<void>((resolve) => (signalMainEnded = resolve));
  void sandboxExit.then(() => signalMainEnded());
  let unstarted: number | undefined;
  const control = child.stdio[3] as Socket;
  // A sandbox killed while a command is written to it must not throw in the worker.
  control.on('error', () => control.destroy());
  const onLine = (text: string) => {
    const [kind, ...words] = text.split(' ');
    if (!started) {
      if (kind === 'up') reach('relayUp');
      if (kind === 'socats') {
        listeners = new Set(words.map(Number));
        listensAnswered += 1;
      }
      if (kind === 'starting') {
        started = true;
        reach('starting');
        watch = setInterval(check, WATCH_MS).unref();
        startAhead(options, limits, view.shown, filter);
      }
      return;
    }
    // From here on the agent runs: a line is a cue to look from outside, never the truth.
    if (kind === 'unstarted' && words.length === 1 && /^\d+$/.test(words[0]!)) unstarted ??= Number(words[0]);
    else if (kind === 'exited' && words.length === 0 && !mainRuns()) {
      reach('agentExited');
      signalMainEnded();
    } else attempt('control', `a line on the relay's control channel it never writes: ${JSON.stringify(text.slice(0, 80))}`);
  };
  control.setEncoding('utf8').on(
    'data',
    lineReader(CONTROL_LINE_BYTES, onLine, () => {
      attempt('control', `a line of more than ${CONTROL_LINE_BYTES} bytes on the relay's control channel`);
      control.destroy();
      kill();
    }),
  );
  void mainEnded.then(() => clearInterval(watch));
  const box: Sandbox = {
    child,
    identity,
    view,
    workDir,
    orphansKilled,
    stages,
    async forward(urls) {
      const ports = portsOf(urls);
      await Promise.all(
        ports.map((port) =>
          listen(`s${port}`, (inside) => {
            reach('connected');
            // To a server of this process, the connection itself (loopback.ts); to another's (an app of the team's), piped.
            if (handOver(port, inside)) return;
            const upstream = connect({ port, host: '127.0.0.1', noDelay: true });
            track(upstream);
            inside.pipe(upstream).pipe(inside);
            inside.on('error', () => upstream.destroy());
            upstream.on('error', () => inside.destroy());
          }),
        ),
      );
      listenInside(ports);
      reach('forwarded');
    },
    start({ argv, env }) {
      program = argv[0]!;
      const exports = Object.entries({ ...env, HOME: workDir, TMPDIR: '/tmp' }).map(([name, value]) => `${name}=${relayWord(value)}`);
      // The environment at once, read by the relay while the worker looks for the ports; `start` once they listen.
      control.write(`${options.stdin ? 'relay_stdin=1\n' : ''}export ${exports.join(' ')}\n`);
      void whenListening().then((listens) =>
        control.write(listens ? `start ${[options.cwd, ...argv].map(relayWord).join(' ')}\n` : `echo "harness-eval: the sandbox's socat could not listen on a port of ${listening.join(' ')}" >&2; exit 1\n`),
      );
    },
    mainEnded,
    async finish(claimRead) {
      check();
      const left = processesLeft();
      if (left > 0) {
        // What it left was stopped at its main process's end, and its claim read since: woken a moment, its network still stopped (the
        // relay's socats are not woken), so that a process waiting to write the claim again does it, and is seen (command.ts).
        // With nothing left, nothing can write the claim: it is read while the sandbox ends.
        await claimRead;
        processes().forEach((pid) => signal(pid, 'SIGCONT'));
        await sleep(LATE_WRITE_MS);
        check();
      }
      // The relay goes, and bwrap's init with it: the PID namespace ends, and everything the agent left in it.
      control.write('end\n');
      const ended = await Promise.race([Promise.all([sandboxExit, statusEnded]).then(() => true), sleep(END_MS).then(() => false)]);
      if (!ended) {
        kill();
        // Its init dies with bwrap (--die-with-parent), and the namespace with its init, a moment later: the work folder is copied out once nothing of the agent runs to change it under the copy.
        for (let waited = 0; initPid !== undefined && waited < END_MS && !processEnded(initPid); waited += 10) await sleep(10);
      }
      const exit: AgentExit =
        exitCode === undefined ? { code: null, signal: 'SIGKILL' } : unstarted !== undefined && unstarted === exitCode ? { error: `spawn ${program} ${unstarted === 127 ? 'ENOENT' : 'EACCES'}` } : shellStatus(exitCode);
      if (exit.error === undefined && exit.signal === 'SIGXFSZ') attempt('limit', `file size (${limits.fileBytes} bytes)`);
      return { exit, escapes: { processesLeft: left, attempts: [...attempts] } };
    },
    sandboxExit,
    copyOut: (destination, secrets) => copyOut(workDir, destination, limits.workDirBytes, secrets),
    terminate: () => processes().forEach((pid) => signal(pid, 'SIGTERM')),
    kill,
    async close() {
      clearInterval(watch);
      kill();
      control.destroy();
      for (const socket of sockets) socket.destroy();
      await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
      // Its work folder's entries as the last look counted them (none measured: any number).
      await removeFolder(runDir, usage === undefined || usage.unmeasured ? Infinity : usage.entries);
      if (identity.cgroup) removeCgroup(identity.cgroup);
      releaseIdentity(identity);
    },
  };
  const pending: Pending = {
    box,
    canaries: options.canaries,
    key: keyOf(argv, limits, filter, options),
    hold(held) {
      for (const handle of [child, ...child.stdio]) {
        if (handle && 'ref' in handle) (held ? handle.ref : handle.unref).call(handle);
      }
    },
    listen: listenInside,
  };
  return pending;
}

let exitHooked = false;

/** Starts the sandbox for this process's next run (one at most), as the current one's agent starts: its options, with canaries of its own. */
function startAhead(options: SandboxOptions, limits: SandboxLimits, shown: readonly string[], filter: string): void {
  if (ahead) return;
  const canaries = options.canaries && makeCanaries();
  const pending = spawnSandbox({ ...options, canaries }, limits, viewOf(options.cwd, shown, options.expose ?? [], canaries), filter);
  ahead = pending;
  pending.hold(false);
  // Its socats start with it, on the ports of the next run's four servers: not while that run's page opens (bench:sandbox).
  void portsAhead(RUN_PORTS).then((ports) => ahead === pending && pending.box.stages.sandboxExited === undefined && pending.listen(ports));
  if (exitHooked) return;
  exitHooked = true;
  // Never taken: its bwrap dies with the worker, and its folder is removed here (a killed worker's, by the next worker: reapFolders).
  process.once('exit', () => {
    if (!ahead) return;
    ahead.box.kill();
    rmSync(runDirOf(ahead.box), { recursive: true, force: true });
  });
}

/**
 * A 'data' listener that calls `onLine` with each line, however the chunks cut them, and `onFlood`
 * (once, then nothing more) when a line grows past `max` characters: each chunk is scanned once, so
 * megabytes with no newline cost what they are long, not their square.
 */
export function lineReader(max: number, onLine: (line: string) => void, onFlood: () => void): (chunk: string) => void {
  let line = '';
  let flooded = false;
  return (chunk) => {
    if (flooded) return;
    let start = 0;
    for (let end = chunk.indexOf('\n'); end !== -1; start = end + 1, end = chunk.indexOf('\n', start)) {
      onLine(line + chunk.slice(start, end));
      line = '';
    }
    line += chunk.slice(start, start + max + 1);
    if (line.length > max) {
      flooded = true;
      onFlood();
    }
  };
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // ESRCH: it ended meanwhile.
  }
}

/** Every live process under `root` (by parent pid, from `<proc>/*\/stat`), zombies left out (they run no more), and none of `pruned`'s subtrees; `depth` generations at most. */
function descendants(proc: string, root: number, pruned: (pid: number) => boolean, depth = Infinity): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync(proc)) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = readText(`${proc}/${entry}/stat`);
    // The command name may hold spaces and parentheses: the fields after its last `)` are fixed.
    const [state, ppid] = stat?.slice(stat.lastIndexOf(')') + 2).split(' ') ?? [];
    if (state === undefined || state === 'Z') continue;
    const siblings = children.get(Number(ppid)) ?? [];
    children.set(Number(ppid), [...siblings, Number(entry)]);
  }
  const found: number[] = [];
  const walk = (pid: number, left: number) => left > 0 && (children.get(pid) ?? []).filter((child) => !pruned(child)).forEach((child) => (found.push(child), walk(child, left - 1)));
  walk(root, depth);
  return found;
}

/** Whether a process has ended: gone, or a zombie (a PID namespace's init is one only once every process in it has ended). */
function processEnded(pid: number): boolean {
  const stat = readText(`/proc/${pid}/stat`);
  return stat === undefined || stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
}

/** A process's pid in its innermost PID namespace (the last of `NSpid`): 1 is the sandbox's init, 2 the relay. */
function namespacePid(pid: number): number {
  const line = readText(`/proc/${pid}/status`)?.match(/^NSpid:\s+(.*)$/m)?.[1];
  return Number(line?.trim().split(/\s+/).at(-1) ?? 0);
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}


/** Chromium's DevTools port inside its sandbox: the network namespace is its own, so a fixed port is free. */
export const SANDBOXED_DEVTOOLS_PORT = 9222;

/** Where a sandboxed Chromium's DevTools port is reached, in its sandbox: a Unix socket in its /run, a tmpfs of its own, reached from outside through /proc/<pid>/root. */
export const SANDBOXED_DEVTOOLS_SOCKET = '/run/devtools';

/** A sandboxed Chromium's limits: an agent's, but for its memory per process (a renderer's heap may be large), and a larger /dev/shm, where it keeps its frames. */
const CHROMIUM_LIMITS: SandboxLimits = { ...DEFAULT_SANDBOX_LIMITS, memoryBytes: Infinity, fileBytes: 64 * 1024 * 1024, shmBytes: 256 * 1024 * 1024 };

export interface ChromiumSandbox {
  /** The run's identity: Chromium runs as its agent does. */
  identity: HostIdentity;
  /** What its agent's sandbox shows (Sandbox.view): its Chromium's shows the same, the same decoys over the same files. */
  view: View;
  /** Where downloads go, in the sandbox, and the most they may hold: a tmpfs of that size. None: no such folder. */
  downloads?: { dir: string; maxBytes: number };
}

export interface SandboxedChromium {
  /** A shell script for Playwright's `executablePath`. */
  path: string;
  /** Where bwrap writes, as JSON, the pid (`child-pid`) of the sandbox's first process once it is set up: its `/proc/<pid>/root` is the sandbox's filesystem. */
  info: string;
}

/**
 * A shell script for Playwright's `executablePath` that runs Chromium in a sandbox of its own:
 * the same layers as an agent's, as the run's identity, with its agent's view (so file:// shows
 * what the agent itself reads: nothing root keeps private, the decoys over its secret files), and
 * no network at all: the site reaches it through Playwright's routing, over the pipe Playwright
 * launched it with. Nothing it writes reaches the host's disk: every folder it may write is a
 * tmpfs of a fixed size (its temporary folders, its profile `profile`, the downloads folder), so a
 * CDP client cannot fill the disk through it. Its DevTools port is piped by socat to the Unix socket
 * SANDBOXED_DEVTOOLS_SOCKET. Written into `dir`, the worker's, which the sandbox does not show.
 */
export async function sandboxedChromium(executable: string, dir: string, profile: string, { identity, view, downloads }: ChromiumSandbox): Promise<SandboxedChromium> {
  const filter = seccompFilter();
  if ('error' in filter) throw new Error(filter.error);
  const problem = unreachable(executable, 'Chromium');
  if (problem) throw new Error(problem);
  // Its identity's, as the agent's folders are: the uid names the worker whose run made it. Its memory is the run's, outside the agent's sandbox.
  own(dir, identity);
  identity.outside = true;
  mkdirSync(profile, { recursive: true });
  const decoys = writeDecoys(view, dir);
  // Descriptors 3 and 4 are Playwright's pipe to Chromium; the filter and bwrap's info go above them, the decoys where an agent's go.
  const [filterFd, infoFd] = [5, 6];
  const tmpfs = (path: string, bytes: number) => ['--perms', '0700', '--size', String(bytes), '--tmpfs', path];
  const shown = [...view.shown, dirname(executable)];
  const closed = identity.own ? closedFolders(shown) : [];
  const bwrap = [
    ...rlimits(CHROMIUM_LIMITS, identity),
    ...asIdentity(identity, closed),
    bwrapPath(),
    ...isolation(filterFd),
    ...mountArgs({ shown, closed, decoys: decoys.map(({ path }, i) => ({ path, fd: FIRST_DECOY_FD + i })), own: [], tmpBytes: CHROMIUM_LIMITS.tmpBytes, shmBytes: CHROMIUM_LIMITS.shmBytes }),
    ...tmpfs(profile, CHROMIUM_LIMITS.workDirBytes),
    ...(downloads ? tmpfs(downloads.dir, downloads.maxBytes) : []),
    '--setenv', 'HOME', dir,
    '--setenv', 'PATH', process.env.PATH ?? '/usr/bin:/bin',
    '--info-fd', String(infoFd),
  ];
  // socat in the background, then Chromium in its place with Playwright's arguments (and its pipe, fds 3 and 4).
  const relay = `("$0" UNIX-LISTEN:${SANDBOXED_DEVTOOLS_SOCKET},fork TCP:127.0.0.1:${SANDBOXED_DEVTOOLS_PORT},nodelay </dev/null 3>&- 4>&-) & exec "$@"`;
  const inner = ['/bin/sh', '-c', relay, socatPath()!, executable];
  const [path, info] = [join(dir, 'chromium'), join(dir, 'info')];
  const opened = [[filterFd, '<', filter.path], [infoFd, '>', info], ...decoys.map(({ file }, i) => [FIRST_DECOY_FD + i, '<', file])].flat().map(String);
  const opener = [seccompPython(), '-I', '-S', '-c', OPENER, String(opened.length / 3), ...opened];
  await writeFile(path, `#!/bin/sh\nexec ${[...opener, ...bwrap, '--', ...inner].map(shellQuote).join(' ')} "$@"\n`, { mode: 0o700 });
  return { path, info };
}

/**
 * Opens files at the descriptors a command is to find them at, then runs the command in its
 * place: argv is a count, that many (descriptor, `<` or `>`, path), then the command. A sandboxed
 * Chromium's bwrap reads its filter, its info and one decoy a descriptor, more than sh's nine; the
 * Python that builds the seccomp filter is there wherever a sandbox is.
 */
const OPENER = `import os, sys
count = int(sys.argv[1])
for i in range(count):
    fd, way, path = int(sys.argv[2 + 3 * i]), sys.argv[3 + 3 * i], sys.argv[4 + 3 * i]
    opened = os.open(path, os.O_RDONLY if way == '<' else os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    if opened != fd:
        os.dup2(opened, fd)
        os.close(opened)
    os.set_inheritable(fd, True)
command = sys.argv[2 + 3 * count:]
os.execv(command[0], command)
`;

export function shellQuote(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`;
}
