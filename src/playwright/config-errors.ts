import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TestInfo } from '@playwright/test';
import { InputError } from '../input.ts';
import { LEDGER_ENV } from './cost.ts';

/**
 * A config error (a test's options: `prices`, `maxCost`, `layers`, an agent whose program is not
 * there) is the same for every test run with those options. As a failing `beforeAll` does in
 * Playwright, it fails one test, with its one line, and every other test that meets it is skipped,
 * pointing at that test: one error, one line, one failure, and each test of the file still listed.
 * Across workers through the run's folder (cost.ts: the reporter's, or sharedBrowser()'s); without
 * one, once per worker.
 */

/** How a skipped test's reason begins when another test failed with its config error. */
export const CONFIG_ERROR = 'the same config error as the failed test ';

/** The test that failed with each error line in this worker (by id, and as a person reads it): when there is no run folder to share them through. */
const raised = new Map<string, string>();

/** Runs `check`; an InputError it throws fails this test if it is the first to meet it (or its retry), else skips it. */
export async function checkedOnce<T>(testInfo: TestInfo, check: () => T | Promise<T>): Promise<T> {
  try {
    return await check();
  } catch (error) {
    if (!(error instanceof InputError)) throw error;
    const failed = firstToMeet(error.message, `${testInfo.testId}\n${testTitle(testInfo)}`);
    if (failed === undefined) throw error;
    testInfo.skip(true, `${CONFIG_ERROR}"${failed}"`);
    throw error;
  }
}

/** `describe › title (project)`: as the reporter names a test. */
function testTitle(testInfo: TestInfo): string {
  const title = testInfo.titlePath.slice(1).join(' › ');
  return testInfo.project.name ? `${title} (${testInfo.project.name})` : title;
}

/**
 * Undefined when this test (`id\ntitle`) is the one that fails with `line`: the first to claim it,
 * run-wide when the run has a folder; else the title of the test that does.
 */
function firstToMeet(line: string, test: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const dir = env[LEDGER_ENV];
  let first: string;
  if (!dir) first = raised.get(line) ?? (raised.set(line, test), test);
  else {
    const errors = join(dir, 'config-errors');
    mkdirSync(errors, { recursive: true });
    const file = join(errors, createHash('sha256').update(line).digest('hex'));
    try {
      // Made once (wx): of workers meeting it together, one makes it.
      writeFileSync(file, test, { flag: 'wx' });
      first = test;
    } catch {
      first = readFileSync(file, 'utf8');
    }
  }
  // Its own retry fails again: the error is still there.
  const [id, title = 'another test'] = first.split('\n');
  return id === test.split('\n')[0] ? undefined : title;
}
