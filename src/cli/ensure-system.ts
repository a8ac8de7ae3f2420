/**
 * Run by `npm install` (bin/ensure-system.js) and by .ci/run's system stage: leaves every part of
 * src/cli/system.ts there, or says in one line a part exactly what to run. Order: what is already
 * there; else, as root on Debian, one apt-get call for every missing package; else, for Chromium,
 * Playwright's download; else the lines.
 */
import { spawnSync } from 'node:child_process';
import { missingLine, systemParts, thisMachine, unskipped, type Machine, type Part } from './system.ts';

const say = (line: string) => console.log(`harness-eval: ${line}`);

/** `apt-get install` of `packages`, after an `apt-get update` if the lists are stale; a release without the optional headless shell still gets the rest. */
function aptInstall(packages: string[], machine: Machine): void {
  const env = { ...machine.env, DEBIAN_FRONTEND: 'noninteractive' };
  const apt = (args: string[]) => spawnSync('apt-get', args, { stdio: ['ignore', 'inherit', 'inherit'], env, timeout: 900_000 }).status === 0;
  const install = (names: string[]) => apt(['install', '-y', '-q', ...names]) || (apt(['update', '-q']) && apt(['install', '-y', '-q', ...names]));
  say(`installing: apt-get install -y ${packages.join(' ')}`);
  if (install(packages)) return;
  const required = packages.filter((name) => name !== 'chromium-headless-shell');
  if (required.length < packages.length && required.length > 0) install(required);
}

const missing = (parts: Part[]) => parts.filter((part) => part.status === 'missing');

/** What was found, in two lines: the browser, and the sandbox's parts. */
function sayFound(parts: Part[]): void {
  const found = parts.filter((part) => part.status === 'found');
  const chromium = found.find((part) => part.name === 'chromium');
  const shell = found.find((part) => part.name === 'headless shell');
  if (chromium) say(`using Chromium at ${chromium.path} (${chromium.detail}${shell?.path ? `; headless runs: ${shell.path}` : ''})`);
  const system = found.filter((part) => part.group === 'system');
  if (system.length > 0) say(`using ${system.map((part) => `${part.name} ${part.path}`).join(', ')}`);
}

/**
 * Makes sure of every part the skip variables leave; 0 when every required one is there at the end,
 * else 1 (the postinstall exits 0 whatever this says: it never fails an install). HARNESS_EVAL_NO_APT=1
 * never runs apt-get (the tests hide parts as root on Debian).
 */
export function ensureSystem(machine: Machine = thisMachine()): number {
  const { env } = machine;
  if (env.HARNESS_EVAL_SKIP_BROWSER === '1') say('HARNESS_EVAL_SKIP_BROWSER=1: not checking for Chromium');
  if (env.HARNESS_EVAL_SKIP_SYSTEM === '1') say('HARNESS_EVAL_SKIP_SYSTEM=1: not checking for the sandbox\u2019s parts');
  const look = () => unskipped(systemParts(machine), env);
  let parts = look();
  const packages = [...new Set(missing(parts).flatMap((part) => part.packages))];
  if (packages.length > 0 && machine.linux && machine.root && machine.apt && env.HARNESS_EVAL_NO_APT !== '1') {
    aptInstall(packages, machine);
    parts = look();
  }
  // Chromium without root or apt (or where apt had none): Playwright's own download, which needs neither.
  if (parts.some((part) => part.name === 'chromium' && part.status === 'missing' && !part.override)) {
    say('trying: npx playwright install chromium');
    if (spawnSync('npx', ['playwright', 'install', 'chromium'], { stdio: 'inherit', env, timeout: 300_000 }).status === 0) parts = look();
  }
  sayFound(parts);
  for (const part of missing(parts)) console.error(missingLine(part));
  return missing(parts).some((part) => part.required) ? 1 : 0;
}
