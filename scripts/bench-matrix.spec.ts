import { cells, test } from 'harness-eval';
import { benchMatrix } from '../specs/matrix/cells.ts';
import { upvoteFirstPostTest } from '../specs/matrix/upvote.ts';

// bench:matrix's cells as describe blocks of one project (scripts/bench-matrix.config.ts).
for (const cell of cells(benchMatrix)) {
  test.describe(cell.name, () => {
    test.use(cell.use);
    upvoteFirstPostTest();
  });
}
