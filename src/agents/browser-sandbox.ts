import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Containment } from '../core/agent.ts';
import { containmentSwitch } from '../reach.ts';
import { bwrapPath, isolation, sandboxUnavailable, shellQuote, unreachable } from './sandbox.ts';
import { asIdentity, runIdentity } from './sandbox-identity.ts';
import { ownFolder } from '../leftovers.ts';
import { DEFAULT_SANDBOX_LIMITS, rlimits, type SandboxLimits } from './sandbox-limits.ts';
import { inside, mountArgs, secretFiles } from './sandbox-mounts.ts';
import { seccompFilter } from './seccomp.ts';

/**
 * The test's own browser (what Playwright's `browser` fixture launches from `use.launchOptions`,
 * which the built-in harness's model drives) in a sandbox of its own. Here, not in
 * src/playwright/chromium.ts, which asks for it: the sandbox's parts are src/agents/'s, and
 * chromium.ts stays the small file a config loads.
 */

/** How Chromium starts inside, and what of the host it needs shown (its program's folder). */
export interface BrowserProgram {
  command: readonly string[];
  shown: readonly string[];
}

/** A browser's limits: an agent's, but for its memory (a renderer's heap may be large), threads and descriptors (every context of a worker's runs, trials at once) and its profile's room in /tmp. */
const BROWSER_LIMITS: SandboxLimits = { ...DEFAULT_SANDBOX_LIMITS, processes: 4096, memoryBytes: Infinity, openFiles: 8192, fileBytes: 64 * 1024 * 1024, tmpBytes: 512 * 1024 * 1024, shmBytes: 256 * 1024 * 1024 };

const launchers = new Map<string, { path: string; containment: Containment } | { containment: Containment }>();

/**
 * A launcher for Playwright's `executablePath` that starts `program` in bubblewrap with the layers
 * of a command agent's sandbox: as root, a uid of its own for this process (runIdentity); limits;
 * its own namespaces, the network's included (the site reaches it through Playwright's routing,
 * over the pipe Playwright launched it with: fds 3 and 4); the host read-only, its temporary
 * folders empty (Playwright's `--user-data-dir` is made afresh in them), the project (`project`)
 * an empty folder, the secret files of every folder above it masked; the seccomp filter;
 * `--die-with-parent`. Where no sandbox runs here (no bwrap; the program out of the uid's reach),
 * nothing to launch, and the containment says why. Written once per process and program.
 */
export function sandboxedBrowser(program: BrowserProgram, project = process.cwd()): { path: string; containment: Containment } | { containment: Containment } {
  const why = sandboxUnavailable() ?? program.shown.map((path) => unreachable(path, 'Chromium')).find(Boolean);
  if (why) return outside(why);
  // Written once the sandbox runs here: a part that goes missing later (HARNESS_BWRAP in a test) is asked for again above.
  const key = [...program.command, project].join('\0');
  try {
    const known = launchers.get(key) ?? launcher(program, project);
    launchers.set(key, known);
    return known;
  } catch (error) {
    return outside(`its launcher could not be written (${error instanceof Error ? error.message : String(error)})`);
  }
}

const outside = (why: string) => ({ containment: { contained: false, reason: `its browser runs outside any sandbox: ${why}` } });

function launcher({ command, shown }: BrowserProgram, project: string): { path: string; containment: Containment } | { containment: Containment } {
  const filter = seccompFilter();
  if ('error' in filter) return outside(filter.error);
  // The worker's browser lives as long as the worker: its uid is held till then, and reaped with the worker's (reapOrphans).
  const identity = runIdentity();
  const containment: Containment = {
    contained: true,
    reason: `its browser runs sandboxed as ${identity.own ? 'a uid of its own' : "the test's user"}, with no network but the site's routing, and nothing of the project's`,
  };
  // Nothing of the project: the browser needs none of it (Playwright's screenshots, traces and videos are written outside). Where the uid cannot reach it, it sees none of it already.
  const hidden = project !== '/' && !unreachable(project, 'the project');
  const decoys = secretFiles(project).filter(({ path }) => !(hidden && inside(path, project)) && !unreachable(path, 'a decoy'));
  const argv = [
    ...rlimits(BROWSER_LIMITS, identity),
    ...asIdentity(identity),
    bwrapPath(),
    ...isolation(5),
    ...mountArgs({ shown, decoys: [], own: [], tmpBytes: BROWSER_LIMITS.tmpBytes, shmBytes: BROWSER_LIMITS.shmBytes }),
    // The secret files above the project, empty: no canary is needed, as no code of the agent runs here.
    ...decoys.flatMap(({ path }) => ['--ro-bind', '/dev/null', path]),
    // Playwright's profile is made in it when the temporary folder is inside the project (CI's layout): it has the temporary folder's room.
    ...(hidden ? ['--size', String(BROWSER_LIMITS.tmpBytes), '--tmpfs', project, ...shown.filter((path) => inside(path, project)).flatMap((path) => ['--ro-bind', path, path])] : []),
    '--setenv', 'HOME', '/tmp',
    '--setenv', 'PATH', process.env.PATH ?? '/usr/bin:/bin',
    '--',
    ...command,
    containmentSwitch(containment),
  ];
  const dir = mkdtempSync(join(tmpdir(), ownFolder('browser')));
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, 'chromium');
  // Descriptors 3 and 4 are Playwright's pipe to Chromium: the filter goes above them.
  writeFileSync(path, `#!/bin/sh\nexec ${argv.map(shellQuote).join(' ')} "$@" 5<${shellQuote(filter.path)}\n`, { mode: 0o755 });
  return { path, containment };
}
