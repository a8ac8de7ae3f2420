import { spawnSync } from 'node:child_process';
import { accessSync, constants, mkdirSync, readdirSync, readFileSync, readlinkSync, rmdirSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { alive } from '../leftovers.ts';

/**
 * A run's cgroup (v2), where the machine delegates one: the kernel holds the run's memory in total
 * (`memory.max`, no swap; past it the whole group is killed, `memory.oom.group`) and its processes
 * (`pids.max`). Every process of the run starts in it: root's step before bwrap moves itself in
 * (asIdentity), for the agent's sandbox and its Chromium's alike. It is made under the nearest
 * cgroup, from the worker's own up, that gives its children the memory and pids controllers and
 * that this process may write (a systemd machine as root: GitHub's hosted runners). Elsewhere
 * (cgroup v1, as here; a container that cannot write its cgroups) the sandbox's watcher measures
 * the run's memory instead (sandbox.ts).
 */

/** Where runs' cgroups are made, or why none can be: looked for once. */
let found: { parent: string } | { why: string } | undefined;

export function cgroupParent(): { parent: string } | { why: string } {
  return (found ??= findParent());
}

function findParent(): { parent: string } | { why: string } {
  if (process.platform !== 'linux') return { why: `cgroups are Linux's (this is ${process.platform})` };
  // mountinfo: id parent dev root mountpoint options [optional…] - type source options
  const mount = read('/proc/self/mountinfo')
    ?.split('\n')
    .map((line) => line.split(' '))
    .find((fields) => fields[fields.indexOf('-') + 1] === 'cgroup2');
  if (!mount) return { why: 'no cgroup v2 is mounted' };
  const [root, point] = [mount[3]!, mount[4]!];
  const own = read('/proc/self/cgroup')?.match(/^0::(\/.*)$/m)?.[1];
  const path = own === undefined ? undefined : relative(root, own);
  if (path === undefined || path.startsWith('..')) return { why: `this process is in no cgroup under ${point}` };
  const controllers = read(join(point, 'cgroup.controllers'))?.split(/\s+/) ?? [];
  if (!controllers.includes('memory') || !controllers.includes('pids')) return { why: `the cgroup v2 at ${point} has no memory and pids controllers: cgroup v1 holds them` };
  for (let dir = join(point, path); ; dir = dirname(dir)) {
    if (['memory', 'pids'].every((controller) => read(join(dir, 'cgroup.subtree_control'))?.split(/\s+/).includes(controller))) return tried(dir);
    if (dir === point || dir === dirname(dir)) break;
  }
  return { why: `no cgroup from this process's (${own}) up gives its children the memory and pids controllers: none is delegated` };
}

/** `dir`, once a cgroup made in it took limits and a process: else why not. */
function tried(dir: string): { parent: string } | { why: string } {
  const probe = join(dir, `${PREFIX}${namespace()}-${process.pid}-probe`);
  try {
    accessSync(dir, constants.W_OK);
    mkdirSync(probe, { recursive: true });
    writeFileSync(join(probe, 'pids.max'), '8');
    writeFileSync(join(probe, 'memory.max'), String(64 * 1024 * 1024));
    const run = spawnSync('/bin/sh', ['-c', 'echo 0 >"$0"', join(probe, 'cgroup.procs')], { encoding: 'utf8', env: {}, timeout: 10_000 });
    if (run.status !== 0) return { why: `no process can be moved into a cgroup in ${dir}: ${run.error?.message ?? run.stderr.trim()}` };
    return { parent: dir };
  } catch (error) {
    return { why: `no cgroup can be made in ${dir} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})` };
  } finally {
    try {
      rmdirSync(probe);
    } catch {
      // never made, or gone
    }
  }
}

const PREFIX = 'harness-eval-';
let made = 0;

/** This process's PID namespace, as its inode: a cgroup's name says whose worker made it, and a pid means something only in its own namespace. */
function namespace(): string {
  return readlinkSync('/proc/self/ns/pid').match(/\d+/)?.[0] ?? '0';
}

/**
 * A cgroup for one run, with its limits set, or undefined where the machine delegates none (or it
 * could not be made: the run is then measured, as where none is delegated). Named
 * `harness-eval-<pid namespace>-<worker pid>-<n>`: what a dead worker left can be found (reapCgroups).
 */
export function makeCgroup(limits: { totalMemoryBytes: number; processes: number }): string | undefined {
  const where = cgroupParent();
  if (!('parent' in where)) return undefined;
  const path = join(where.parent, `${PREFIX}${namespace()}-${process.pid}-${made++}`);
  try {
    mkdirSync(path);
    writeFileSync(join(path, 'memory.max'), String(limits.totalMemoryBytes));
    writeFileSync(join(path, 'memory.oom.group'), '1');
    writeFileSync(join(path, 'pids.max'), String(limits.processes));
    // No swap: memory pushed out past its limit would be memory it holds all the same.
    writeOptional(join(path, 'memory.swap.max'), '0');
    return path;
  } catch {
    removeCgroup(path);
    return undefined;
  }
}

/** Which of its limits the run's cgroup met: its memory (the kernel killed the group) and its processes (a fork refused). */
export function cgroupLimitsHit(path: string): { memory: boolean; processes: boolean } {
  const counts = (file: string) => Object.fromEntries((read(join(path, file)) ?? '').trim().split('\n').map((line) => line.split(' ')));
  const memory = counts('memory.events');
  return { memory: Number(memory.oom ?? 0) > 0 || Number(memory.oom_kill ?? 0) > 0, processes: Number(counts('pids.events').max ?? 0) > 0 };
}

/** Kills what is left in a run's cgroup and removes it, in the background: once its processes are gone, a moment later. */
export function removeCgroup(path: string): void {
  writeOptional(join(path, 'cgroup.kill'), '1');
  let tries = 0;
  const remove = () => {
    try {
      rmdirSync(path);
    } catch (error) {
      // EBUSY: its processes are still dying. Given up after 5 s: the uid's next worker finds it.
      if ((error as NodeJS.ErrnoException).code === 'EBUSY' && ++tries < 250) setTimeout(remove, 20).unref();
    }
  };
  remove();
}

/** Removes the cgroups of runs whose worker is gone (killed with -9, it could not): answers how many. */
export function reapCgroups(): number {
  const where = cgroupParent();
  if (!('parent' in where)) return 0;
  const ours = new RegExp(`^${PREFIX}${namespace()}-(\\d+)-`);
  let reaped = 0;
  for (const name of readdirSync(where.parent)) {
    const worker = Number(name.match(ours)?.[1]);
    if (!worker || alive(worker)) continue;
    removeCgroup(join(where.parent, name));
    reaped++;
  }
  return reaped;
}

/** Writes a cgroup file the kernel may not have (cgroup.kill before 5.14; memory.swap.max without swap accounting). */
function writeOptional(file: string, value: string): void {
  try {
    writeFileSync(file, value);
  } catch {
    // not this kernel's
  }
}

function read(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}
