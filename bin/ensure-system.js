#!/usr/bin/env node
// npm's postinstall: makes sure of Chromium and the command agents' sandbox (src/cli/system.ts),
// installing what it can, else one line per missing part with the command to run. It never fails
// an install, in this repository or as a dependency (`npm test` and `harness-eval doctor` say it
// again). With --strict (.ci/run's system stage), it exits 1 when a required part is still missing.
import { importEntry } from './entry.js';

const strict = process.argv.includes('--strict');
try {
  const { ensureSystem } = await importEntry('ensure-system');
  const code = ensureSystem();
  process.exitCode = strict ? code : 0;
} catch (error) {
  console.error(`harness-eval: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = strict ? 1 : 0;
}
