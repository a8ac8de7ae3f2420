import { existsSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type LaunchOptions } from '@playwright/test';
import { sandboxedBrowser } from '../agents/browser-sandbox.ts';
import { InputError } from '../input.ts';
import { containmentSwitch } from '../reach.ts';

/**
 * What Playwright (1.65) disables with its own `--disable-features`. Chromium reads only the last
 * `--disable-features` it is given, so ours restates them (tests/chromium.spec.ts checks the
 * browser's command line: every feature Playwright's flag names is in ours).
 */
const PLAYWRIGHT_DISABLED_FEATURES = [
  'AvoidUnnecessaryBeforeUnloadCheckSync',
  'DestroyProfileOnBrowserClose',
  'HttpsUpgrades',
  'HttpsFirstBalancedModeAutoEnable',
  'LensOverlay',
  'MediaRouter',
  'PaintHolding',
  'ThirdPartyStoragePartitioning',
  'AvoidCorsURLLoaderRestartOnRedirect',
  'TcpPortRandomizationWin',
  'OptimizationHints',
  'NetworkTimeServiceQuerying',
  'AimEnabled',
  'PreconnectToSearch',
  'msForceBrowserSignIn',
  'msEdgeUpdateLaunchServicesPreferredVersion',
];

/**
 * A full Chromium headless (a system one; Playwright's own download is the headless shell, which
 * has no browser UI) opens a window for each browser context, and in it the omnibox's popups as
 * WebUI pages in a renderer of their own: about 0.6 CPU-s a context, more than the run's own page
 * costs, for a popup nobody sees (docs/performance.md).
 */
const HIDDEN_UI_FEATURES = ['WebUIOmniboxPopup', 'WebUIOmniboxAimPopup', 'WebUIOmniboxFullPopup'];

/** Flags for a root, offline machine: no sandbox, none of Chromium's calls home, no hidden browser UI. */
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  `--disable-features=${[...PLAYWRIGHT_DISABLED_FEATURES, ...HIDDEN_UI_FEATURES].join(',')}`,
];

/**
 * No network for the test's browser: the site reaches it through Playwright's routing, which
 * answers a request before any network does; a request nothing routes (a redirect's next hop, a
 * worker's socket) goes to a proxy that is not there, loopback too (`<-loopback>`), no host name
 * resolves, and WebRTC sends nothing past the proxy.
 */
export const NO_NETWORK_ARGS = ['--proxy-server=http://127.0.0.1:9', '--proxy-bypass-list=<-loopback>', '--host-resolver-rules=MAP * ~NOTFOUND', '--force-webrtc-ip-handling-policy=disable_non_proxied_udp'];

const SYSTEM_CHROMIUMS = ['/usr/bin/chromium', '/usr/bin/chromium-browser'];

/**
 * Debian's headless shell, beside its /usr/bin/chromium: with both, Chromium is launched through
 * bin/chromium-debian.sh, which runs the shell for a headless launch (as Playwright's own download
 * does) and the full browser for a headed one. The full browser opens a hidden window per context:
 * about 0.2 CPU-s a run more (docs/performance.md).
 */
const DEBIAN_HEADLESS_SHELL = { beside: '/usr/bin/chromium', path: '/usr/lib/chromium/chromium-headless-shell', launcher: fileURLToPath(new URL('../../bin/chromium-debian.sh', import.meta.url)) };

/** `pair`: Debian's full browser and headless shell, both launched through `path` (bin/chromium-debian.sh). */
export type ChromiumSource = { kind: 'env' | 'playwright'; path: string } | { kind: 'system'; path: string; pair?: { browser: string; headlessShell: string } };

/** Where Chromium is: `CHROMIUM_PATH`, else Playwright's own download, else the system's. */
export function findChromium(env: NodeJS.ProcessEnv = process.env, systemChromiums: readonly string[] = SYSTEM_CHROMIUMS): ChromiumSource | undefined {
  if (env.CHROMIUM_PATH) {
    if (!existsSync(env.CHROMIUM_PATH)) throw new InputError(`CHROMIUM_PATH: no file at ${env.CHROMIUM_PATH}`);
    return { kind: 'env', path: env.CHROMIUM_PATH };
  }
  const bundled = chromium.executablePath();
  if (existsSync(bundled)) return { kind: 'playwright', path: bundled };
  const system = systemChromiums.find((path) => existsSync(path));
  if (system === undefined) return undefined;
  const shell = DEBIAN_HEADLESS_SHELL;
  return system === shell.beside && existsSync(shell.path) && existsSync(shell.launcher) ? { kind: 'system', path: shell.launcher, pair: { browser: system, headlessShell: shell.path } } : { kind: 'system', path: system };
}

export const MISSING_CHROMIUM =
  'No Chromium found. Run `npx playwright install chromium`, or on Debian as root `apt-get install -y chromium`, ' +
  'or set CHROMIUM_PATH to a Chromium executable.';

function found(env: NodeJS.ProcessEnv, systemChromiums: readonly string[] | undefined): ChromiumSource {
  const source = findChromium(env, systemChromiums);
  if (!source) throw new InputError(MISSING_CHROMIUM);
  return source;
}

/** Chromium as found, with CHROMIUM_ARGS and the network: for a browser sandboxed otherwise (a command agent's), or one that must reach a site (`record hn`). */
export function chromiumAsFound(env: NodeJS.ProcessEnv = process.env, systemChromiums?: readonly string[]): LaunchOptions {
  const source = found(env, systemChromiums);
  return { args: CHROMIUM_ARGS, ...(source.kind === 'playwright' ? {} : { executablePath: source.path }) };
}

/**
 * Launch options for Playwright's `use.launchOptions`, the test's browser: no network
 * (NO_NETWORK_ARGS) and, where the machine has the sandbox's parts, started by a launcher that
 * runs it in a sandbox of its own (src/agents/browser-sandbox.ts). Its command line says how it
 * is contained, which each run reads back (`containment`). Debian's pair runs through
 * bin/chromium-debian.sh's own text, so the project's folder need not be reachable.
 */
export function chromiumLaunchOptions(env: NodeJS.ProcessEnv = process.env, systemChromiums?: readonly string[]): LaunchOptions {
  const source = found(env, systemChromiums);
  const sandboxed = sandboxedBrowser(browserProgram(source));
  const args = [...CHROMIUM_ARGS, ...NO_NETWORK_ARGS];
  if ('path' in sandboxed) return { args, executablePath: sandboxed.path };
  return { args: [...args, containmentSwitch(sandboxed.containment)], ...(source.kind === 'playwright' ? {} : { executablePath: source.path }) };
}

/** What the test's browser's sandbox runs and shows: Debian's pair through its launcher's text (the launcher may be in a folder the sandbox hides), any other Chromium by its path. */
export function browserProgram(source: ChromiumSource = found(process.env, undefined)): { command: string[]; shown: string[] } {
  return source.kind === 'system' && source.pair ? { command: ['/bin/sh', '-c', readFileSync(source.path, 'utf8'), source.path], shown: [] } : { command: [source.path], shown: [dirname(source.path)] };
}
