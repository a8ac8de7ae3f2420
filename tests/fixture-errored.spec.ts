import { readFileSync } from 'node:fs';
import { test } from '@playwright/test';
import { HARNESS_RUN_ATTACHMENT } from '../src/playwright/fixtures.ts';
import { runRecordSchema } from '../src/report/types.ts';
import { collect, playwright, readSummary, workspace } from './playwright-child.ts';
import { expect } from './support.ts';

/**
 * A command agent whose script is not there (`python3 agents/nothere.py`, tests/fixtures/fixture/
 * errored.run.ts) in a child run. Before, its run was a truthful failure, the test passed and the
 * verdict was green. Now the run is recorded, excluded as an error, and every test of it fails:
 * a matcher, negated or not, and a test that asserts nothing.
 */
test.describe.configure({ timeout: 300_000 });

test('a run that errors before its agent did anything is recorded as an error, and its test fails whatever it asserted', async () => {
  const { dir, env } = workspace('harness-eval-errored-');
  const child = await playwright(['test', '-c', 'tests/fixtures/fixture/playwright.config.ts', 'errored.run.ts'], env);
  const results = collect(JSON.parse(readFileSync(env.JSON_OUT, 'utf8')));
  const of = (title: string) => {
    const { result } = results.find((entry) => entry.title.startsWith(title))!;
    const runs = (result.attachments as Array<{ name: string; body?: string }>).filter((attachment) => attachment.name === HARNESS_RUN_ATTACHMENT).map((attachment) => runRecordSchema.parse(JSON.parse(Buffer.from(attachment.body!, 'base64').toString())));
    return { status: result.status as string, error: (result.errors as Array<{ message?: string }>).map((error) => error.message ?? '').join('\n'), runs };
  };
  const excluded = { reason: 'error', detail: 'the run ended in error before the agent did any work (no model call answered, no request to the site): claimed nothing: exited with code 2 and wrote no claim file' };

  const matcher = of('an errored run fails a matcher that would hold');
  expect(matcher.status, child.stdout).toBe('failed');
  expect(matcher.runs).toMatchObject([{ excluded, agent: 'nothere.py', stopReason: 'error', iterations: 0 }]);
  expect(matcher.error).toContain(`expected no false success (a claimed success the oracle does not confirm)\n  excluded: error — ${excluded.detail}`);
  expect(of('an errored run fails a negated matcher').error).toContain('expected not the run to succeed');

  const silent = of('an errored run fails a test that asserts nothing');
  expect(silent.status).toBe('failed');
  expect(silent.error).toBe(`RunErrored: the run errored before its agent did anything, so it is left out of every rate: run 1: ${excluded.detail}`);

  // Counted, and in no rate: never a green verdict.
  expect(readSummary(`${dir}/reports`).totals).toMatchObject({ runs: 0, errors: 3 });
  expect(child.code).not.toBe(0);
  expect(child.stdout).not.toMatch(/✓ \d+ gates? passed/);
});
