import { lstatSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve, sep } from 'node:path';
import type { Canaries } from './canaries.ts';

/**
 * What a sandbox sees of the filesystem: the host read-only; the temporary folders (where every
 * run keeps its sockets) as empty tmpfs mounts, laid again after every bind that could bring them
 * back (a working folder that contains the temporary folder, as CI's layout has it, or is `/`);
 * files that hold secrets by convention masked with decoys; its own folders last.
 */

/** Files that hold secrets by convention, in the working folder and each folder above it. */
const SECRET_FILES = /^(\.env(\..+)?|\.npmrc|\.netrc|\.git-credentials|\.pypirc|\.yarnrc\.yml|\.pgpass)$/;

/**
 * Folders every sandbox empties: the system's temporary folders and this process's own. One inside
 * another stays listed: a shown folder between them (a project under /tmp whose temporary folder
 * is inside it) brings the inner one back, and it is masked again.
 */
export function maskedFolders(): string[] {
  return [...new Set(['/tmp', resolve(tmpdir()), '/run', '/dev/shm'])];
}

/** Whether `path` is `folder` or under it. */
export function inside(path: string, folder: string): boolean {
  const rel = relative(folder, path);
  return rel === '' || (!rel.startsWith('..') && !rel.startsWith(sep) && rel !== '..');
}

/** A decoy file and where it is bound over a real one. */
export interface Decoy {
  /** The real file's path, as the sandbox names it. */
  path: string;
  /** Which convention: what the decoy's text looks like. */
  kind: 'env' | 'npmrc' | 'netrc' | 'git' | 'git-credentials' | 'other';
}

/** The names looked for in a folder that is not listed whole: those with no variants. */
const FIXED_NAMES = ['.env', '.npmrc', '.netrc', '.git-credentials', '.pypirc', '.yarnrc.yml', '.pgpass', '.git'];

/**
 * The secret-looking files in `cwd` and the folders above it, and `.git/config` beside them, but
 * for `expose` (paths the user listed, as they are or relative to `cwd`). The working folder and
 * the project's (the worker's) are listed whole (`.env.local`…); a folder above them is asked for
 * the fixed names only: listing `/tmp` or `/` at every run's start costs more than it finds.
 */
export function secretFiles(cwd: string, expose: readonly string[] = []): Decoy[] {
  const exposed = new Set(expose.map((path) => resolve(cwd, path)));
  const listed = new Set([resolve(cwd), process.cwd()]);
  const found: Decoy[] = [];
  for (let folder = resolve(cwd); ; folder = dirname(folder)) {
    let names = FIXED_NAMES;
    if (listed.has(folder)) {
      try {
        names = readdirSync(folder);
      } catch {
        names = []; // unreadable: nothing in it is read by the agent either
      }
    }
    for (const name of names) {
      if (SECRET_FILES.test(name)) found.push({ path: join(folder, name), kind: kindOf(name) });
      if (name === '.git') found.push(...gitConfigs(join(folder, name)).map((path) => ({ path, kind: 'git' as const })));
    }
    if (folder === dirname(folder)) break;
  }
  return found.filter(({ path }) => !exposed.has(path) && isFile(path));
}

/**
 * The config files git reads for the repository at `dotGit`: `.git/config` in a clone; in a
 * worktree or a submodule, whose `.git` is a file (`gitdir: …`), the config of the folder it
 * names and of that folder's common folder (a worktree's is its main clone's).
 */
function gitConfigs(dotGit: string): string[] {
  if (!isFile(dotGit)) return [join(dotGit, 'config')];
  const gitDir = readText(dotGit)?.match(/^gitdir: (.+)$/m)?.[1];
  if (gitDir === undefined) return [];
  const own = resolve(dirname(dotGit), gitDir.trim());
  const common = readText(join(own, 'commondir'))?.trim();
  return [join(own, 'config'), ...(common ? [join(resolve(own, common), 'config')] : [])];
}

/**
 * Whether `path` is a regular file (not a link, unless `follow`): false where it cannot be looked
 * at (a part of it is a file, a name longer than a file's name may be, or closed to us).
 */
export function isFile(path: string, follow = false): boolean {
  try {
    return (follow ? statSync : lstatSync)(path, { throwIfNoEntry: false })?.isFile() === true;
  } catch {
    return false;
  }
}

/** A file's text, or undefined where it cannot be read (gone, closed to us, a process that ended). */
export function readText(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

function kindOf(name: string): Decoy['kind'] {
  if (name.startsWith('.env')) return 'env';
  if (name === '.npmrc') return 'npmrc';
  if (name === '.netrc') return 'netrc';
  if (name === '.git-credentials') return 'git-credentials';
  return 'other';
}

/** A decoy's text: what such a file holds, with the canaries where its secrets would be, each key in its own provider's shape. */
function decoyText(kind: Decoy['kind'], canaries: Canaries): string {
  switch (kind) {
    case 'env':
      return `OPENAI_API_KEY=${canaries.openai}\nANTHROPIC_API_KEY=${canaries.anthropic}\nGEMINI_API_KEY=${canaries.gemini}\nSITE_PASSWORD=${canaries.password}\n`;
    case 'npmrc':
      return `//registry.npmjs.org/:_authToken=${canaries.npm}\n`;
    case 'netrc':
      return `machine github.com login agent password ${canaries.github}\ndefault login agent password ${canaries.password}\n`;
    case 'git':
      return `[credential]\n\thelper = store\n[remote "origin"]\n\turl = https://agent:${canaries.github}@github.com/agent/repo.git\n`;
    case 'git-credentials':
      return `https://agent:${canaries.github}@github.com\n`;
    case 'other':
      return `password=${canaries.password}\n`;
  }
}

/**
 * What a sandbox of the run shows beyond the host read-only: paths shown even inside a masked
 * folder, and a decoy over each secret file. The agent's sandbox and its Chromium's show the same:
 * what a page of its browser reads at file:// is what the agent reads itself.
 */
export interface View {
  shown: readonly string[];
  decoys: ReadonlyArray<{ path: string; text: string }>;
}

/** The view of a run whose agent works in `cwd`: `shown`, and a decoy holding `canaries` over each secret file but those listed in `expose`. */
export function viewOf(cwd: string, shown: readonly string[], expose: readonly string[], canaries: Canaries | undefined): View {
  return { shown, decoys: canaries ? secretFiles(cwd, expose).map(({ path, kind }) => ({ path, text: decoyText(kind, canaries) })) : [] };
}

export interface MountPlan {
  /** Paths the agent needs to see read-only (its working folder; Chromium's program), even inside a masked folder. */
  shown: readonly string[];
  /** Folders on the way to a shown path that only their owner may enter, opened to the run's uid (asIdentity): each one not shown itself is passed through only, empty and read-only but for the paths shown in it. */
  closed?: readonly string[];
  /**
   * Masks over secret files: the decoy's text, read from descriptor `fd`, at `path`. bwrap copies it
   * into a file of its own, so a mount's source in /proc/self/mountinfo names no file of the run's.
   */
  decoys: ReadonlyArray<{ path: string; fd: number }>;
  /** Its only writable folder. */
  workDir?: string;
  /** Read-only folders of its run's own (its sockets), bound last. */
  own: readonly string[];
  tmpBytes: number;
  shmBytes: number;
}

/**
 * bwrap's mount arguments, in order: the host read-only; every masked folder empty; the folders
 * passed through emptied and what must be shown bound again, outermost first (a folder shown
 * brings back what is in it, a folder emptied hides it); the masked folders that a shown path
 * brought back, masked again; decoys; the run's own folders last, so no bind before them can hide
 * them or bring another run back.
 */
export function mountArgs(plan: MountPlan): string[] {
  const masked = maskedFolders();
  const passedThrough = (plan.closed ?? []).filter((folder) => !plan.shown.includes(folder));
  const tmpfs = (folder: string) => ['--perms', folder === '/run' ? '0755' : '1777', '--size', String(folder === '/dev/shm' ? plan.shmBytes : plan.tmpBytes), '--tmpfs', folder];
  const shown = plan.shown.filter((path) => path === '/' || [...masked, ...passedThrough].some((folder) => inside(path, folder)));
  const remasked = masked.filter((folder) => shown.some((path) => inside(folder, path) && folder !== path));
  const depth = (path: string) => resolve(path).split(sep).filter(Boolean).length;
  const layered = [...passedThrough.map((path) => ({ path, args: ['--perms', '0755', '--tmpfs', path] })), ...shown.map((path) => ({ path, args: ['--ro-bind', path, path] }))];
  return [
    '--ro-bind', '/', '/',
    '--dev', '/dev',
    '--proc', '/proc',
    ...masked.flatMap(tmpfs),
    ...layered.sort((a, b) => depth(a.path) - depth(b.path)).flatMap(({ args }) => args),
    ...remasked.flatMap(tmpfs),
    ...plan.decoys.flatMap(({ path, fd }) => ['--ro-bind-data', String(fd), path]),
    ...(plan.workDir ? ['--bind', plan.workDir, plan.workDir] : []),
    ...plan.own.flatMap((path) => ['--ro-bind', path, path]),
    ...passedThrough.flatMap((path) => ['--remount-ro', path]),
  ];
}

/**
 * Every folder on the way to each of `paths`, each path included, that a user other than its owner
 * cannot pass through by its mode bits (a folder of root's at 0700: /root, a mkdtemp folder),
 * outermost first.
 */
export function closedFolders(paths: readonly string[]): string[] {
  const found = new Set<string>();
  for (const path of paths) {
    const chain: string[] = [];
    for (let folder = resolve(path); ; folder = dirname(folder)) {
      chain.unshift(folder);
      if (folder === dirname(folder)) break;
    }
    for (const folder of chain) {
      const stat = statSync(folder, { throwIfNoEntry: false });
      if (stat?.isDirectory() && (stat.mode & 0o001) === 0) found.add(folder);
    }
  }
  return [...found].sort((a, b) => a.length - b.length);
}

/** Why the sandbox cannot open `folder` to the run's uid (asIdentity): a name overlayfs cannot take in its list of layers. */
export function unopenable(folder: string): string | undefined {
  return /[:,\\"\n]/.test(folder) ? `its path holds a character overlayfs cannot take in a layer's path (: , \\ " or a newline)` : undefined;
}
