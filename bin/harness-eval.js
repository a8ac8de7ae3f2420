#!/usr/bin/env node
import { importEntry } from './entry.js';

const { main } = await importEntry('main');
process.exitCode = await main(process.argv.slice(2));
