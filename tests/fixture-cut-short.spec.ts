import { readFileSync } from 'node:fs';
import { test } from '@playwright/test';
import { plannedRunSchema, runRecordSchema } from '../src/report/types.ts';
import { HARNESS_RUN_ATTACHMENT, HARNESS_RUN_START_ATTACHMENT } from '../src/playwright/fixtures.ts';
import { collect, playwright, readSummary, workspace } from './playwright-child.ts';
import { expect } from './support.ts';

/**
 * Runs cut short are recorded: a child run (tests/fixtures/fixture/) whose model votes, then never
 * answers, under a test timeout far shorter than the run. Each run is attached when it starts and
 * when it ends, however it ends, judged on the state it left.
 */
test.describe.configure({ timeout: 300_000 });

test('a run cut short by the test timeout or a failing test is recorded as incomplete, judged on the site it left', async () => {
  const { dir, env } = workspace('harness-eval-cut-short-');
  const child = await playwright(['test', '-c', 'tests/fixtures/fixture/playwright.config.ts', 'cut-short.run.ts'], { ...env, OPENAI_API_KEY: 'sk-fake-for-the-local-server' });
  const results = collect(JSON.parse(readFileSync(env.JSON_OUT, 'utf8')));
  const attached = (title: string, name: string) => {
    const result = results.find((entry) => entry.title.startsWith(title))!.result as { status: string; attachments: Array<{ name: string; body?: string }> };
    return { status: result.status, bodies: result.attachments.filter((entry) => entry.name === name).map((entry) => JSON.parse(Buffer.from(entry.body!, 'base64').toString())) };
  };

  const timedOut = attached('the test times out', HARNESS_RUN_ATTACHMENT);
  expect(timedOut.status, child.stdout).toBe('timedOut');
  expect(timedOut.bodies).toHaveLength(1);
  const [run] = timedOut.bodies.map((body) => runRecordSchema.parse(body));
  // The vote landed before the model stalled: not claimed, but done, and the oracle saw it.
  expect(run).toMatchObject({ incomplete: true, stopReason: 'timeout', judged: true, claimed: false, actual: true, falseFailure: true, iterations: 2 });
  expect(run!.condition).toMatchObject({ model: { id: 'openai:stalls-after-voting' }, layers: [], site: { site: 'hn-recorded', startLoggedIn: true } });

  const failed = attached('the test fails', HARNESS_RUN_ATTACHMENT);
  expect(failed.status).toBe('failed');
  expect(failed.bodies.map((body) => runRecordSchema.parse(body))).toMatchObject([{ incomplete: true, stopReason: 'error', judged: true, actual: true }]);

  const ended = attached('a run that ends', HARNESS_RUN_ATTACHMENT);
  expect(ended.bodies.map((body) => runRecordSchema.parse(body))).toMatchObject([{ incomplete: false, stopReason: 'max_iterations' }]);

  // Every run announced itself when it began, with the cell it belongs to.
  for (const title of ['the test times out', 'the test fails', 'a run that ends']) {
    const [start, ...more] = attached(title, HARNESS_RUN_START_ATTACHMENT).bodies.map((body) => plannedRunSchema.parse(body));
    expect(more).toEqual([]);
    expect(start).toMatchObject({ task: 'upvote-first-post', model: 'openai:stalls-after-voting', layers: 'bare', site: 'hn-logged-in', test: { run: 1 } });
  }

  const summary = readSummary(`${dir}/reports`);
  expect(summary.totals).toMatchObject({ runs: 3, incomplete: 2, falseFailures: 2 });
});
