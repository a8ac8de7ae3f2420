import { mkdtempSync } from 'node:fs';
import { test } from '@playwright/test';
import { playwright } from './playwright-child.ts';
import { expect } from './support.ts';

/**
 * `npm test` on a machine where a part is missing (tests/global-setup.ts): the run stops in one
 * line naming the part and the command to run, before any test starts, and fails.
 */
test('npm test with a part missing: one line naming it and the command, and no test runs', async () => {
  const cases: Array<{ env: Record<string, string>; line: string }> = [
    { env: { HARNESS_BWRAP: '/nowhere/bwrap' }, line: 'harness-eval: missing bubblewrap (bwrap), for the command agents\u2019 sandbox: HARNESS_BWRAP=/nowhere/bwrap is not an executable file; run `unset HARNESS_BWRAP`, or point HARNESS_BWRAP at a bwrap' },
    { env: { CHROMIUM_PATH: '/nowhere/chromium' }, line: 'harness-eval: missing Chromium, for the browser every run drives: CHROMIUM_PATH: no file at /nowhere/chromium; run `unset CHROMIUM_PATH`, or point CHROMIUM_PATH at a Chromium executable' },
    {
      env: { HARNESS_SOCAT: '/nowhere/socat', HARNESS_SECCOMP_PYTHON: '/nowhere/python3' },
      line:
        'harness-eval: missing socat (HARNESS_SOCAT=/nowhere/socat is not an executable file), the seccomp filter builder (/nowhere/python3: ENOENT); socat: run `unset HARNESS_SOCAT`; the seccomp filter builder: run `unset HARNESS_SECCOMP_PYTHON`',
    },
  ];
  for (const { env, line } of cases) {
    // Its own output folder: a child of `-c tests` must not clear this run's.
    const output = mkdtempSync(test.info().outputPath('child-'));
    const child = await playwright(['test', '-c', 'tests', 'names.spec.ts', '--output', output], { ...env, HARNESS_EVAL_NO_APT: '1' });
    const lines = child.stdout.trim().split('\n').filter((text) => text.trim() !== '');
    expect(lines, child.stdout).toHaveLength(1);
    expect(lines[0]).toContain(line);
    expect(lines[0]).toContain('`npx harness-eval doctor` says more');
    expect(child.code).toBe(1);
  }
});
