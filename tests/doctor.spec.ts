import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, test } from '@playwright/test';
import { onPath } from '../src/cli/system.ts';
import { cgroupParent } from '../src/agents/sandbox-cgroup.ts';

/**
 * `harness-eval doctor`: a line for each part of the machine and for what a command agent gets,
 * and an exit code that says whether `sandbox: 'required'` would work; with each part hidden (its
 * override pointing nowhere, or a PATH without it), its line says so with the command to run.
 */
const repo = fileURLToPath(new URL('..', import.meta.url));
const root = process.getuid?.() === 0;
const clean = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^(HARNESS_|CHROMIUM_PATH$)/.test(name))) as Record<string, string>;
const KEYS = ['chromium', 'headless shell', 'bubblewrap', 'socat', 'seccomp', 'identity', 'limits', 'memory in total', 'command agents'];

/** Runs doctor: its exit code, and its lines by key ("bubblewrap" → what follows "bubblewrap:"), the verdict last. */
function doctor(env: Record<string, string> = {}): Promise<{ code: number; lines: string[]; line: Record<string, string>; output: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['bin/harness-eval.js', 'doctor'], { cwd: repo, env: { ...clean, ...env }, timeout: 120_000 }, (error, stdout, stderr) => {
      const lines = stdout.trimEnd().split('\n');
      const line = Object.fromEntries(lines.flatMap((text) => {
        const match = /^([a-z ]+):\s+(.*)$/.exec(text);
        return match ? [[match[1]!, match[2]!]] : [];
      }));
      resolve({ code: error ? Number(error.code ?? 1) : 0, lines, line, output: stdout + stderr });
    });
  });
}

/** A PATH of links to the programs the parts are found by, but `hidden`. */
function pathWithout(hidden: string): string {
  const dir = mkdtempSync(test.info().outputPath('path-'));
  for (const name of ['bwrap', 'socat', 'setpriv', 'prlimit', 'apt-get']) {
    const real = onPath(name, process.env);
    if (real && name !== hidden) symlinkSync(real, join(dir, name));
  }
  return dir;
}

/** This process's soft limit, as doctor's child inherits it. */
const limit = (name: string) => /^(\S+)/.exec(readFileSync('/proc/self/limits', 'utf8').split('\n').find((row) => row.startsWith(name))!.slice(name.length).trim())![1];

test('on this machine: a line a part, in order, every one there, command agents contained, exit 0', async () => {
  const { code, lines, line, output } = await doctor();
  expect(lines.map((text) => text.split(':')[0]), output).toEqual([...KEYS, 'sandbox']);
  expect(line.chromium).toMatch(/^\//);
  expect(line.bubblewrap).toMatch(/^\/\S*bwrap; makes a sandbox here$/);
  expect(line.socat).toMatch(/^\/\S*socat$/);
  expect(line.seccomp).toMatch(/^\S+, imports seccomp$/);
  expect(line.identity).toMatch(root ? /^an unprivileged uid for the agent \(root, with setpriv \/\S+\)$/ : /^the worker's own uid \(\d+\)/);
  expect(line.limits).toMatch(/^prlimit \/\S+; now nproc \S+/);
  // `ulimit -u` and `ulimit -n` as doctor's process has them (it inherits this one's).
  expect(line.limits).toContain(`nproc ${limit('Max processes')}`);
  expect(line.limits).toContain(`nofile ${limit('Max open files')}`);
  // Which holds a run's memory in total: the kernel where this machine delegates cgroup v2 (GitHub's runners), else the sandbox's watcher (this machine's cgroup v1).
  const cgroup = cgroupParent();
  expect(line['memory in total']).toBe(
    'parent' in cgroup
      ? `cgroup v2: each run's memory.max and pids.max, in ${cgroup.parent}`
      : `measured: the sandbox's watcher sums the run's resident memory every 500 ms and ends it past its limit (no cgroup v2 for runs here: ${cgroup.why})`,
  );
  expect(line['command agents']).toBe('contained');
  expect(lines.at(-1)).toBe("sandbox: 'required' works here");
  expect(code).toBe(0);
});

test('each part hidden by its override: its line says missing with the command, and doctor exits 1', async () => {
  const cases: Array<{ env: Record<string, string>; key: string; text: string; contained: boolean | undefined }> = [
    { env: { CHROMIUM_PATH: '/nowhere/chromium' }, key: 'chromium', text: 'missing (CHROMIUM_PATH: no file at /nowhere/chromium); run `unset CHROMIUM_PATH`, or point CHROMIUM_PATH at a Chromium executable', contained: true },
    { env: { HARNESS_BWRAP: '/nowhere/bwrap' }, key: 'bubblewrap', text: 'missing (HARNESS_BWRAP=/nowhere/bwrap is not an executable file); run `unset HARNESS_BWRAP`, or point HARNESS_BWRAP at a bwrap', contained: false },
    { env: { HARNESS_SOCAT: '/nowhere/socat' }, key: 'socat', text: 'missing (HARNESS_SOCAT=/nowhere/socat is not an executable file); run `unset HARNESS_SOCAT`, or point HARNESS_SOCAT at a socat', contained: false },
    // Whether the sandbox's probe covers the filter is the sandbox's to say: the exit code is doctor's.
    { env: { HARNESS_SECCOMP_PYTHON: '/nowhere/python3' }, key: 'seccomp', text: 'missing (/nowhere/python3: ENOENT); run `unset HARNESS_SECCOMP_PYTHON`, or point HARNESS_SECCOMP_PYTHON at a python that imports seccomp', contained: undefined },
    { env: { HARNESS_PRLIMIT: '/nowhere/prlimit' }, key: 'limits', text: 'prlimit missing (HARNESS_PRLIMIT=/nowhere/prlimit is not an executable file); run `unset HARNESS_PRLIMIT`, or point HARNESS_PRLIMIT at a prlimit; now nproc', contained: undefined },
    ...(root ? [{ env: { HARNESS_SETPRIV: '/nowhere/setpriv' }, key: 'identity', text: 'missing (HARNESS_SETPRIV=/nowhere/setpriv is not an executable file); run `unset HARNESS_SETPRIV`, or point HARNESS_SETPRIV at a setpriv (as root the agent must not keep uid 0)', contained: undefined }] : []),
  ];
  await Promise.all(
    cases.map(async ({ env, key, text, contained }) => {
      const { code, lines, line, output } = await doctor(env);
      expect(lines.map((each) => each.split(':')[0]), output).toEqual([...KEYS, 'sandbox']);
      expect(line[key], key).toContain(text);
      if (contained === true) expect(line['command agents'], key).toBe('contained');
      if (contained === false) expect(line['command agents'], key).toMatch(/^not contained: .+ \(sandbox: 'auto' runs them uncontained, 'required' refuses to run them\)$/);
      expect(lines.at(-1), key).toBe("sandbox: 'required' does not work here");
      expect(code, key).toBe(1);
    }),
  );
});

test('bubblewrap or socat hidden from PATH: the apt-get line, and command agents not contained', async () => {
  test.skip(onPath('apt-get', process.env) === undefined, 'the lines name apt-get where it is on PATH');
  const sudo = root ? '' : 'sudo ';
  const [bwrap, socat] = await Promise.all([doctor({ PATH: pathWithout('bwrap') }), doctor({ PATH: pathWithout('socat') })]);
  expect(bwrap.line.bubblewrap).toBe(`missing (no bwrap on PATH); run \`${sudo}apt-get install -y bubblewrap\``);
  expect(bwrap.line['command agents']).toMatch(/^not contained: .*(bwrap|bubblewrap)/);
  expect(bwrap.code).toBe(1);
  expect(socat.line.socat).toBe(`missing (no socat on PATH); run \`${sudo}apt-get install -y socat\``);
  expect(socat.line['command agents']).toMatch(/^not contained: .*socat/);
  expect(socat.code).toBe(1);
});

test('a bwrap that cannot make a sandbox here: found, "makes no sandbox here" with the reason, exit 1', async () => {
  const { code, line } = await doctor({ HARNESS_BWRAP: '/bin/false' });
  expect(line.bubblewrap).toMatch(/^\/bin\/false, from HARNESS_BWRAP; makes no sandbox here: \S/);
  expect(line['command agents']).toMatch(/^not contained: /);
  expect(code).toBe(1);
});
