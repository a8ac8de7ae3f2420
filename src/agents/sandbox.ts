import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import type { Escapes } from '../core/run.ts';
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

/** How the agent's main process ended, as the relay saw it; `error` when it could not start. */
export type AgentExit = { code: number | null; signal: NodeJS.Signals | null; error?: undefined } | { error: string };
const relayMessageSchema = z.union([z.object({ code: z.number().nullable(), signal: z.string().nullable() }), z.object({ error: z.string() })]);

export interface SandboxOptions {
  /** The agent's command; the relay spawns it inside. */
  argv: string[];
  /** Where it runs: bound read-only, as the rest of the filesystem. */
  cwd: string;
  /** Its whole environment: nothing of the worker's reaches the sandbox otherwise. */
  env: Record<string, string>;
  /** The one folder it may write (its claim goes there); its HOME. */
  workDir: string;
  /** The run's endpoints: the only TCP ports it reaches, at the same port numbers on its own 127.0.0.1. */
  urls: string[];
}

export interface Sandbox {
  /** bwrap: its stdout and stderr are the agent's. */
  child: ChildProcess;
  /** Settles when the agent's main process ended (the relay says so), or never when the sandbox ends first. */
  agentExit: Promise<AgentExit>;
  /** Processes in the sandbox other than its init and the relay: the agent's, as pids outside. */
  processes(): number[];
  /** SIGTERM to every agent process: a moment to flush. */
  terminate(): void;
  /** Ends the sandbox: SIGKILL to bwrap; its init dies with it (--die-with-parent), and with the init the whole PID namespace. */
  kill(): void;
  /** Closes the relay's sockets outside and removes their folder. */
  dispose(): Promise<void>;
}

/**
 * The relay, run by the sandbox's node as its first process: it listens on 127.0.0.1 at each
 * port, pipes every connection to the Unix socket `s<port>` outside, then starts the agent and
 * tells the control socket how it ended (and waits to be killed: what the agent left is counted
 * from outside first). Plain CommonJS, so it needs nothing but node.
 */
const RELAY = `
const net = require('node:net'), { spawn } = require('node:child_process');
const { ports, dir, argv, cwd, env } = JSON.parse(process.argv[1]);
const control = net.connect(dir + '/control');
const tell = (message) => control.write(JSON.stringify(message) + '\\n');
Promise.all(ports.map((port) => new Promise((listening) => {
  // No Nagle on the agent's side: a small request held back for an ACK costs a delayed-ACK wait per round trip.
  net.createServer({ noDelay: true }, (client) => {
    const upstream = net.connect(dir + '/s' + port);
    client.pipe(upstream).pipe(client);
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
  }).listen(port, '127.0.0.1', listening);
}))).then(() => {
  const agent = spawn(argv[0], argv.slice(1), { cwd, env, stdio: ['ignore', 'inherit', 'inherit'] });
  agent.on('error', (error) => tell({ error: error.message }));
  agent.on('exit', (code, signal) => tell({ code, signal }));
});
`;

/** The bwrap argv for one sandbox: isolation, the work folder writable, the relay's socket folder read-only, the relay as its command. */
export function bwrapArgv({ argv, cwd, env, workDir, urls }: SandboxOptions, socketDir: string): string[] {
  const relay = { ports: portsOf(urls), dir: socketDir, argv, cwd, env: { ...env, HOME: workDir, TMPDIR: '/tmp' } };
  // `cwd` again, in case it is in a temporary folder the sandbox empties; its work folder after it, in case it is inside `cwd`.
  return [bwrapPath(), ...isolation(), '--ro-bind', cwd, cwd, '--bind', workDir, workDir, '--ro-bind', socketDir, socketDir, '--chdir', cwd, '--', process.execPath, '-e', RELAY, JSON.stringify(relay)];
}

/** The distinct TCP ports of the run's URLs (each on 127.0.0.1). */
function portsOf(urls: readonly string[]): number[] {
  return [...new Set(urls.map((url) => Number(new URL(url).port)))];
}

/** Starts the agent in a sandbox: the relay's sockets outside first, then bwrap. */
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
  for (const port of portsOf(options.urls)) {
    await listen(`s${port}`, (inside) => {
      const upstream = connect({ port, host: '127.0.0.1', noDelay: true });
      track(upstream);
      inside.pipe(upstream).pipe(inside);
      inside.on('error', () => upstream.destroy());
      upstream.on('error', () => inside.destroy());
    });
  }
  let reported: (exit: AgentExit) => void;
  const agentExit = new Promise<AgentExit>((resolve) => (reported = resolve));
  // The first line on the control socket is the relay's; the agent could connect too, but only to end its own run sooner.
  await listen('control', (socket) => {
    let text = '';
    socket.setEncoding('utf8').on('data', (chunk: string) => {
      text += chunk;
      const line = text.split('\n', 2);
      // The relay's line is short: a client that sends more is not the relay.
      if (line.length < 2) return void (text.length > 1_000 && socket.destroy());
      // Anything but the relay's message (the agent's garbage) is ignored: it must not throw in the worker.
      const exit = relayMessageSchema.safeParse(parseJsonObject(line[0]!));
      if (exit.success) reported(exit.data as AgentExit);
    });
  });
  const [bwrap, ...args] = bwrapArgv(options, socketDir);
  // bwrap's own environment is empty: its init stays in the sandbox as pid 1, and /proc/1/environ would show the worker's keys.
  const child = spawn(bwrap!, args, { detached: true, env: {}, stdio: ['ignore', 'pipe', 'pipe'] });
  const processes = () => (child.pid === undefined ? [] : descendants(child.pid).filter((pid) => namespacePid(pid) > 2));
  return {
    child,
    agentExit,
    processes,
    terminate: () => processes().forEach((pid) => signal(pid, 'SIGTERM')),
    kill: () => child.pid !== undefined && signal(child.pid, 'SIGKILL'),
    async dispose() {
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
