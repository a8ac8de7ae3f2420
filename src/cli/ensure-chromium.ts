/**
 * Run by `npm install` (bin/ensure-chromium.js): leaves a working Chromium or says exactly what to run.
 * Order: one already there, Playwright's download, Debian's package (as root).
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { findChromium, MISSING_CHROMIUM } from '../playwright/chromium.ts';

const say = (line: string) => console.log(`harness-eval: ${line}`);

function found(): boolean {
  const chromium = findChromium();
  if (chromium) say(`using Chromium at ${chromium.path} (${chromium.kind}${chromium.kind === 'system' && chromium.pair ? `: ${chromium.pair.headlessShell} when headless, ${chromium.pair.browser} when headed` : ''})`);
  return chromium !== undefined;
}

function run(command: string, args: string[], timeoutMs: number): boolean {
  say(`trying: ${command} ${args.join(' ')}`);
  return spawnSync(command, args, { stdio: 'inherit', timeout: timeoutMs }).status === 0;
}

/** 0 when a Chromium is there at the end; else 1, after printing what to run. */
export function ensureChromium(): number {
  if (process.env.HARNESS_EVAL_SKIP_BROWSER === '1') return say('HARNESS_EVAL_SKIP_BROWSER=1: not checking for Chromium'), 0;
  if (found()) return 0;
  if (run('npx', ['playwright', 'install', 'chromium'], 300_000) && found()) return 0;
  const root = process.getuid?.() === 0;
  if (process.platform === 'linux' && root && existsSync('/usr/bin/apt-get')) {
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    const apt = (args: string[]) => spawnSync('apt-get', args, { stdio: 'inherit', env, timeout: 900_000 }).status === 0;
    // Its headless shell too where the release has one: headless runs use it (src/playwright/chromium.ts).
    const install = (packages: string[]) => apt(['install', '-y', '-q', ...packages]) || (apt(['update', '-q']) && apt(['install', '-y', '-q', ...packages]));
    say('trying: apt-get install -y chromium chromium-headless-shell');
    if ((install(['chromium', 'chromium-headless-shell']) || install(['chromium'])) && found()) return 0;
  }
  console.error(`harness-eval: ${MISSING_CHROMIUM}`);
  return 1;
}
