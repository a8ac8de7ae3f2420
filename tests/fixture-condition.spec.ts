import { readFileSync } from 'node:fs';
import { test } from '@playwright/test';
import { HARNESS_RUN_ATTACHMENT } from '../src/playwright/fixtures.ts';
import { runRecordSchema, type AttachedRunRecord } from '../src/report/types.ts';
import { collect, playwright, workspace } from './playwright-child.ts';
import { summarize } from '../src/report/summarize.ts';
import { expect, attachedRunRecord } from './support.ts';

/**
 * What a run records of what ran, in a child run of a matrix project (tests/fixtures/fixture/):
 * the model with its options, each layer with its options, the site's condition, and the name of
 * the stack that actually ran, which is the project's only when its layers are.
 */
test.describe.configure({ timeout: 180_000 });

let runs: Array<{ title: string; run: AttachedRunRecord }>;
const run = (title: string) => runs.find((entry) => entry.title === title)!.run;
/** The site as data, every default applied: what tells it from a site that differs in any of them. */
const site = {
  site: 'hn-recorded',
  capture: null,
  stateFile: null,
  startLoggedIn: false,
  account: 'harness',
  faults: { latencyMs: 0, errorRate: 0, seed: 1, markupYear: 2025, injection: { rank: 2, text: expect.stringContaining('ignore previous instructions') } },
};
const model = { id: 'scripted:diligent', temperature: 0 };
/** The project's stack: each layer with its options, every default applied. */
const verified = [
  { name: 'guardrails', options: { maxIterations: 8, maxMessages: 50, compaction: 'half' } },
  { name: 'verify', options: {} },
];

test.beforeAll(async () => {
  // A hook's own limit: describe.configure's timeout is the tests'.
  test.setTimeout(180_000);
  const { env } = workspace('harness-eval-condition-');
  const child = await playwright(['test', '-c', 'tests/fixtures/fixture/playwright.config.ts', 'condition.run.ts'], env);
  expect(child.code, child.stdout).toBe(0);
  runs = collect(JSON.parse(readFileSync(env.JSON_OUT, 'utf8'))).map(({ title, result }) => {
    const attachment = (result.attachments as Array<{ name: string; body: string }>).find((entry) => entry.name === HARNESS_RUN_ATTACHMENT)!;
    return { title, run: runRecordSchema.parse(JSON.parse(Buffer.from(attachment.body, 'base64').toString())) };
  });
});

test("a run's condition is the agent, the model, each layer, the site with their options, and the task's revision", () => {
  expect(run('under the project stack')).toMatchObject({ agent: 'harness-eval', model: 'scripted:diligent', layers: 'verified', site: 'hn-injected' });
  expect(run('under the project stack').condition).toEqual({
    agent: { name: 'harness-eval' },
    model,
    layers: verified,
    site,
    task: { revision: 1 },
  });
});

test('runs of two revisions of a task are two cells, never pooled', () => {
  // As the reporter reads them: through the run record's schema, which keeps the revision.
  const ran = (revision: number) => runRecordSchema.parse(attachedRunRecord({ condition: { agent: 'harness-eval', model: 'scripted:overclaimer', layers: 'bare', site: 'hn-recorded', task: { revision } } }));
  const cells = summarize([ran(1), ran(1), ran(2)], { complete: true }).cells;
  // Runs by revision: two of revision 1, one of revision 2.
  expect(Object.fromEntries(cells.map((cell) => [(cell.condition?.task as { revision: number }).revision, cell.runs]))).toEqual({ 1: 2, 2: 1 });
  // Named alike, the two read apart: the task's name gets the hash of its revision.
  expect(cells.map((cell) => cell.task)).toEqual([expect.stringMatching(/^upvote-first-post#[0-9a-f]{6}$/), expect.stringMatching(/^upvote-first-post#[0-9a-f]{6}$/)]);
  expect(new Set(cells.map((cell) => cell.task)).size).toBe(2);
});

test("a spec's own layers under a matrix project are filed under their own stack, not the project's", () => {
  expect(run('under the spec stack')).toMatchObject({ layers: 'guardrails', condition: { model, layers: [{ name: 'guardrails', options: { maxIterations: 3, maxMessages: 50, compaction: 'half' } }], site } });
});

test("a spec that writes the project's own stack as values runs under the project's stack and condition", () => {
  expect(run('the project stack as values')).toMatchObject({ layers: 'verified', condition: { model, layers: verified, site } });
});
