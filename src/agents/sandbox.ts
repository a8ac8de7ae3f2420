import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import type { Escapes } from '../core/agent.ts';
import { parseJsonObject } from '../text.ts';

export type { Escapes };

/**
 * The sandbox a command agent runs in: bubblewrap (bwrap), on Linux. The agent gets its own user,
 * PID, mount, IPC, UTS, cgroup and network namespaces, so it sees no process outside its run and
 * can signal none; the filesystem is read-only but for its work folder and a private /tmp; its
 * network is a loopback of its own where a relay (the sandbox's first process) answers on the
 * ports of the run's URLs only, each piped through a Unix socket to the real port outside.
 */

/** `auto`: sandboxed where bwrap works, else run uncontained and say so; `required`: refuse to run uncontained; `none`: never sandboxed. */
export const sandboxModeSchema = z.enum(['auto', 'required', 'none']);
export type SandboxMode = z.infer<typeof sandboxModeSchema>;

/** The bwrap to run: HARNESS_BWRAP (tests point it at a missing path), else bwrap on PATH. */
const bwrapPath = () => process.env.HARNESS_BWRAP || 'bwrap';

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

/** Why no sandbox can run here (not Linux, no bwrap, bwrap fails its probe), or undefined: probed once per bwrap path. */
export function sandboxUnavailable(): string | undefined {
  if (process.platform !== 'linux') return `bubblewrap runs on Linux only (this is ${process.platform})`;
  const bwrap = bwrapPath();
  if (!probes.has(bwrap)) {
    const probe = spawnSync(bwrap, [...isolation(), '--', 'true'], { encoding: 'utf8', timeout: 10_000 });
    const why = probe.error ? `${bwrap}: ${(probe.error as NodeJS.ErrnoException).code ?? probe.error.message}` : probe.status !== 0 ? `${bwrap} failed its probe: ${probe.stderr.trim().split('\n')[0]}` : undefined;
    probes.set(bwrap, why && `no usable bubblewrap (${why})`);
  }
  return probes.get(bwrap);
}

/** How a process ended (the agent's, as the relay saw it; bwrap's); `error`, spawn's message (`spawn x ENOENT`), when it could not start. */
export type AgentExit = { code: number | null; signal: NodeJS.Signals | null; error?: undefined } | { error: string };
const relayMessageSchema = z.union([z.object({ code: z.number().nullable(), signal: z.string().nullable() }), z.object({ error: z.string() })]);

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
  /** The run's endpoints: the only TCP ports it reaches, at the same port numbers on its own 127.0.0.1. */
  urls: string[];
}

export interface Sandbox {
  /** bwrap: its stdout and stderr are the agent's. */
  child: ChildProcess;
  /** Pipes the command's ports, then hands the command to the relay, which starts it: once. */
  start(command: AgentCommand): Promise<void>;
  /** Settles when the agent's main process ended (the relay says so), or never when the sandbox ends first. */
  agentExit: Promise<AgentExit>;
  /** Settles when bwrap ended, or could not start: the sandbox, and everything in it, is gone. */
  sandboxExit: Promise<AgentExit>;
  /** Processes in the sandbox other than its init and the relay: the agent's, as pids outside. */
  processes(): number[];
  /** SIGTERM to every agent process: a moment to flush. */
  terminate(): void;
  /** Ends the sandbox: SIGKILL to bwrap; its init dies with it (--die-with-parent), and with the init the whole PID namespace. */
  kill(): void;
  /** Ends the sandbox if it still runs, closes the relay's sockets outside and removes their folder. */
  close(): Promise<void>;
}

/**
 * The relay, run by the sandbox's node as its first process. It starts before the run's endpoints
 * are up (node takes a while to start), connects to the control socket in `dir` outside and waits
 * for the agent's command there (one JSON line). Then it listens on 127.0.0.1 at each port, pipes
 * every connection to the Unix socket `s<port>` outside, starts the agent and tells the control
 * socket how it ended (and waits to be killed: what the agent left is counted from outside first).
 * Plain CommonJS, so it needs nothing but node.
 */
const RELAY = `
const net = require('node:net'), { spawn } = require('node:child_process');
const dir = process.argv[1];
const control = net.connect(dir + '/control');
const tell = (message) => control.write(JSON.stringify(message) + '\\n');
let text = '';
control.setEncoding('utf8').on('data', function read(chunk) {
  text += chunk;
  if (!text.includes('\\n')) return;
  control.off('data', read);
  start(JSON.parse(text.slice(0, text.indexOf('\\n'))));
});
const start = ({ ports, argv, env }) => Promise.all(ports.map((port) => new Promise((listening) => {
  // No Nagle on the agent's side: a small request held back for an ACK costs a delayed-ACK wait per round trip.
  net.createServer({ noDelay: true }, (client) => {
    const upstream = net.connect(dir + '/s' + port);
    client.pipe(upstream).pipe(client);
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
  }).listen(port, '127.0.0.1', listening);
}))).then(() => {
  const agent = spawn(argv[0], argv.slice(1), { env, stdio: ['ignore', 'inherit', 'inherit'] });
  agent.on('error', (error) => tell({ error: error.message }));
  agent.on('exit', (code, signal) => tell({ code, signal }));
});
`;

/** The bwrap argv for one sandbox: isolation, the work folder writable, the relay's socket folder read-only, the relay as its command (in `cwd`, where the agent runs). */
export function bwrapArgv({ cwd, workDir }: SandboxOptions, socketDir: string): string[] {
  // `cwd` again, in case it is in a temporary folder the sandbox empties; its work folder after it, in case it is inside `cwd`.
  return [bwrapPath(), ...isolation(), '--ro-bind', cwd, cwd, '--bind', workDir, workDir, '--ro-bind', socketDir, socketDir, '--chdir', cwd, '--', process.execPath, '-e', RELAY, socketDir];
}

/** The distinct TCP ports of the run's URLs (each on 127.0.0.1). */
function portsOf(urls: readonly string[]): number[] {
  return [...new Set(urls.map((url) => Number(new URL(url).port)))];
}

/**
 * Starts a sandbox: its control socket outside, then bwrap and the relay, which wait for the
 * agent's command (`start`). Each run has its own: one sandbox never runs two agents.
 */
export async function startSandbox(options: SandboxOptions): Promise<Sandbox> {
  // Short: a Unix socket's path is limited to 108 bytes.
  const socketDir = await mkdtemp(join(tmpdir(), 'he-sbx-'));
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
  let connected: (relay: Socket) => void;
  const relay = new Promise<Socket>((resolve) => (connected = resolve));
  let reported: (exit: AgentExit) => void;
  const agentExit = new Promise<AgentExit>((resolve) => (reported = resolve));
  let relayConnected = false;
  await listen('control', (socket) => {
    // The first connection is the relay's: the agent starts only once the relay has its command, so it connects later, if at all.
    if (relayConnected) return void socket.destroy();
    relayConnected = true;
    connected(socket);
    // A sandbox killed while the command is written to it must not throw in the worker.
    socket.on('error', () => socket.destroy());
    let text = '';
    socket.setEncoding('utf8').on('data', (chunk: string) => {
      text += chunk;
      const line = text.split('\n', 2);
      // The relay's line is short: more is not the relay.
      if (line.length < 2) return void (text.length > 1_000 && socket.destroy());
      // Anything but the relay's message is ignored: it must not throw in the worker.
      const exit = relayMessageSchema.safeParse(parseJsonObject(line[0]!));
      if (exit.success) reported(exit.data as AgentExit);
    });
  });
  const [bwrap, ...args] = bwrapArgv(options, socketDir);
  // bwrap's own environment is empty: its init stays in the sandbox as pid 1, and /proc/1/environ would show the worker's keys.
  const child = spawn(bwrap!, args, { detached: true, env: {}, stdio: ['ignore', 'pipe', 'pipe'] });
  // Listened for at once: the sandbox may end before its agent is started.
  const sandboxExit = processExit(child);
  const processes = () => (child.pid === undefined ? [] : descendants(child.pid).filter((pid) => namespacePid(pid) > 2));
  // Node's own kill: it signals nothing once bwrap has ended, when its pid may be another process's.
  const kill = () => void child.kill('SIGKILL');
  return {
    child,
    async start({ argv, env, urls }) {
      const ports = portsOf(urls);
      await Promise.all(
        ports.map((port) =>
          listen(`s${port}`, (inside) => {
            const upstream = connect({ port, host: '127.0.0.1', noDelay: true });
            track(upstream);
            inside.pipe(upstream).pipe(inside);
            inside.on('error', () => upstream.destroy());
            upstream.on('error', () => inside.destroy());
          }),
        ),
      );
      const command = JSON.stringify({ ports, argv, env: { ...env, HOME: options.workDir, TMPDIR: '/tmp' } });
      // Not awaited: a sandbox that ends before its relay connects says so through sandboxExit.
      void relay.then((socket) => socket.write(`${command}\n`));
    },
    agentExit,
    sandboxExit,
    processes,
    terminate: () => processes().forEach((pid) => signal(pid, 'SIGTERM')),
    kill,
    async close() {
      kill();
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

/** Every live process under `root` (by parent pid, from /proc/*\/stat), zombies left out: they run no more. */
function descendants(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = readProc(`/proc/${entry}/stat`);
    // The command name may hold spaces and parentheses: the fields after its last `)` are fixed.
    const [state, ppid] = stat?.slice(stat.lastIndexOf(')') + 2).split(' ') ?? [];
    if (state === undefined || state === 'Z') continue;
    const siblings = children.get(Number(ppid)) ?? [];
    children.set(Number(ppid), [...siblings, Number(entry)]);
  }
  const found: number[] = [];
  const walk = (pid: number) => (children.get(pid) ?? []).forEach((child) => (found.push(child), walk(child)));
  walk(root);
  return found;
}

/** A process's pid in its innermost PID namespace (the last of `NSpid`): 1 is the sandbox's init, 2 the relay. */
function namespacePid(pid: number): number {
  const line = readProc(`/proc/${pid}/status`)?.match(/^NSpid:\s+(.*)$/m)?.[1];
  return Number(line?.trim().split(/\s+/).at(-1) ?? 0);
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

/** Inside Chromium's sandbox: the Unix socket `argv[1]` piped to 127.0.0.1:`argv[2]`, its DevTools port. */
const DEVTOOLS_RELAY = `
const net = require('node:net');
const [path, port] = process.argv.slice(1);
net.createServer((client) => {
  const upstream = net.connect({ port: Number(port), host: '127.0.0.1', noDelay: true });
  client.pipe(upstream).pipe(client);
  client.on('error', () => upstream.destroy());
  upstream.on('error', () => client.destroy());
}).listen(path);
`;

/**
 * A shell script for Playwright's `executablePath` that runs Chromium in a sandbox of its own:
 * the same isolation as an agent's (its /proc shows its own processes only, so file:///proc/...
 * shows no key), `dir` (its profile) writable, and no network at all: the site reaches it through
 * Playwright's routing, over the pipe Playwright launched it with. Its DevTools port is reached
 * through the Unix socket `<dir>/devtools`. Written into `dir`; answers the script's path.
 */
export async function sandboxedChromium(executable: string, dir: string): Promise<{ path: string; devtoolsSocket: string }> {
  const devtoolsSocket = join(dir, 'devtools');
  const bwrap = [bwrapPath(), ...isolation(), '--tmpfs', '/dev/shm', '--bind', dir, dir, '--setenv', 'HOME', dir, '--setenv', 'PATH', process.env.PATH ?? '/usr/bin:/bin'];
  // The relay in the background, then Chromium in its place with Playwright's arguments (and its pipe, fds 3 and 4).
  const inner = ['/bin/sh', '-c', '"$0" -e "$1" "$2" "$3" & shift 3; exec "$@"', process.execPath, DEVTOOLS_RELAY, devtoolsSocket, String(SANDBOXED_DEVTOOLS_PORT), executable];
  const path = join(dir, 'chromium');
  await writeFile(path, `#!/bin/sh\nexec ${[...bwrap, '--', ...inner].map(shellQuote).join(' ')} "$@"\n`, { mode: 0o755 });
  return { path, devtoolsSocket };
}

function shellQuote(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`;
}
