import { execFile } from 'node:child_process';
import { readdirSync, rmSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * The folders a process makes in the temporary folder for its runs, named by its pid, so that
 * what a process killed with -9 left (it removes nothing) is removed by the next one to start:
 * a worker's sandboxes (`sbx`), Chromiums (`cdp`, `browser`) and seccomp filter, a run's own
 * folder (`run`, evaluate's when it is given none), a runner's cost ledger and slot coordinator.
 */
const KINDS = ['sbx', 'cdp', 'seccomp', 'browser', 'run', 'ledger', 'slots'] as const;
export type FolderKind = (typeof KINDS)[number];

/** What such a folder is named (`he-sbx-<pid>-`, then mkdtemp's letters): its pid names the process that made it, as a run uid does. */
export function ownFolder(kind: FolderKind): string {
  return `he-${kind}-${process.pid}-`;
}

/** The folders this process reaped already. */
const reaped = new Set<string>();

const OWN_FOLDER = new RegExp(`^he-(?:${KINDS.join('|')})-(\\d+)-`);

/**
 * Removes from each of `dirs` the folders (`ownFolder`) of processes that are gone: a process
 * killed with -9 removes none of its runs' folders (their work folders, Chromium profiles, the
 * seccomp filter), as it kills none of their processes. Never a live process's (a pid reused since
 * keeps a dead one's); never throwing: a folder it cannot remove stays. Each folder once a process:
 * what dies after this one started is the next process's to remove.
 */
export async function reapFolders(dirs: readonly string[]): Promise<void> {
  await Promise.all(
    [...new Set(dirs)].flatMap((dir) => {
      if (reaped.has(dir)) return [];
      reaped.add(dir);
      let names: string[];
      try {
        names = readdirSync(dir);
      } catch {
        return []; // no such folder: nothing left in it
      }
      const gone = names.filter((name) => {
        const pid = Number(OWN_FOLDER.exec(name)?.[1] ?? process.pid);
        return pid !== process.pid && !alive(pid);
      });
      return gone.map((name) => removeFolder(join(dir, name)));
    }),
  );
}

/**
 * Removes a folder an agent wrote in, never throwing. Node's rm names each file by its path, and an
 * agent can nest folders past PATH_MAX (ENAMETOOLONG): then GNU rm, which walks by descriptors.
 * One known to hold few `entries` (SMALL_FOLDER_ENTRIES at most) is removed at once: through the
 * thread pool, entry by entry, removing a sandbox's was 4 ms of a short run's end (bench:sandbox).
 */
export async function removeFolder(path: string, entries = Infinity): Promise<void> {
  if (entries <= SMALL_FOLDER_ENTRIES) {
    try {
      rmSync(path, { recursive: true, force: true });
      return;
    } catch {
      // a name past PATH_MAX made since: as any other folder
    }
  }
  await rm(path, { recursive: true, force: true }).catch(() => new Promise((resolve) => execFile('rm', ['-rf', '--one-file-system', '--', path], () => resolve(undefined))));
}

/** A folder with at most this many entries is removed at once, not through the thread pool. */
const SMALL_FOLDER_ENTRIES = 64;

/** Whether process `pid` is there (EPERM: another user's, there all the same). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
