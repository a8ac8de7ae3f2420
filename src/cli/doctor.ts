/**
 * `harness-eval doctor`: what this machine offers, one line each: Chromium and its headless shell,
 * bubblewrap and whether it makes a sandbox here, socat, the seccomp filter's builder, the agent's
 * identity, the limits, how a run's memory in total is held, and what a command agent gets. Exits 0 only when `sandbox: 'required'`
 * would work: every required part there, and the sandbox's own probe passes.
 */
import { sandboxUnavailable } from '../agents/sandbox.ts';
import { cgroupParent } from '../agents/sandbox-cgroup.ts';
import { currentLimits, fixPhrase, systemParts, thisMachine, type Machine, type Part, type PartName } from './system.ts';

/** What a missing part's line ends with: why, and the command. */
function missing(part: Part): string {
  return `missing (${part.detail}); ${fixPhrase(part)}`;
}

function described(part: Part): string {
  if (part.status === 'missing') return missing(part);
  if (part.status === 'unneeded') return `not used (${part.detail})`;
  return [part.path, part.detail].filter(Boolean).join(', ');
}

/** The lines doctor prints, and whether `sandbox: 'required'` would work. */
export function doctorReport(machine: Machine = thisMachine()): { lines: string[]; ok: boolean } {
  const parts = systemParts(machine);
  const part = (name: PartName) => parts.find((each) => each.name === name)!;
  const unavailable = sandboxUnavailable();
  const bwrap = part('bubblewrap');
  const setpriv = part('setpriv');
  const prlimit = part('prlimit');
  const limits = currentLimits()
    .map(({ name, soft, hard }) => `${name === 'Max processes' ? 'nproc' : 'nofile'} ${soft}${hard === soft ? '' : ` (hard ${hard})`}`)
    .join(', ');
  const identity = !machine.linux
    ? described(setpriv)
    : machine.root
      ? setpriv.status === 'found'
        ? `an unprivileged uid for the agent (root, with setpriv ${setpriv.path})`
        : `${missing(setpriv)} (as root the agent must not keep uid 0)`
      : `the worker's own uid (${process.getuid?.()}): not root, so setpriv is not used`;
  const cgroup = cgroupParent();
  const total =
    'parent' in cgroup
      ? `cgroup v2: each run's memory.max and pids.max, in ${cgroup.parent}`
      : `measured: the sandbox's watcher sums the run's resident memory every 500 ms and ends it past its limit (no cgroup v2 for runs here: ${cgroup.why})`;
  const rows: Array<[string, string]> = [
    ['chromium', described(part('chromium'))],
    ['headless shell', described(part('headless shell'))],
    ['bubblewrap', bwrap.status === 'found' ? `${described(bwrap)}; ${unavailable ? `makes no sandbox here: ${unavailable}` : 'makes a sandbox here'}` : described(bwrap)],
    ['socat', described(part('socat'))],
    ['seccomp', described(part('seccomp'))],
    ['identity', identity],
    ['limits', `${prlimit.status === 'found' ? `prlimit ${prlimit.path}` : `prlimit ${described(prlimit)}`}${limits ? `; now ${limits}` : ''}`],
    ['memory in total', total],
    ['command agents', unavailable ? `not contained: ${unavailable} (sandbox: 'auto' runs them uncontained, 'required' refuses to run them)` : 'contained'],
  ];
  const width = Math.max(...rows.map(([name]) => name.length)) + 2;
  const ok = unavailable === undefined && !parts.some((each) => each.required && each.status === 'missing');
  return { lines: rows.map(([name, text]) => `${`${name}:`.padEnd(width)}${text}`), ok };
}

export function doctor(): number {
  const { lines, ok } = doctorReport();
  for (const line of lines) console.log(line);
  console.log(ok ? "sandbox: 'required' works here" : "sandbox: 'required' does not work here");
  return ok ? 0 : 1;
}
