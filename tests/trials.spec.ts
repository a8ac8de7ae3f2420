import { readFileSync } from 'node:fs';
import { test } from '@playwright/test';
import { collect, playwright, readSummary, workspace } from './playwright-child.ts';
import { expect } from './support.ts';

const config = 'tests/fixtures/trials/playwright.config.ts';

// A child run on a loaded machine.
test.describe.configure({ timeout: 300_000 });

const bodyOf = (attachment: { body: string }) => Buffer.from(attachment.body, 'base64').toString('utf8');

test('harness.trials(): trials in flight at once in one worker, each a run of its own, counted as planned, each command agent’s stderr beside its own record', async () => {
  const { env } = workspace('harness-eval-trials-');
  const child = await playwright(['test', '-c', config], env);
  expect(child.code, child.stdout).toBe(0);
  const results = collect(JSON.parse(readFileSync(env.JSON_OUT, 'utf8')));
  const byTitle = (title: string) => results.find((result) => result.title === title)!.result;

  // Three runs waited on the endpoint at once, from one worker.
  const inFlight = byTitle('three trials at once, each in a context of its own').attachments.find((a: { name: string }) => a.name === 'in-flight.json');
  expect(JSON.parse(bodyOf(inFlight))).toEqual({ maxInFlight: 3 });
  expect(new Set(results.map(({ result }) => result.workerIndex)).size).toBeLessThanOrEqual(2);

  // Each trial is a run of its own test, numbered, and the summary plans every one.
  const summary = readSummary(env.REPORT_DIR);
  expect(summary).toMatchObject({ complete: true, planned: 9, recorded: 9, missing: [] });

  // Attached one pair at a time: each stderr just before its own run's record, which the reporter pairs them by.
  const attachments: Array<{ name: string; body: string }> = byTitle('four command agents at once, each run with its own stderr').attachments;
  const pairs = attachments.flatMap((attachment, index) => (attachment.name === 'agent-stderr.txt' ? [[attachment, attachments[index + 1]!] as const] : []));
  expect(pairs).toHaveLength(4);
  for (const [stderr, record] of pairs) {
    expect(record.name).toBe('harness-run.json');
    const token = /token (\S+)/.exec(bodyOf(stderr))![1];
    expect(JSON.parse(bodyOf(record)).summary).toBe(`token ${token}`);
  }
  expect(new Set(pairs.map(([, record]) => JSON.parse(bodyOf(record)).test.run))).toEqual(new Set([1, 2, 3, 4]));
});
