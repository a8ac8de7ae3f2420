import { existsSync } from 'node:fs';
import { chromium, type LaunchOptions } from '@playwright/test';
import { InputError } from '../input.ts';

/** Flags for a root, offline machine: no sandbox, and none of Chromium's calls home. */
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

const SYSTEM_CHROMIUMS = ['/usr/bin/chromium', '/usr/bin/chromium-browser'];

export type ChromiumSource = { kind: 'env' | 'system'; path: string } | { kind: 'playwright'; path: string };

/** Where Chromium is: `CHROMIUM_PATH`, else Playwright's own download, else the system's. */
export function findChromium(env: NodeJS.ProcessEnv = process.env, systemChromiums: readonly string[] = SYSTEM_CHROMIUMS): ChromiumSource | undefined {
  if (env.CHROMIUM_PATH) {
    if (!existsSync(env.CHROMIUM_PATH)) throw new InputError(`CHROMIUM_PATH: no file at ${env.CHROMIUM_PATH}`);
    return { kind: 'env', path: env.CHROMIUM_PATH };
  }
  const bundled = chromium.executablePath();
  if (existsSync(bundled)) return { kind: 'playwright', path: bundled };
  const system = systemChromiums.find((path) => existsSync(path));
  return system ? { kind: 'system', path: system } : undefined;
}

export const MISSING_CHROMIUM =
  'No Chromium found. Run `npx playwright install chromium`, or on Debian as root `apt-get install -y chromium`, ' +
  'or set CHROMIUM_PATH to a Chromium executable.';

/** Launch options for Playwright's `use.launchOptions`: Playwright's browser as is, any other by path. */
export function chromiumLaunchOptions(env: NodeJS.ProcessEnv = process.env, systemChromiums?: readonly string[]): LaunchOptions {
  const found = findChromium(env, systemChromiums);
  if (!found) throw new InputError(MISSING_CHROMIUM);
  return { args: CHROMIUM_ARGS, ...(found.kind === 'playwright' ? {} : { executablePath: found.path }) };
}
