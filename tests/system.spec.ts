import { execFile } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, test } from '@playwright/test';
import { missingLine, missingSummary, onPath, systemParts, type Machine } from '../src/cli/system.ts';

/**
 * npm install's step for the machine's parts (bin/ensure-system.js, src/cli/system.ts), with each
 * part hidden: a PATH without it, or its override pointing nowhere. HARNESS_EVAL_NO_APT=1 keeps it
 * from installing anything as root on Debian (as these tests run in CI); one test gives it a fake
 * apt-get instead.
 */
const repo = fileURLToPath(new URL('..', import.meta.url));
const root = process.getuid?.() === 0;
const sudo = root ? '' : 'sudo ';

/** The test's environment without any variable that names or skips a part. */
const clean = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^(HARNESS_|CHROMIUM_PATH$)/.test(name))) as Record<string, string>;

type Run = { code: number; stdout: string; stderr: string; missing: string[] };

function run(args: string[], env: Record<string, string>): Promise<Run> {
  return new Promise((resolve) => {
    execFile(process.execPath, args, { cwd: repo, env: { ...clean, ...env }, timeout: 120_000 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
      resolve({ code, stdout, stderr, missing: stderr.split('\n').filter((line) => line.startsWith('harness-eval: missing')) });
    });
  });
}

const ensure = (env: Record<string, string>, strict = false) => run(['bin/ensure-system.js', ...(strict ? ['--strict'] : [])], { HARNESS_EVAL_NO_APT: '1', ...env });

/** A PATH of links to the programs the parts are found by, but those `hidden`: the folder. */
export function pathWithout(hidden: readonly string[], prefix = 'path-'): string {
  const dir = mkdtempSync(test.info().outputPath(prefix));
  for (const name of ['bwrap', 'socat', 'setpriv', 'prlimit', 'apt-get', 'sh']) {
    const real = onPath(name, process.env);
    if (real && !hidden.includes(name)) symlinkSync(real, join(dir, name));
  }
  return dir;
}

/** Each part hidden by its override, and the one line the install step prints for it. */
const overrides: Array<{ part: string; env: Record<string, string>; line: string; required?: boolean }> = [
  {
    part: 'Chromium',
    env: { CHROMIUM_PATH: '/nowhere/chromium' },
    line: 'harness-eval: missing Chromium, for the browser every run drives: CHROMIUM_PATH: no file at /nowhere/chromium; run `unset CHROMIUM_PATH`, or point CHROMIUM_PATH at a Chromium executable',
  },
  {
    part: 'bubblewrap',
    env: { HARNESS_BWRAP: '/nowhere/bwrap' },
    line: 'harness-eval: missing bubblewrap (bwrap), for the command agents\u2019 sandbox: HARNESS_BWRAP=/nowhere/bwrap is not an executable file; run `unset HARNESS_BWRAP`, or point HARNESS_BWRAP at a bwrap',
  },
  {
    part: 'socat',
    env: { HARNESS_SOCAT: '/nowhere/socat' },
    line: 'harness-eval: missing socat, for the sandbox\u2019s ports: HARNESS_SOCAT=/nowhere/socat is not an executable file; run `unset HARNESS_SOCAT`, or point HARNESS_SOCAT at a socat',
  },
  {
    part: 'the seccomp builder',
    env: { HARNESS_SECCOMP_PYTHON: '/nowhere/python3' },
    line: 'harness-eval: missing the seccomp filter builder (python3-seccomp), for the sandbox\u2019s system-call filter: /nowhere/python3: ENOENT; run `unset HARNESS_SECCOMP_PYTHON`, or point HARNESS_SECCOMP_PYTHON at a python that imports seccomp',
  },
  {
    part: 'setpriv',
    env: { HARNESS_SETPRIV: '/nowhere/setpriv' },
    line: 'harness-eval: missing setpriv (util-linux), for the agents\u2019 unprivileged identity as root: HARNESS_SETPRIV=/nowhere/setpriv is not an executable file; run `unset HARNESS_SETPRIV`, or point HARNESS_SETPRIV at a setpriv',
    // Only root hands the agent another uid.
    required: root,
  },
  {
    part: 'prlimit',
    env: { HARNESS_PRLIMIT: '/nowhere/prlimit' },
    line: 'harness-eval: missing prlimit (util-linux), for the agents\u2019 limits: HARNESS_PRLIMIT=/nowhere/prlimit is not an executable file; run `unset HARNESS_PRLIMIT`, or point HARNESS_PRLIMIT at a prlimit',
  },
];

test('with every part there, the install step names what it uses and prints no missing line', async () => {
  const { code, stdout, missing } = await ensure({}, true);
  expect(missing).toEqual([]);
  expect(code).toBe(0);
  expect(stdout).toMatch(/^harness-eval: using Chromium at \S+/m);
  expect(stdout).toMatch(/^harness-eval: using bubblewrap \S+, socat \S+, seccomp \S+, setpriv \S+, prlimit \S+$/m);
});

test('each part hidden by its override: one line naming it and the command, the install still exits 0, --strict exits 1', async () => {
  await Promise.all(
    overrides.map(async ({ part, env, line, required = true }) => {
      const [install, strict] = await Promise.all([ensure(env), ensure(env, true)]);
      if (!required) {
        expect(install.missing, `${part}, not needed here`).toEqual([]);
        return;
      }
      expect(install.missing, part).toEqual([line]);
      expect(install.code, `${part}: the postinstall never fails an install`).toBe(0);
      expect(strict.missing, part).toEqual([line]);
      expect(strict.code, `${part}: --strict`).toBe(1);
    }),
  );
});

test('each program hidden from PATH: one line with the apt-get command that installs it', async () => {
  const programs = [
    { name: 'bwrap', line: `harness-eval: missing bubblewrap (bwrap), for the command agents\u2019 sandbox: no bwrap on PATH; run \`${sudo}apt-get install -y bubblewrap\`` },
    { name: 'socat', line: `harness-eval: missing socat, for the sandbox\u2019s ports: no socat on PATH; run \`${sudo}apt-get install -y socat\`` },
    { name: 'prlimit', line: `harness-eval: missing prlimit (util-linux), for the agents\u2019 limits: no prlimit on PATH; run \`${sudo}apt-get install -y util-linux\`` },
    ...(root ? [{ name: 'setpriv', line: `harness-eval: missing setpriv (util-linux), for the agents\u2019 unprivileged identity as root: no setpriv on PATH; run \`apt-get install -y util-linux\`` }] : []),
  ];
  test.skip(onPath('apt-get', process.env) === undefined, 'the lines name apt-get where it is on PATH');
  await Promise.all(
    programs.map(async ({ name, line }) => {
      const { code, missing } = await ensure({ PATH: pathWithout([name]) }, true);
      expect(missing, name).toEqual([line]);
      expect(code, name).toBe(1);
    }),
  );
  // Two hidden: a line each.
  const both = await ensure({ PATH: pathWithout(['bwrap', 'socat']) });
  expect(both.missing).toEqual([programs[0]!.line, programs[1]!.line]);
});

test('a python without libseccomp\u2019s binding: the seccomp line says it cannot import it', async () => {
  const python = join(mkdtempSync(test.info().outputPath('python-')), 'python3');
  writeFileSync(python, '#!/bin/sh\necho "ModuleNotFoundError: No module named \'seccomp\'" >&2\nexit 1\n');
  chmodSync(python, 0o755);
  const { code, missing } = await ensure({ HARNESS_SECCOMP_PYTHON: python }, true);
  expect(missing).toEqual([
    `harness-eval: missing the seccomp filter builder (python3-seccomp), for the sandbox\u2019s system-call filter: ${python} cannot import seccomp; run \`unset HARNESS_SECCOMP_PYTHON\`, or point HARNESS_SECCOMP_PYTHON at a python that imports seccomp`,
  ]);
  expect(code).toBe(1);
});

test('HARNESS_EVAL_SKIP_SYSTEM=1 skips the sandbox\u2019s parts, HARNESS_EVAL_SKIP_BROWSER=1 Chromium', async () => {
  const [system, browser] = await Promise.all([
    ensure({ HARNESS_EVAL_SKIP_SYSTEM: '1', HARNESS_BWRAP: '/nowhere/bwrap', HARNESS_SOCAT: '/nowhere/socat', HARNESS_SECCOMP_PYTHON: '/nowhere/python3' }, true),
    ensure({ HARNESS_EVAL_SKIP_BROWSER: '1', CHROMIUM_PATH: '/nowhere/chromium' }, true),
  ]);
  expect(system).toMatchObject({ code: 0, missing: [] });
  expect(system.stdout).toContain('harness-eval: HARNESS_EVAL_SKIP_SYSTEM=1: not checking for the sandbox\u2019s parts');
  expect(system.stdout).not.toContain('using bubblewrap');
  expect(browser).toMatchObject({ code: 0, missing: [] });
  expect(browser.stdout).toContain('harness-eval: HARNESS_EVAL_SKIP_BROWSER=1: not checking for Chromium');
  expect(browser.stdout).not.toContain('using Chromium');
});

/** A PATH without bwrap and socat, and a fake apt-get that logs each call and "installs" a package by linking the real program onto it; with `stale` lists, an install fails until an update. */
function fakeApt(stale: boolean): { bin: string; log: string } {
  const bin = pathWithout(['bwrap', 'socat', 'apt-get'], 'apt-');
  const log = join(bin, 'apt.log');
  const link = (name: string) => `/bin/ln -s '${onPath(name, process.env)}' '${bin}/${name}'`;
  writeFileSync(
    join(bin, 'apt-get'),
    [
      '#!/bin/sh',
      `echo "$*" >> '${log}'`,
      `[ "$1" = update ] && : > '${bin}/updated'`,
      '[ "$1" = install ] || exit 0',
      ...(stale ? [`[ -e '${bin}/updated' ] || { echo "E: Unable to locate package $4" >&2; exit 100; }`] : []),
      `for package; do case "$package" in bubblewrap) ${link('bwrap')};; socat) ${link('socat')};; esac; done`,
      '',
    ].join('\n'),
  );
  chmodSync(join(bin, 'apt-get'), 0o755);
  return { bin, log };
}

test('as root with apt-get: every missing package in one apt-get call (after an update when the lists are stale), then the parts are found', async () => {
  test.skip(!root || process.platform !== 'linux', 'apt-get runs only as root on Linux');
  for (const stale of [false, true]) {
    const { bin, log } = fakeApt(stale);
    const { code, stdout, missing } = await run(['bin/ensure-system.js', '--strict'], { PATH: bin });
    const install = 'install -y -q bubblewrap socat\n';
    expect(readFileSync(log, 'utf8'), stale ? 'stale lists' : 'fresh lists').toBe(stale ? `${install}update -q\n${install}` : install);
    expect(stdout).toContain('harness-eval: installing: apt-get install -y bubblewrap socat');
    expect(stdout).toContain(`harness-eval: using bubblewrap ${join(bin, 'bwrap')}, socat ${join(bin, 'socat')}`);
    expect(missing).toEqual([]);
    expect(code).toBe(0);
  }
});

test('not as root: sudo in the command, and setpriv is not needed (the agent keeps the worker\u2019s uid)', () => {
  const machine: Machine = { env: { ...clean, HARNESS_BWRAP: '', PATH: pathWithout(['bwrap', 'setpriv']) }, root: false, linux: true, apt: true };
  const parts = systemParts(machine);
  const bwrap = parts.find((part) => part.name === 'bubblewrap')!;
  expect(missingLine(bwrap)).toBe('harness-eval: missing bubblewrap (bwrap), for the command agents\u2019 sandbox: no bwrap on PATH; run `sudo apt-get install -y bubblewrap`');
  expect(parts.find((part) => part.name === 'setpriv')).toMatchObject({ status: 'missing', required: false });
  const socat = { ...parts.find((part) => part.name === 'socat')!, status: 'missing' as const, packages: ['socat'] };
  // Several at once (as npm test says them): one apt-get line for all.
  expect(missingSummary([bwrap, socat], machine)).toMatch(/; run `sudo apt-get install -y bubblewrap socat`$/);
});
