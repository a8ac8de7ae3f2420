import { execFile } from 'node:child_process';
import { accessSync, constants, readdirSync, statSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { delimiter, join } from 'node:path';

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
  return (process.env.PATH ?? '').split(delimiter).filter(Boolean).map((dir) => join(dir, name)).find(isExecutable);
}

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

/** What runs bwrap as `identity`: setpriv to its uid and gid, no supplementary group, no capability (nothing as the worker's own uid). */
export function asIdentity(identity: HostIdentity): string[] {
  if (!identity.own) return [];
  return [setprivPath()!, `--reuid=${identity.uid}`, `--regid=${identity.gid}`, '--clear-groups', '--inh-caps=-all', '--bounding-set=-all', '--'];
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

/** What a folder a worker makes for its runs is named (`he-sbx-<pid>-…`, then mkdtemp's letters): its pid names the worker, as a run uid does. */
export function workerFolder(kind: 'sbx' | 'cdp' | 'seccomp'): string {
  return `he-${kind}-${process.pid}-`;
}

const WORKER_FOLDER = /^he-(?:sbx|cdp|seccomp)-(\d+)-/;

/**
 * Removes from each of `dirs` the folders (`workerFolder`) of workers that are gone: a worker killed
 * with -9 removes none of its runs' folders (their work folders, Chromium profiles, the seccomp
 * filter), as it kills none of their processes. Never a live worker's (a pid reused since keeps a
 * dead one's); in the background, and never throwing: a folder it cannot remove stays.
 */
export async function reapOrphanFolders(dirs: readonly string[]): Promise<void> {
  await Promise.all(
    [...new Set(dirs)].flatMap((dir) => {
      let names: string[];
      try {
        names = readdirSync(dir);
      } catch {
        return []; // no such folder: nothing left in it
      }
      const gone = names.filter((name) => {
        const pid = Number(WORKER_FOLDER.exec(name)?.[1] ?? process.pid);
        return pid !== process.pid && !alive(pid);
      });
      return gone.map((name) => removeFolder(join(dir, name)));
    }),
  );
}

/**
 * Removes a folder an agent wrote in, never throwing. Node's rm names each file by its path, and an
 * agent can nest folders past PATH_MAX (ENAMETOOLONG): then GNU rm, which walks by descriptors.
 */
export async function removeFolder(path: string): Promise<void> {
  await rm(path, { recursive: true, force: true }).catch(() => new Promise((resolve) => execFile('rm', ['-rf', '--one-file-system', '--', path], () => resolve(undefined))));
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
