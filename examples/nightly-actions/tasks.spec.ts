import { expect, hn, test } from 'harness-eval';

// Measured in every cell (model × layer stack); the reporter turns the runs into rates and gates
// the verified stack at no false success. The test only asks that the harness ran and the oracle judged.
test('upvote the first post', async ({ harness }) => {
  const run = await harness.run(hn.tasks.upvoteFirstPost);
  expect(run.stopReason).not.toBe('error');
  expect(run.verdicts).toHaveLength(1);
});
