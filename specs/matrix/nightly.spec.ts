import { cells, test } from 'harness-eval';
import { nightlyMatrix } from './cells.ts';
import { upvoteFirstPostTest } from './upvote.ts';

// playwright.nightly.config.ts's cells, each a describe block of its one project: a worker serves
// any cell, where a project per cell started a worker and a browser per cell and repeat index.
for (const cell of cells(nightlyMatrix())) {
  test.describe(cell.name, () => {
    test.use(cell.use);
    upvoteFirstPostTest();
  });
}
