import { cells, hn, test } from 'harness-eval';
import { sampleMatrix } from '../matrix/cells.ts';
import { attemptEach, oneTaskPerTag } from './attempt.ts';

// The main job's sample of the suite: a task per tag, so every kind of task is attempted on every
// push, by each double of the sample's matrix (a describe block per cell).
for (const cell of cells(sampleMatrix)) {
  test.describe(cell.name, () => {
    test.use(cell.use);
    attemptEach(oneTaskPerTag(hn.suite));
  });
}
