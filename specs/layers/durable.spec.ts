import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, hn, test } from 'harness-eval';

// An interrupted run: a first process dies after its third step; this test resumes the run from
// the durable file, on the same site state, and finishes it.
const dir = mkdtempSync(join(tmpdir(), 'harness-eval-durable-spec-'));
const file = join(dir, 'run.json');
const stateFile = join(dir, 'site.json');

test.use({
  model: 'scripted:overclaimer',
  layers: ['login', 'verify', ['durable', { file }]],
  layerStack: 'login+verify+durable',
  site: hn.recorded({ stateFile }),
});

test('a run killed after step 3 resumes and succeeds', async ({ harness }) => {
  const killed = spawn(process.execPath, ['--import', 'tsx', 'tests/fixtures/durable/run.ts', 'first', 'classic', file, stateFile], { stdio: 'ignore' });
  expect(await new Promise((resolve) => killed.on('exit', resolve))).toBe(9);
  const run = await harness.run(hn.tasks.upvoteFirstPost);
  expect(run.trace.some((event) => event.type === 'harness_resume')).toBe(true);
  expect(run).toSucceed();
  expect(run).toHaveNoFalseSuccess();
});
