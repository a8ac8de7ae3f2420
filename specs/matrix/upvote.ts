import { expect, hn, test } from 'harness-eval';

/**
 * The matrix's test, measured in every cell (model × layer stack × site), whether the cells are
 * projects (upvote-first-post.spec.ts) or `test.describe` blocks of one project (specs/cells/).
 * The reporter turns the runs into rates and holds the gated stacks to no false success; the test
 * itself only asks that the harness ran and the oracle judged.
 */
export function upvoteFirstPostTest(): void {
  test('upvote the first Hacker News post', async ({ harness }) => {
    const run = await harness.run(hn.tasks.upvoteFirstPost);
    expect(run.stopReason).not.toBe('error');
    expect(run.verdicts).toHaveLength(1);
  });
}
