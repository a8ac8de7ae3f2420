#!/usr/bin/env node
// The CLI is TypeScript run through tsx, so the package ships no build step.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/cli/main.ts');
process.exitCode = await main(process.argv.slice(2));
