import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from '@playwright/test';
import { collect, playwright, readSummary, workspace } from './playwright-child.ts';
import { expect } from './support.ts';

/**
 * A task that does not apply to the site, in a child run (tests/fixtures/suite-harness): skipped
 * with its reason and never counted. Apart from tests/suite-harness.spec.ts, whose tests start no
 * child, so they run beside the other tests instead of in the child runs' one-worker lane.
 */

test('a task that does not apply to the site is skipped with its reason, and never counted', async () => {
  const { env } = workspace('harness-eval-applicability-');
  const child = await playwright(['test', '-c', 'tests/fixtures/suite-harness/playwright.config.ts'], env);
  expect(child.code, child.stdout.slice(-4000)).toBe(0);
  const results = collect(JSON.parse(readFileSync(env.JSON_OUT, 'utf8')) as { suites: unknown[] });
  const skipped = results.find((result) => result.title === 'a task that does not apply to this capture')!;
  expect(skipped.result.status).toBe('skipped');
  expect(skipped.result.annotations).toContainEqual({ type: 'skip', description: 'not applicable: reply-to-top-comment on hn-recorded: the capture has no comments', location: expect.anything() });
  const summary = readSummary(env.REPORT_DIR);
  expect(summary).toMatchObject({ planned: 1, recorded: 1, complete: true });
  expect(summary.cells.map((cell) => cell.task)).toEqual(['upvote-first-post']);
  const reason = 'not applicable: reply-to-top-comment on hn-recorded: the capture has no comments';
  expect(summary.notApplicable).toEqual([
    { id: expect.any(String), title: 'a task that does not apply to this capture', project: 'nop · scripted:diligent', reason },
    // On a capture of its own, the reason names the cell's site, as the cell does: not the kit's instance it was made from.
    { id: expect.any(String), title: 'on a capture of its own › a task that does not apply to a named capture', project: 'nop · scripted:diligent', reason: reason.replace('hn-recorded', 'front-2025-euske-lofi') },
  ]);
  expect(readFileSync(join(env.REPORT_DIR, 'summary.md'), 'utf8')).toContain(`n/a: a task that does not apply to this capture (nop · scripted:diligent): ${reason}`);
  expect(child.stdout).toContain('not applicable: reply-to-top-comment on hn-recorded: the capture has no comments');
});
