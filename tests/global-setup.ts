import { sandboxUnavailable } from '../src/agents/sandbox.ts';
import { missingSummary, systemParts, thisMachine, unskipped } from '../src/cli/system.ts';

/**
 * `npm test`'s check before any test starts: a required part of the machine that is missing
 * (src/cli/system.ts: Chromium, bubblewrap, socat, the seccomp builder, setpriv as root, prlimit)
 * or a sandbox that cannot run here fails the run in one line naming it and the command to run,
 * rather than as every browser or sandbox test failing. HARNESS_EVAL_SKIP_BROWSER=1 and
 * HARNESS_EVAL_SKIP_SYSTEM=1 skip their parts, as at install.
 */
export default function checkMachine(): void {
  const machine = thisMachine();
  const missing = unskipped(systemParts(machine), machine.env).filter((part) => part.required && part.status === 'missing');
  if (missing.length > 0) fail(`${missingSummary(missing, machine)} (\`npx harness-eval doctor\` says more)`);
  if (machine.env.HARNESS_EVAL_SKIP_SYSTEM === '1') return;
  const unavailable = sandboxUnavailable();
  if (unavailable) fail(`harness-eval: command agents cannot be sandboxed here: ${unavailable} (\`npx harness-eval doctor\` says more)`);
}

/** An error Playwright prints as its one line: no stack under it. */
function fail(line: string): never {
  const error = new Error(line);
  error.stack = line;
  throw error;
}
