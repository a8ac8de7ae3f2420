import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { accessSync, constants, mkdtempSync, openSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { constants as osConstants, tmpdir } from 'node:os';
import { delimiter, join, resolve } from 'node:path';
import { z } from 'zod';
import type { Escapes } from '../core/agent.ts';

export type { Escapes };

/**
 * The sandbox a command agent runs in: bubblewrap (bwrap), on Linux. The agent gets its own user,
 * PID, mount, IPC, UTS, cgroup and network namespaces, so it sees no process outside its run and
 * can signal none; the filesystem is read-only but for its work folder and a private /tmp; its
 * network is a loopback of its own where socat (started by the sandbox's first process, a small
 * sh relay) answers on the ports of the run's URLs only, each piped through a Unix socket to the
 * real port outside.
 */

/** `auto`: sandboxed where bwrap works, else run uncontained and say so; `required`: refuse to run uncontained; `none`: never sandboxed. */
export const sandboxModeSchema = z.enum(['auto', 'required', 'none']);
export type SandboxMode = z.infer<typeof sandboxModeSchema>;

/** The bwrap to run: HARNESS_BWRAP (tests point it at a missing path), else bwrap on PATH. */
const bwrapPath = () => process.env.HARNESS_BWRAP || 'bwrap';

/** The socat the relays pipe ports with: HARNESS_SOCAT (tests point it at a missing path), else the first on PATH. */
const socatPath = (): string | undefined => process.env.HARNESS_SOCAT || (process.env.PATH ?? '').split(delimiter).filter(Boolean).map((dir) => join(dir, 'socat')).find(isExecutable);

function isExecutable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return statSync(file).isFile();
  } catch {
    return false;
  }
}

/** The agent's user inside: nobody, with no capabilities. */
const NOBODY = '65534';

/**
 * Namespaces and isolation every sandbox gets; the probe runs with the same, so a kernel that
 * refuses one is found before a run. /tmp, the temporary folder and /run are empty: a Unix socket
 * is reached by its path whatever the network namespace, and other runs' (their relays', their
 * Chromiums' DevTools) live there.
 */
const isolation = () => [
  '--unshare-all',
  '--unshare-user',
  '--uid', NOBODY,
  '--gid', NOBODY,
  '--cap-drop', 'ALL',
  // No terminal to inject keystrokes into (TIOCSTI), and no way to outlive the worker.
  '--new-session',
  '--die-with-parent',
  '--ro-bind', '/', '/',
  '--dev', '/dev',
  '--proc', '/proc',
  '--tmpfs', '/tmp',
  ...(resolve(tmpdir()) === '/tmp' ? [] : ['--tmpfs', resolve(tmpdir())]),
  '--tmpfs', '/run',
  '--clearenv',
];

/** Of the worker's environment, only what any program needs to start: never its keys. */
const STARTUP_ENV = ['PATH', 'HOME', 'LANG', 'LC_ALL', 'TMPDIR', 'SYSTEMROOT'];

/** The worker's environment cut to STARTUP_ENV: what a command agent and its Chromium start with. */
export function startupEnv(): Record<string, string> {
  return Object.fromEntries(STARTUP_ENV.flatMap((name) => (process.env[name] === undefined ? [] : [[name, process.env[name]!]])));
}

const probes = new Map<string, string | undefined>();

/** Why no sandbox can run here (not Linux, no bwrap or socat, bwrap fails its probe), or undefined: probed once per bwrap and socat. */
export function sandboxUnavailable(): string | undefined {
  if (process.platform !== 'linux') return `bubblewrap runs on Linux only (this is ${process.platform})`;
  const [bwrap, socat] = [bwrapPath(), socatPath()];
  const key = `${bwrap}\0${socat}`;
  if (!probes.has(key)) probes.set(key, probe(bwrap, socat));
  return probes.get(key);
}

/** Runs socat in a sandbox made as every sandbox is: a kernel that refuses a namespace, or a socat the sandbox cannot run, is found before a run. */
function probe(bwrap: string, socat: string | undefined): string | undefined {
  if (socat === undefined) return 'no socat on PATH (the sandbox pipes the run\u2019s ports with it: Debian package socat)';
  try {
    accessSync(socat, constants.X_OK);
  } catch (error) {
    return `no usable socat (${socat}: ${(error as NodeJS.ErrnoException).code})`;
  }
  const run = spawnSync(bwrap, [...isolation(), '--', socat, '-V'], { encoding: 'utf8', timeout: 10_000 });
  const why = run.error ? `${bwrap}: ${(run.error as NodeJS.ErrnoException).code ?? run.error.message}` : run.status !== 0 ? `${bwrap} failed its probe: ${run.stderr.trim().split('\n')[0]}` : undefined;
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
export function stdioWithoutInherited(stdio: readonly Stdio[]): Array<Stdio | number> {
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
  const flags = readProc(`/proc/self/fdinfo/${fd}`)?.match(/^flags:\s*([0-7]+)/m)?.[1];
  // Gone meanwhile (the listing's own descriptor): nothing a child could inherit.
  return flags === undefined || (parseInt(flags, 8) & O_CLOEXEC) !== 0;
}

/** How a process ended (the agent's, as the relay saw it; bwrap's); `error`, spawn's message (`spawn x ENOENT`), when it could not start. */
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
  /** The one folder it may write (its claim goes there); its HOME. */
  workDir: string;
}

/** What the relay starts in the sandbox, once the run's endpoints are up. */
export interface AgentCommand {
  /** The agent's command; the relay spawns it inside. */
  argv: string[];
  /** Its whole environment: nothing of the worker's reaches the sandbox otherwise. */
  env: Record<string, string>;
}

/** A sandbox's stages, as reached: bwrap spawned, its relay up, the ports handed over, the agent starting (every port listens), its first connection out, its end, bwrap's end. */
export type SandboxStage = 'spawned' | 'relayUp' | 'forwarded' | 'starting' | 'connected' | 'agentExited' | 'sandboxExited';

export interface Sandbox {
  /** bwrap: its stdout and stderr are the agent's. */
  child: ChildProcess;
  /** When each stage was reached (performance.now()): what bench:sandbox breaks a run down by. */
  stages: Readonly<Partial<Record<SandboxStage, number>>>;
  /** Pipes the run's endpoints: the only TCP ports the agent reaches, at the same port numbers on its own 127.0.0.1. Once, before `start`. */
  forward(urls: readonly string[]): Promise<void>;
  /** Hands the command to the relay, which starts it once every forwarded port listens: once. */
  start(command: AgentCommand): void;
  /** Settles when the agent's main process ended (the relay says so), or never when the sandbox ends first. */
  agentExit: Promise<AgentExit>;
  /** Settles when bwrap ended, or could not start: the sandbox, and everything in it, is gone. */
  sandboxExit: Promise<AgentExit>;
  /** How many processes run in the sandbox other than its init, the relay and the socats: the agent's. */
  processesLeft(): number;
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
 * are up, in the socket folder `dir`, and reads lines of sh from its fd 3, the control channel: a
 * socket pair with the worker, which no other process can open (not by path, not through
 * /proc/<pid>/fd). The worker sends, once the endpoints are up (while the page still opens), then
 * once the agent's command is known:
 *
 *   listen <port>…          one socat per port: 127.0.0.1:<port> inside, piped to the Unix socket
 *                           s<port> in `dir`; answers `socats <pid>…` (as pids in the sandbox) at once
 *   export NAME='value' …   the agent's whole environment (the relay's own is empty)
 *   start <cwd> <argv>…     once every port listens (by then they do: the socats had the page's
 *                           opening to bind, so the relay polls nothing while the page opens; it
 *                           checks once, and waits only if they still bind), answers `starting` and
 *                           runs the agent in `cwd`, stdin /dev/null, stdout and stderr bwrap's, fd 3
 *                           closed; answers `unstarted <status>` when it could not start (sh's 127:
 *                           not found, 126: not executable) and then `exited <status>` (sh's: 128+n
 *                           for signal n), and waits: what the agent left is counted from outside
 *                           before the sandbox is killed
 *
 * Values are single-quoted, their newlines written as "$nl": one line per command. The relay says
 * `up` first: that line and `starting` mark two of its stages (`Sandbox.stages`).
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
ports=
pids=
listen() {
  ports=$*
  for port; do
    "$socat" TCP-LISTEN:$port,bind=127.0.0.1,reuseaddr,fork,nodelay UNIX-CONNECT:s$port </dev/null >/dev/null 2>&1 3>&- &
    pids="$pids $!"
  done
  echo "socats$pids" >&3
}
listening() {
  n=0
  while read -r _ address _ state _; do
    case $state:$address in 0A:0100007F:*) ;; *) continue ;; esac
    address=$((0x\${address#*:}))
    for port; do [ "$port" != "$address" ] || n=$((n + 1)); done
  done </proc/net/tcp
  [ "$n" -eq $# ]
}
start() {
  until listening $ports; do
    # A moment for the socats to bind: a busy loop would take the CPU they need on a loaded machine.
    sleep 0.001
    for pid in $pids; do
      state=Z
      read -r _ _ state _ 2>/dev/null </proc/$pid/stat
      [ "$state" != Z ] || { echo "harness-eval: the sandbox's socat could not listen on a port of $ports" >&2; exit 1; }
    done
  done
  echo starting >&3
  (trap - $signals; trap 'echo "unstarted $?" >&3' EXIT; cd "$1" && unset PWD OLDPWD && shift && exec "$@" </dev/null 3>&-)
  echo "exited $?" >&3
  read -r _ <&3
  exit
}
while IFS= read -r line <&3; do eval "$line"; done
`;

/** The bwrap argv for one sandbox: isolation, `cwd` read-only, the work folder writable, the socket folder read-only; the relay as its command, in the socket folder. */
export function bwrapArgv({ cwd, workDir }: SandboxOptions, socketDir: string): string[] {
  // `cwd` again, in case it is in a temporary folder the sandbox empties; its work folder after it, in case it is inside `cwd`.
  // --info-fd: bwrap says its init's pid there (the sandbox's processes are counted in that init's /proc).
  return [bwrapPath(), ...isolation(), '--ro-bind', cwd, cwd, '--bind', workDir, workDir, '--ro-bind', socketDir, socketDir, '--chdir', socketDir, '--info-fd', '4', '--', '/bin/sh', '-c', RELAY, 'harness-eval-relay', socatPath()!];
}

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

/**
 * Starts a sandbox: bwrap and its relay, which wait on the control channel for the agent's command
 * (`start`). Each run has its own: one sandbox never runs two agents.
 */
export function startSandbox(options: SandboxOptions): Sandbox {
  // Short: a Unix socket's path is limited to 108 bytes. Made at once, with no await: bwrap starts before the worker turns to anything else (the page's opening).
  const socketDir = mkdtempSync(join(tmpdir(), 'he-sbx-'));
  const sockets = new Set<Socket>();
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  };
  const servers: Server[] = [];
  const listen = async (name: string, onConnection: (socket: Socket) => void) => {
    const server = createServer((socket) => (track(socket), onConnection(socket)));
    servers.push(server);
    await new Promise<void>((resolve, reject) => server.once('error', reject).listen(join(socketDir, name), resolve));
  };
  let reported: (exit: AgentExit) => void;
  const agentExit = new Promise<AgentExit>((resolve) => (reported = resolve));
  let program = '';
  // The relay's socats (pids in the sandbox): the network's, not the agent's.
  let listeners = new Set<number>();
  const stages: Partial<Record<SandboxStage, number>> = {};
  const reach = (stage: SandboxStage) => void (stages[stage] ??= performance.now());
  const [bwrap, ...args] = bwrapArgv(options, socketDir);
  // bwrap's own environment is empty: its init stays in the sandbox as pid 1, and /proc/1/environ would show the worker's keys.
  const child = spawn(bwrap!, args, { detached: true, env: {}, stdio: stdioWithoutInherited(['ignore', 'pipe', 'pipe', 'pipe', 'pipe']) });
  reach('spawned');
  // The sandbox's init (pid 1 inside), as a pid outside: its root's /proc is the sandbox's own.
  let initPid: number | undefined;
  let info = '';
  (child.stdio[4] as Socket)
    .setEncoding('utf8')
    .on('data', (chunk: string) => void (info += chunk))
    .on('end', () => void (initPid = infoSchema.safeParse(safeJson(info)).data?.['child-pid']))
    .on('error', () => undefined);
  const control = child.stdio[3] as Socket;
  // A sandbox killed while a command is written to it must not throw in the worker.
  control.on('error', () => control.destroy());
  let text = '';
  control.setEncoding('utf8').on('data', (chunk: string) => {
    text += chunk;
    for (let end = text.indexOf('\n'); end !== -1; end = text.indexOf('\n')) {
      const [kind, ...numbers] = text.slice(0, end).split(' ');
      text = text.slice(end + 1);
      if (kind === 'up') reach('relayUp');
      if (kind === 'socats') listeners = new Set(numbers.map(Number));
      if (kind === 'starting') reach('starting');
      if (kind === 'unstarted') reported({ error: `spawn ${program} ${numbers[0] === '127' ? 'ENOENT' : 'EACCES'}` });
      if (kind === 'exited') {
        reach('agentExited');
        reported(shellStatus(Number(numbers[0])));
      }
    }
  });
  // Listened for at once: the sandbox may end before its agent is started.
  const sandboxExit = processExit(child);
  void sandboxExit.then(() => reach('sandboxExited'));
  // As pids outside, to signal them: the machine's whole /proc is read.
  const processes = () => (child.pid === undefined ? [] : descendants('/proc', child.pid, (pid) => listeners.has(namespacePid(pid))).filter((pid) => namespacePid(pid) > 2));
  // Counted where the run's end waits on it, in the sandbox's own /proc: a few entries where the machine's has hundreds, its pids the namespace's.
  // No mount the agent can make (nobody, no capability) changes what its init's root shows; without the init's pid, the machine's /proc.
  const processesLeft = () => {
    if (initPid === undefined) return processes().length;
    try {
      return descendants(`/proc/${initPid}/root/proc`, 1, (pid) => listeners.has(pid)).filter((pid) => pid > 2).length;
    } catch {
      // The sandbox ended meanwhile, and everything in it.
      return processes().length;
    }
  };
  // Node's own kill: it signals nothing once bwrap has ended, when its pid may be another process's.
  const kill = () => void child.kill('SIGKILL');
  return {
    child,
    stages,
    async forward(urls) {
      const ports = portsOf(urls);
      await Promise.all(
        ports.map((port) =>
          listen(`s${port}`, (inside) => {
            reach('connected');
            const upstream = connect({ port, host: '127.0.0.1', noDelay: true });
            track(upstream);
            inside.pipe(upstream).pipe(inside);
            inside.on('error', () => upstream.destroy());
            upstream.on('error', () => inside.destroy());
          }),
        ),
      );
      control.write(`listen ${ports.join(' ')}\n`);
      reach('forwarded');
    },
    start({ argv, env }) {
      program = argv[0]!;
      const exports = Object.entries({ ...env, HOME: options.workDir, TMPDIR: '/tmp' }).map(([name, value]) => `${name}=${relayWord(value)}`);
      control.write(`export ${exports.join(' ')}\nstart ${[options.cwd, ...argv].map(relayWord).join(' ')}\n`);
    },
    agentExit,
    sandboxExit,
    processesLeft,
    terminate: () => processes().forEach((pid) => signal(pid, 'SIGTERM')),
    kill,
    async close() {
      kill();
      control.destroy();
      for (const socket of sockets) socket.destroy();
      await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
      await rm(socketDir, { recursive: true, force: true });
    },
  };
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // ESRCH: it ended meanwhile.
  }
}

/** Every live process under `root` (by parent pid, from `<proc>/*\/stat`), zombies left out (they run no more), and none of `pruned`'s subtrees. */
function descendants(proc: string, root: number, pruned: (pid: number) => boolean): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync(proc)) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = readProc(`${proc}/${entry}/stat`);
    // The command name may hold spaces and parentheses: the fields after its last `)` are fixed.
    const [state, ppid] = stat?.slice(stat.lastIndexOf(')') + 2).split(' ') ?? [];
    if (state === undefined || state === 'Z') continue;
    const siblings = children.get(Number(ppid)) ?? [];
    children.set(Number(ppid), [...siblings, Number(entry)]);
  }
  const found: number[] = [];
  const walk = (pid: number) => (children.get(pid) ?? []).filter((child) => !pruned(child)).forEach((child) => (found.push(child), walk(child)));
  walk(root);
  return found;
}

/** A process's pid in its innermost PID namespace (the last of `NSpid`): 1 is the sandbox's init, 2 the relay. */
function namespacePid(pid: number): number {
  const line = readProc(`/proc/${pid}/status`)?.match(/^NSpid:\s+(.*)$/m)?.[1];
  return Number(line?.trim().split(/\s+/).at(-1) ?? 0);
}

/** What bwrap writes to its --info-fd (more than this). */
const infoSchema = z.object({ 'child-pid': z.number().int().positive() });

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function readProc(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined; // it ended while we looked
  }
}

/** Chromium's DevTools port inside its sandbox: the network namespace is its own, so a fixed port is free. */
export const SANDBOXED_DEVTOOLS_PORT = 9222;

/**
 * A shell script for Playwright's `executablePath` that runs Chromium in a sandbox of its own:
 * the same isolation as an agent's (its /proc shows its own processes only, so file:///proc/...
 * shows no key), `dir` (its profile) writable, and no network at all: the site reaches it through
 * Playwright's routing, over the pipe Playwright launched it with. Its DevTools port is reached
 * through the Unix socket `<dir>/devtools`, which socat pipes to it. Written into `dir`; answers the script's path.
 */
export async function sandboxedChromium(executable: string, dir: string): Promise<{ path: string; devtoolsSocket: string }> {
  const devtoolsSocket = join(dir, 'devtools');
  const bwrap = [bwrapPath(), ...isolation(), '--tmpfs', '/dev/shm', '--bind', dir, dir, '--setenv', 'HOME', dir, '--setenv', 'PATH', process.env.PATH ?? '/usr/bin:/bin'];
  // socat in the background (in `dir`: a relative path needs no quoting in its address), then Chromium in its place with Playwright's arguments (and its pipe, fds 3 and 4).
  const relay = `(cd "$1" && exec "$0" UNIX-LISTEN:devtools,fork TCP:127.0.0.1:${SANDBOXED_DEVTOOLS_PORT},nodelay </dev/null 3>&- 4>&-) & shift; exec "$@"`;
  const inner = ['/bin/sh', '-c', relay, socatPath()!, dir, executable];
  const path = join(dir, 'chromium');
  await writeFile(path, `#!/bin/sh\nexec ${[...bwrap, '--', ...inner].map(shellQuote).join(' ')} "$@"\n`, { mode: 0o755 });
  return { path, devtoolsSocket };
}

function shellQuote(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`;
}
