import { expect, test } from '@playwright/test';
import { upvoteFirstPost } from '../src/eval/tasks.ts';
import { evaluateHarness } from '../src/playwright/evaluate.ts';
import { recordedHn } from '../src/sites/hn/site.ts';

test('guardrails + verify: the same claim is caught, a truthful failure', async ({ context }) => {
  const run = await evaluateHarness({ context, site: recordedHn(), model: 'scripted:overclaimer', layers: ['guardrails', 'verify'], task: upvoteFirstPost });
  expect(run).toMatchObject({ claimed: false, actual: false, falseSuccess: false, stopReason: 'finished' });
  expect(run.trace.some((event) => event.type === 'harness_verification' && !event.ok)).toBe(true);
});
