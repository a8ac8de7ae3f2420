import { expect, test } from '@playwright/test';
import { upvoteFirstPost } from '../src/eval/tasks.ts';
import { evaluateHarness } from '../src/playwright/evaluate.ts';
import { recordedHn } from '../src/sites/hn/site.ts';

test('guardrails + verify + login: the same prompt now succeeds for real', async ({ context }) => {
  const run = await evaluateHarness({
    context,
    site: recordedHn(),
    model: 'scripted:overclaimer',
    layers: ['guardrails', 'verify', 'login'],
    task: upvoteFirstPost,
  });
  expect(run).toMatchObject({ claimed: true, actual: true, falseSuccess: false, stopReason: 'finished' });
  expect(run.iterations).toBeLessThanOrEqual(8);
  expect(run.trace.some((event) => event.type === 'harness_auto_login' && event.ok)).toBe(true);
});
