import { readFileSync } from 'node:fs';
import { test } from '@playwright/test';
import { HARNESS_RUN_ATTACHMENT, HARNESS_RUN_START_ATTACHMENT } from '../src/playwright/fixtures.ts';
import { collect, playwright, readSummary, workspace } from './playwright-child.ts';
import { expect } from './support.ts';

/**
 * A typo in what a task names (issue 33, item 3) through the fixture and the reporter
 * (tests/fixtures/typo/): its test fails in one line naming the builder, the field and the value,
 * and no run is started or recorded; the same missing target on a task declared infeasible is a run.
 */
test.describe.configure({ timeout: 300_000 });

test('a postcondition on a story the site does not have fails its test in one line, before any run; declared infeasible, it is a run', async () => {
  const { dir, env } = workspace('harness-eval-typo-');
  const child = await playwright(['test', '-c', 'tests/fixtures/typo/playwright.config.ts'], env);
  const results = collect(JSON.parse(readFileSync(env.JSON_OUT, 'utf8')));
  const of = (title: string) => results.find((entry) => entry.title.startsWith(title))!.result;
  const names = (result: { attachments: Array<{ name: string }> }) => result.attachments.map((attachment) => attachment.name);

  const typo = of('upvote the story ranked 999');
  expect(typo.status, child.stdout).toBe('failed');
  expect(typo.errors.map((error: { message?: string }) => error.message ?? '').join('\n')).toBe('InputError: hn.upvoted({ rank: 999 }): no story at rank 999 at the start (60 stories, ranks 1 to 60)');
  expect(names(typo)).not.toContain(HARNESS_RUN_START_ATTACHMENT);
  expect(names(typo)).not.toContain(HARNESS_RUN_ATTACHMENT);

  const infeasible = of('favorite a story that was never posted');
  expect(infeasible.status, child.stdout).toBe('passed');
  expect(names(infeasible)).toContain(HARNESS_RUN_ATTACHMENT);

  // Only the infeasible task's run is counted.
  expect(readSummary(`${dir}/reports`)).toMatchObject({ recorded: 1, totals: { runs: 1 } });
  expect(child.stdout).toContain('hn.upvoted({ rank: 999 }): no story at rank 999');
  expect(child.stdout).not.toMatch(/^\s+at .*(targets|evaluate|tasks)\.ts/m);
});
