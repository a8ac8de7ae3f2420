/**
 * What the project needs of the machine beyond npm: Chromium (with Debian's headless shell where
 * it has one), and for the command agents' sandbox bubblewrap, socat, libseccomp's Python binding
 * (the seccomp filter's builder) and util-linux's setpriv and prlimit. One list, used by npm
 * install's postinstall (bin/ensure-system.js: use what is there, else install, else one line per
 * part saying what to run), by `npm test`'s global setup (tests/global-setup.ts: one line before any
 * test starts) and by `harness-eval doctor`.
 */
import { spawnSync } from 'node:child_process';
import { accessSync, constants, readFileSync, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { findChromium, type ChromiumSource } from '../playwright/chromium.ts';

export type PartName = 'chromium' | 'headless shell' | 'bubblewrap' | 'socat' | 'seccomp' | 'setpriv' | 'prlimit';

/** One part, as found on this machine. */
export interface Part {
  name: PartName;
  /** How a line names it: "bubblewrap (bwrap)". */
  label: string;
  /** What the project uses it for. */
  purpose: string;
  /** `browser` parts are skipped by HARNESS_EVAL_SKIP_BROWSER, `system` ones by HARNESS_EVAL_SKIP_SYSTEM. */
  group: 'browser' | 'system';
  /** `found`: there (at `path`); `missing`: not there (`why`); `unneeded`: not needed here (`why`). */
  status: 'found' | 'missing' | 'unneeded';
  /** A missing required part fails `npm test` and `doctor`; a missing optional one is only said. */
  required: boolean;
  path?: string;
  /** What was found ("Debian's", "imports seccomp"), or why it is missing or unneeded. */
  detail: string;
  /** Debian packages that provide it: none when an override points elsewhere (installing would not change what it names). */
  packages: string[];
  /** The variable that names it instead, when it is set. */
  override?: string;
  /** What that variable should name: "a bwrap". */
  wants: string;
  /** The command that gets it: an apt-get line, `npx playwright install chromium`, or `unset VAR`. */
  fix: string;
}

/** Where this runs: what it may do to get a part. */
export interface Machine {
  env: NodeJS.ProcessEnv;
  root: boolean;
  linux: boolean;
  /** Debian's apt-get is on PATH. */
  apt: boolean;
}

export function thisMachine(env: NodeJS.ProcessEnv = process.env): Machine {
  return { env, root: process.getuid?.() === 0, linux: process.platform === 'linux', apt: onPath('apt-get', env) !== undefined };
}

/** The python the seccomp filter is built with: HARNESS_SECCOMP_PYTHON, else Debian's own (a pyenv python3 on PATH has no binding). */
export const DEFAULT_SECCOMP_PYTHON = '/usr/bin/python3';

function isExecutable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return statSync(file).isFile();
  } catch {
    return false;
  }
}

/** The first `name` on the PATH, as spawn would find it. */
export function onPath(name: string, env: NodeJS.ProcessEnv): string | undefined {
  return (env.PATH ?? '').split(delimiter).filter(Boolean).map((dir) => join(dir, name)).find(isExecutable);
}

/** A command to install Debian packages, as this user would type it. */
export function aptLine(packages: readonly string[], machine: Machine): string {
  const line = `apt-get install -y ${packages.join(' ')}`;
  return machine.root ? line : `sudo ${line}`;
}

/** A tool named by an override (a path, or a name on PATH), else `name` on PATH. */
function tool(name: string, variable: string, machine: Machine): { path?: string; override?: string; why?: string } {
  const value = machine.env[variable];
  if (!value) {
    const path = onPath(name, machine.env);
    return path ? { path } : { why: `no ${name} on PATH` };
  }
  const path = value.includes('/') ? (isExecutable(value) ? value : undefined) : onPath(value, machine.env);
  return path ? { path, override: variable } : { override: variable, why: `${variable}=${value} is not an executable file` };
}

function debianFix(packages: string[], what: string, machine: Machine): string {
  return machine.apt ? aptLine(packages, machine) : `install ${what} with the system's package manager (Debian: apt-get install -y ${packages.join(' ')})`;
}

/** A part that is one program: bubblewrap, socat, setpriv, prlimit. */
function program(machine: Machine, part: { name: PartName; label: string; purpose: string; binary: string; variable: string; package: string; required: boolean }): Part {
  const base = { name: part.name, label: part.label, purpose: part.purpose, group: 'system' as const, required: part.required, wants: `a ${part.binary}` };
  const found = tool(part.binary, part.variable, machine);
  if (found.path) return { ...base, status: 'found', path: found.path, detail: found.override ? `from ${found.override}` : '', packages: [], override: found.override, fix: '' };
  if (found.override) return { ...base, status: 'missing', detail: found.why!, packages: [], override: found.override, fix: `unset ${found.override}` };
  return { ...base, status: 'missing', detail: found.why!, packages: [part.package], fix: debianFix([part.package], part.label, machine) };
}

/** Chromium and its headless shell: the shell is an optimisation (a third less CPU a headless run), never required. */
function browserParts(machine: Machine): [Part, Part] {
  const chromiumBase = { name: 'chromium' as const, label: 'Chromium', purpose: 'the browser every run drives', group: 'browser' as const, required: true, wants: 'a Chromium executable' };
  const shellBase = { name: 'headless shell' as const, label: "Chromium's headless shell", purpose: 'headless runs, a third less CPU than the full browser', group: 'browser' as const, required: false, wants: '' };
  let found: ChromiumSource | undefined;
  try {
    found = findChromium(machine.env);
  } catch (error) {
    // CHROMIUM_PATH names no file: installing a browser would not change what it names.
    const detail = (error as Error).message;
    return [
      { ...chromiumBase, status: 'missing', detail, packages: [], override: 'CHROMIUM_PATH', fix: 'unset CHROMIUM_PATH' },
      { ...shellBase, status: 'unneeded', detail: 'CHROMIUM_PATH runs headless and headed', packages: [], fix: '' },
    ];
  }
  if (!found) {
    const fix = machine.root && machine.apt ? aptLine(['chromium', 'chromium-headless-shell'], machine) : `npx playwright install chromium${machine.apt ? ` (or ${aptLine(['chromium', 'chromium-headless-shell'], machine)})` : ''}`;
    return [
      { ...chromiumBase, status: 'missing', detail: 'none found (CHROMIUM_PATH, Playwright\u2019s download, /usr/bin/chromium)', packages: ['chromium', 'chromium-headless-shell'], fix },
      { ...shellBase, status: 'unneeded', detail: 'comes with Chromium', packages: [], fix: '' },
    ];
  }
  if (found.kind === 'env') {
    return [
      { ...chromiumBase, status: 'found', path: found.path, detail: 'from CHROMIUM_PATH', packages: [], override: 'CHROMIUM_PATH', fix: '' },
      { ...shellBase, status: 'unneeded', detail: 'CHROMIUM_PATH runs headless and headed', packages: [], fix: '' },
    ];
  }
  if (found.kind !== 'system') {
    return [
      { ...chromiumBase, status: 'found', path: found.path, detail: 'Playwright\u2019s download', packages: [], fix: '' },
      { ...shellBase, status: 'found', detail: 'Playwright\u2019s own, downloaded with its Chromium', packages: [], fix: '' },
    ];
  }
  if (found.pair) {
    return [
      { ...chromiumBase, status: 'found', path: found.pair.browser, detail: 'the system\u2019s, for headed runs', packages: [], fix: '' },
      { ...shellBase, status: 'found', path: found.pair.headlessShell, detail: `for headless runs, through ${found.path}`, packages: [], fix: '' },
    ];
  }
  const debian = found.path === '/usr/bin/chromium';
  return [
    { ...chromiumBase, status: 'found', path: found.path, detail: 'the system\u2019s', packages: [], fix: '' },
    debian
      ? { ...shellBase, status: 'missing', detail: 'headless runs use the full browser', packages: ['chromium-headless-shell'], fix: debianFix(['chromium-headless-shell'], 'chromium-headless-shell', machine) }
      : { ...shellBase, status: 'unneeded', detail: `${found.path} runs headless and headed`, packages: [], fix: '' },
  ];
}

/** libseccomp's Python binding, imported by the python that builds the filter. */
function seccompPart(machine: Machine): Part {
  const base = { name: 'seccomp' as const, label: 'the seccomp filter builder (python3-seccomp)', purpose: 'the sandbox\u2019s system-call filter', group: 'system' as const, required: true, wants: 'a python that imports seccomp' };
  const override = machine.env.HARNESS_SECCOMP_PYTHON ? 'HARNESS_SECCOMP_PYTHON' : undefined;
  const python = machine.env.HARNESS_SECCOMP_PYTHON || DEFAULT_SECCOMP_PYTHON;
  const run = spawnSync(python, ['-c', 'import seccomp'], { encoding: 'utf8', timeout: 15_000, env: machine.env });
  if (run.status === 0) return { ...base, status: 'found', path: python, detail: `imports seccomp${override ? ' (HARNESS_SECCOMP_PYTHON)' : ''}`, packages: [], override, fix: '' };
  const why = run.error ? `${python}: ${(run.error as NodeJS.ErrnoException).code ?? run.error.message}` : `${python} cannot import seccomp`;
  if (override) return { ...base, status: 'missing', detail: why, packages: [], override, fix: 'unset HARNESS_SECCOMP_PYTHON' };
  return { ...base, status: 'missing', detail: why, packages: ['python3-seccomp'], fix: debianFix(['python3-seccomp'], 'libseccomp\u2019s Python binding for /usr/bin/python3', machine) };
}

/** Every part, as this machine has it, in the order doctor prints them. */
export function systemParts(machine: Machine = thisMachine()): Part[] {
  const [chromium, shell] = browserParts(machine);
  const sandbox = (): Part[] => [
    program(machine, { name: 'bubblewrap', label: 'bubblewrap (bwrap)', purpose: 'the command agents\u2019 sandbox', binary: 'bwrap', variable: 'HARNESS_BWRAP', package: 'bubblewrap', required: true }),
    program(machine, { name: 'socat', label: 'socat', purpose: 'the sandbox\u2019s ports', binary: 'socat', variable: 'HARNESS_SOCAT', package: 'socat', required: true }),
    seccompPart(machine),
    // Only root hands the agent another uid: a user that is not runs it as its own.
    program(machine, { name: 'setpriv', label: 'setpriv (util-linux)', purpose: 'the agents\u2019 unprivileged identity as root', binary: 'setpriv', variable: 'HARNESS_SETPRIV', package: 'util-linux', required: machine.root }),
    program(machine, { name: 'prlimit', label: 'prlimit (util-linux)', purpose: 'the agents\u2019 limits', binary: 'prlimit', variable: 'HARNESS_PRLIMIT', package: 'util-linux', required: true }),
  ];
  if (machine.linux) return [chromium, shell, ...sandbox()];
  // bubblewrap is Linux's: elsewhere there is nothing to install, and command agents run uncontained.
  const elsewhere = (name: PartName, label: string): Part => ({ name, label, purpose: 'the command agents\u2019 sandbox', group: 'system', status: 'unneeded', required: false, wants: '', detail: `Linux only (this is ${process.platform})`, packages: [], fix: '' });
  return [chromium, shell, ...sandbox().map((part) => elsewhere(part.name, part.label))];
}

/** The parts a skip variable leaves: HARNESS_EVAL_SKIP_BROWSER=1 drops the browser's, HARNESS_EVAL_SKIP_SYSTEM=1 the sandbox's. */
export function unskipped(parts: Part[], env: NodeJS.ProcessEnv): Part[] {
  return parts.filter((part) => !(part.group === 'browser' ? env.HARNESS_EVAL_SKIP_BROWSER === '1' : env.HARNESS_EVAL_SKIP_SYSTEM === '1'));
}

/** The line for a missing part: what it is, what for, why it is missing, and the command that gets it. */
export function missingLine(part: Part): string {
  return `harness-eval: missing ${part.label}, for ${part.purpose}: ${part.detail}; ${fixPhrase(part)}`;
}

/** What to do about a missing part: "run `apt-get install -y socat`". */
export function fixPhrase(part: Part): string {
  if (part.override) return `run \`${part.fix}\`, or point ${part.override} at ${part.wants}`;
  return part.fix.startsWith('install ') ? part.fix : `run \`${part.fix}\``;
}

/**
 * One line for several missing parts, as `npm test` prints before any test starts: the parts, and
 * one apt-get line for all their packages (else each part's own command).
 */
export function missingSummary(missing: Part[], machine: Machine): string {
  if (missing.length === 1) return missingLine(missing[0]!);
  const packages = [...new Set(missing.flatMap((part) => part.packages))];
  const aptable = machine.apt && missing.every((part) => part.packages.length > 0);
  const short = (part: Part) => part.label.replace(/ \(.*\)$/, '');
  const fixes = aptable ? `run \`${aptLine(packages, machine)}\`` : missing.map((part) => `${short(part)}: ${part.override ? `run \`unset ${part.override}\`` : part.fix}`).join('; ');
  return `harness-eval: missing ${missing.map((part) => `${short(part)} (${part.detail})`).join(', ')}; ${fixes}`;
}

/** This process's soft and hard limit of each resource named, from /proc/self/limits ("unlimited" as is). */
export function currentLimits(names: readonly string[] = ['Max processes', 'Max open files']): Array<{ name: string; soft: string; hard: string }> {
  let text: string;
  try {
    text = readFileSync('/proc/self/limits', 'utf8');
  } catch {
    return [];
  }
  return names.flatMap((name) => {
    const line = text.split('\n').find((row) => row.startsWith(name));
    const [soft, hard] = line?.slice(name.length).trim().split(/\s+/) ?? [];
    return soft && hard ? [{ name, soft, hard }] : [];
  });
}
