#!/usr/bin/env node
// npm's postinstall. Installed as a dependency, it never fails the user's install: it says what is
// missing and exits 0 (running the tests then says it again). In this repository, a missing
// Chromium fails `npm install`.
import { importEntry } from './entry.js';

const dependency = import.meta.url.includes('/node_modules/');
try {
  const { ensureChromium } = await importEntry('ensure-chromium');
  const code = ensureChromium();
  process.exitCode = dependency ? 0 : code;
} catch (error) {
  console.error(`harness-eval: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = dependency ? 0 : 1;
}
