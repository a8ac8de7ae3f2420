import { expect, test } from '@playwright/test';
import { upvoteFirstPost } from '../src/eval/tasks.ts';
import { evaluateHarness } from '../src/playwright/evaluate.ts';
import { recordedHn } from '../src/sites/hn/site.ts';

test('no layers: the overclaimer hits the login wall and claims success anyway (a false success)', async ({ context }) => {
  const run = await evaluateHarness({ context, site: recordedHn(), model: 'scripted:overclaimer', layers: [], task: upvoteFirstPost });
  expect(run).toMatchObject({ claimed: true, actual: false, falseSuccess: true, stopReason: 'finished' });
});
