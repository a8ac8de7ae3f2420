import { cells, test } from 'harness-eval';
import { mainMatrix } from '../matrix/cells.ts';
import { upvoteFirstPostTest } from '../matrix/upvote.ts';

// The main job's matrix, each cell a describe block of one project: one worker per core runs them all.
for (const cell of cells(mainMatrix)) {
  test.describe(cell.name, () => {
    test.use(cell.use);
    upvoteFirstPostTest();
  });
}
