import { lstatSync, readdirSync, readFileSync, statfsSync, statSync } from 'node:fs';
import { z } from 'zod';
import type { HostIdentity } from './sandbox-identity.ts';
import { prlimitPath } from './sandbox-identity.ts';

/**
 * What one sandbox may use, each with a default a laptop survives. The kernel enforces the rlimits
 * (prlimit) and the tmpfs sizes (bwrap --size); the work folder, which is bound from the host, is
 * measured from outside while the agent runs, and the run is ended when it is past its size.
 */
export const sandboxLimitsSchema = z
  .object({
    /** Processes and threads at once. Per run where it has a uid of its own (the tests run as root); else not set, since the kernel would count every process of the worker's user. */
    processes: z.int().positive(),
    /** Memory of all its processes together (resident), its Chromium's too, in bytes: held by cgroup v2 where the machine delegates it (sandbox-cgroup.ts), else measured while it runs; past it the run is killed. */
    totalMemoryBytes: z.int().positive(),
    /** Memory each process may allocate (its data: heap and private mappings, RLIMIT_DATA), in bytes: an allocation past it fails. Not its address space, which WebAssembly and V8 reserve by the gigabyte without using. */
    memoryBytes: z.int().positive(),
    /** Open descriptors of each process. */
    openFiles: z.int().positive(),
    /** The largest file it may write, in bytes: a write past it fails (SIGXFSZ). */
    fileBytes: z.int().positive(),
    /** Its private /tmp (and the temporary folder), in bytes. */
    tmpBytes: z.int().positive(),
    /** Its /dev/shm, in bytes. */
    shmBytes: z.int().positive(),
    /** Its work folder (HOME, where it writes its claim), in bytes, and at most 10,000 entries. */
    workDirBytes: z.int().positive(),
    /** Connections open at once to each endpoint it was handed (the site, its Chromium, the gateway, which has its own `maxConnections` too). */
    connections: z.int().positive(),
  })
  .partial()
  .strict();
export type SandboxLimits = Required<z.infer<typeof sandboxLimitsSchema>>;

const MB = 1024 * 1024;
export const DEFAULT_SANDBOX_LIMITS: SandboxLimits = {
  processes: 256,
  totalMemoryBytes: 4096 * MB,
  memoryBytes: 2048 * MB,
  openFiles: 1024,
  fileBytes: 256 * MB,
  tmpBytes: 256 * MB,
  shmBytes: 64 * MB,
  workDirBytes: 256 * MB,
  connections: 64,
};

/** The most entries the work folder may hold: each is measured every poll. */
export const WORK_DIR_ENTRIES = 10_000;

/** prlimit's arguments for `limits`: every limit soft and hard, so the agent cannot raise one back; no core dumps. */
export function rlimits(limits: SandboxLimits, identity: HostIdentity): string[] {
  const both = (value: number) => `${value}:${value}`;
  return [
    prlimitPath()!,
    ...(identity.own ? [`--nproc=${both(limits.processes)}`] : []),
    ...(Number.isFinite(limits.memoryBytes) ? [`--data=${both(limits.memoryBytes)}`] : []),
    `--nofile=${both(limits.openFiles)}`,
    `--fsize=${both(limits.fileBytes)}`,
    '--core=0:0',
    '--',
  ];
}

/** The longest path the kernel takes in one call, its NUL included (Linux's PATH_MAX): an agent can nest folders past it, working from inside them. */
export const PATH_MAX = 4096;

/**
 * The bytes and entries under `dir` (not following links), counting at most `maxEntries`, and its
 * largest file's size; `unmeasured` when a part of it cannot be measured: a name past PATH_MAX, or
 * (not as root) a folder its owner closed. Names are taken as bytes: one that is not UTF-8 is measured too.
 */
export function folderUsage(dir: string, maxEntries = WORK_DIR_ENTRIES): { bytes: number; entries: number; largest: number; unmeasured: boolean } {
  let bytes = 0;
  let entries = 0;
  let largest = 0;
  let unmeasured = false;
  /** Gone meanwhile, or not a folder any more: nothing to measure. Anything else hides what is below. */
  const hidden = (error: unknown) => void (unmeasured ||= !['ENOENT', 'ENOTDIR'].includes((error as NodeJS.ErrnoException).code ?? ''));
  const walk = (path: Buffer) => {
    let names: Buffer[];
    try {
      names = readdirSync(path, { encoding: 'buffer' });
    } catch (error) {
      return hidden(error);
    }
    for (const name of names) {
      if (++entries > maxEntries) return;
      const child = Buffer.concat([path, SLASH, name]);
      if (child.length >= PATH_MAX) {
        unmeasured = true;
        continue;
      }
      let stat;
      try {
        stat = lstatSync(child);
      } catch (error) {
        hidden(error);
        continue;
      }
      // Blocks, not the size: a sparse file claims what it does not hold.
      bytes += stat.blocks * 512;
      if (stat.isFile()) largest = Math.max(largest, stat.size);
      if (stat.isDirectory()) walk(child);
    }
  };
  walk(Buffer.from(dir));
  return { bytes, entries, largest, unmeasured };
}

const SLASH = Buffer.from('/');

/**
 * Processes and threads under `proc` (a sandbox's own /proc, or the machine's), and their resident
 * memory, of `uid` only when given: on the machine's, what RLIMIT_NPROC counts (the sandbox's,
 * bwrap's outside it, its Chromium's). Throws when `proc` itself is gone (the sandbox ended).
 */
export function usageIn(proc: string, uid?: number): { tasks: number; residentBytes: number } {
  let tasks = 0;
  let residentBytes = 0;
  for (const entry of readdirSync(proc)) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (uid !== undefined && statSync(`${proc}/${entry}`).uid !== uid) continue;
      const status = readFileSync(`${proc}/${entry}/status`, 'utf8');
      tasks += Number(status.match(/^Threads:\s+(\d+)/m)?.[1] ?? 0);
      // In kB; none for a zombie.
      residentBytes += Number(status.match(/^VmRSS:\s+(\d+) kB/m)?.[1] ?? 0) * 1024;
    } catch {
      // ended while we looked
    }
  }
  return { tasks, residentBytes };
}

/** Whether the tmpfs at `path` is full (less than `slackBytes` free: a page), or undefined when it cannot be read (the sandbox ended). */
export function tmpfsFull(path: string, slackBytes = 4096): boolean | undefined {
  try {
    const stat = statfsSync(path);
    return stat.bavail * stat.bsize < slackBytes;
  } catch {
    return undefined;
  }
}
