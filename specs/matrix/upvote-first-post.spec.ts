import { expect, hn, test } from 'harness-eval';

// Measured in every cell of the matrix (model × layer stack × site). The reporter turns the runs
// into rates and holds the gated stacks to no false success; the test itself only asks that the
// harness ran and the oracle judged.
test('upvote the first Hacker News post', async ({ harness }) => {
  const run = await harness.run(hn.tasks.upvoteFirstPost);
  expect(run.stopReason).not.toBe('error');
  expect(run.verdicts).toHaveLength(1);
});
