import { accessSync, constants, readdirSync, statSync } from 'node:fs';
import { delimiter, join, relative } from 'node:path';
import { inside } from './sandbox-mounts.ts';
import { alive } from '../leftovers.ts';

/**
 * The host identity a sandbox holds. As root (as CI runs), each run gets a uid and gid of its own,
 * set by util-linux's setpriv before bwrap starts: the agent can then write no kernel setting, read
 * no file root keeps private, and its per-user limits (processes) are its run's alone. Not as root,
 * it is the worker's own uid: what that user can read, the agent can.
 */
export interface HostIdentity {
  uid: number;
  gid: number;
  /** A uid of this run's own (the worker is root), or the worker's. */
  own: boolean;
  /** The run's cgroup (sandbox-cgroup.ts), where the machine delegates one: every process of the run starts in it. */
  cgroup?: string;
  /** Whether a process of the run's runs outside its agent's sandbox (its Chromium: sandboxedChromium); until then, that sandbox's /proc holds all the run runs but bwrap. */
  outside?: boolean;
}

/**
 * Run uids: BASE + worker pid × RUNS + slot. Live workers have distinct pids, and a worker's slots
 * in use are distinct (trials run sandboxes at once), so runs at once never share a uid; a uid
 * names the worker it belongs to: what a dead worker left can be found and killed (reapOrphans).
 */
const BASE = 1_000_000_000;
const RUNS = 64;
/** Linux's largest pid_max (2^22): the range's end. */
const MAX_PID = 4_194_304;
/** This worker's slots held by a sandbox not yet closed. */
const held = new Set<number>();
/** Where the next search for a free slot starts: slots go round, so a slot just given back (its processes still dying) is the last taken again. */
let next = 0;

/** A host identity for a new sandbox, held until `releaseIdentity`: as root, a uid no other open sandbox of this worker holds. */
export function runIdentity(): HostIdentity {
  const uid = process.getuid?.() ?? 0;
  if (uid !== 0) return { uid, gid: process.getgid?.() ?? uid, own: false };
  const slot = Array.from({ length: RUNS }, (_, i) => (next + i) % RUNS).find((candidate) => !held.has(candidate));
  if (slot === undefined) throw new Error(`a worker runs at most ${RUNS} sandboxes at once, each as a uid of its own: keep fewer trials in flight in one test`);
  held.add(slot);
  next = (slot + 1) % RUNS;
  const own = BASE + process.pid * RUNS + slot;
  return { uid: own, gid: own, own: true };
}

/** Gives a closed sandbox's uid back to its worker. */
export function releaseIdentity(identity: HostIdentity): void {
  if (identity.own) held.delete((identity.uid - BASE) % RUNS);
}

/** The program a part of the sandbox is run with: its HARNESS_* override, else the first on PATH. */
export function toolPath(name: string, override: string | undefined): string | undefined {
  if (override) return override;
  // Looked up at every sandbox's start: a program found stays found while PATH is the same (one not found is looked for again).
  const key = `${name}\0${process.env.PATH ?? ''}`;
  const known = foundTools.get(key);
  if (known) return known;
  const found = (process.env.PATH ?? '').split(delimiter).filter(Boolean).map((dir) => join(dir, name)).find(isExecutable);
  if (found) foundTools.set(key, found);
  return found;
}

const foundTools = new Map<string, string>();

export function isExecutable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return statSync(file).isFile();
  } catch {
    return false;
  }
}

export const setprivPath = () => toolPath('setpriv', process.env.HARNESS_SETPRIV);
export const prlimitPath = () => toolPath('prlimit', process.env.HARNESS_PRLIMIT);

/** Why no run can hold an identity of its own here, when the worker is root; undefined when it can (or the worker is not root: it holds the worker's). */
export function identityUnavailable(): string | undefined {
  if ((process.getuid?.() ?? 0) !== 0) return undefined;
  if (setprivPath() === undefined) return 'no setpriv on PATH (the sandbox drops root with it: Debian package util-linux)';
  if (prlimitPath() === undefined) return 'no prlimit on PATH (the sandbox sets its limits with it: Debian package util-linux)';
  return undefined;
}

/**
 * What root does before bwrap starts, a POSIX sh reading its arguments (`<mount> <cgroup.procs or ''>
 * <n> <n pairs: a closed folder, its path from the outermost one it is in or ''> <command>…`): it
 * moves itself into the run's cgroup, opens each closed folder (outermost first) to the run's uid,
 * then runs the command in its place. A folder is opened in the sandbox's own mount namespace
 * (`unshare --mount`, private: the host's mount table is untouched) by a read-only overlay of itself
 * under an empty layer of mode 0755: the run's uid passes through it, each entry in it keeps its own
 * mode, no folder's mode changes on disk. The layer is a small tmpfs laid on the folder; the folder
 * itself is read through a descriptor opened on the outermost one before anything was laid there,
 * so an overlay inside another never stacks on it (overlayfs stacks two deep at most): nothing is
 * made on the host, and the descriptor is closed before the command runs.
 */
const ROOT_STEP = `
mount=$1 procs=$2 n=$3
shift 3
[ -z "$procs" ] || echo 0 >"$procs" || exit 1
while [ "$n" -gt 0 ]; do
  [ -n "$2" ] || exec 9<"$1"
  "$mount" -t tmpfs -o mode=0755,size=4k harness-eval "$1" && "$mount" -t overlay -o "lowerdir=$1:/proc/self/fd/9\${2:+/$2}" harness-eval "$1" || exit 1
  shift 2
  n=$((n - 1))
done
exec 9<&-
exec "$@"`;

export const unsharePath = () => toolPath('unshare', undefined);
export const mountPath = () => toolPath('mount', undefined);

/**
 * What runs bwrap as `identity`: as root, first the root step (its cgroup; the `closed` folders on
 * the way to what it is shown, opened), then setpriv to its uid and gid, no supplementary group, no
 * capability (nothing as the worker's own uid).
 */
export function asIdentity(identity: HostIdentity, closed: readonly string[] = []): string[] {
  const drop = identity.own ? [setprivPath()!, `--reuid=${identity.uid}`, `--regid=${identity.gid}`, '--clear-groups', '--inh-caps=-all', '--bounding-set=-all', '--'] : [];
  if (identity.cgroup === undefined && closed.length === 0) return drop;
  // Each outermost folder, then those inside it, outermost first, each with its path from the outermost.
  const outermost = closed.filter((folder) => !closed.some((other) => other !== folder && inside(folder, other)));
  const pairs = outermost.flatMap((top) => [top, ...closed.filter((folder) => folder !== top && inside(folder, top)).sort((a, b) => a.length - b.length)].flatMap((folder) => [folder, relative(top, folder)]));
  const namespace = closed.length > 0 ? [unsharePath()!, '--mount', '--propagation', 'private'] : [];
  return [...namespace, '/bin/sh', '-c', ROOT_STEP, 'harness-eval-root', mountPath() ?? 'mount', identity.cgroup ? join(identity.cgroup, 'cgroup.procs') : '', String(closed.length), ...pairs, ...drop];
}

/**
 * Kills every process of a run uid whose worker is gone (a worker killed with -9 cannot tear its
 * sandboxes down; bwrap's --die-with-parent and the seccomp filter make this a second line):
 * answers how many it killed. Only as root, where runs have uids of their own.
 */
export function reapOrphans(): number {
  if ((process.getuid?.() ?? 0) !== 0) return 0;
  let killed = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const uid = statSync(`/proc/${entry}`, { throwIfNoEntry: false })?.uid;
    if (uid === undefined || uid < BASE || uid >= BASE + MAX_PID * RUNS) continue;
    if (alive(Math.floor((uid - BASE) / RUNS))) continue;
    try {
      process.kill(Number(entry), 'SIGKILL');
      killed++;
    } catch {
      // gone meanwhile
    }
  }
  return killed;
}

