import { spawn } from 'node:child_process';
import { expect, hn, test } from 'harness-eval';

// An interrupted run: a first process dies after its third step; this test resumes the run from
// the durable file, on the same site state, and finishes it. `durable` named alone saves to
// `durable.json` in the run's folder (`run-1/` in the test's output folder), so both files live
// there, and nothing is left in the system's temporary folder.
test.use({
  model: 'scripted:overclaimer',
  layers: ['login', 'verify', 'durable'],
  layerStack: 'login+verify+durable',
  site: async ({}, use, testInfo) => use(hn.recorded({ stateFile: testInfo.outputPath('site.json') })),
});

test('a run killed after step 3 resumes and succeeds', async ({ harness }, testInfo) => {
  const args = ['--import', 'tsx', 'tests/fixtures/durable/run.ts', 'first', 'classic', testInfo.outputPath('run-1', 'durable.json'), testInfo.outputPath('site.json')];
  const killed = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  killed.stderr.on('data', (chunk) => (stderr += chunk));
  expect(await new Promise((resolve) => killed.on('exit', resolve)), stderr).toBe(9);
  const run = await harness.run(hn.tasks.upvoteFirstPost);
  expect(run.trace.some((event) => event.type === 'harness_resume')).toBe(true);
  expect(run).toSucceed();
  expect(run).toHaveNoFalseSuccess();
});
