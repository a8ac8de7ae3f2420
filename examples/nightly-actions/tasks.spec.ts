import { cells, expect, hn, test } from 'harness-eval';
import { nightlyCells } from './cells.ts';

// Measured in every cell (model × layer stack), each a describe block of one project: a worker
// serves any cell, where a project per cell would start a worker and a browser for each. The
// reporter turns the runs into rates and gates the verified stack at no false success. The test
// only asks that the harness ran and the oracle judged.
for (const cell of cells(nightlyCells)) {
  test.describe(cell.name, () => {
    test.use(cell.use);
    test('upvote the first post', async ({ harness }) => {
      const run = await harness.run(hn.tasks.upvoteFirstPost);
      expect(run.stopReason).not.toBe('error');
      expect(run.verdicts).toHaveLength(1);
    });
  });
}
