import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from '@playwright/test';
import { upvoteFirstPost } from '../src/sites/hn/suite.ts';
import { HARD_MAX_ITERATIONS } from '../src/harness/loop.ts';
import { evaluate } from '../src/eval/evaluate.ts';
import type { RunRecord } from '../src/core/run.ts';
import { recordedHn } from '../src/sites/hn/site.ts';
import { expect } from './support.ts';

test.describe.configure({ timeout: 120_000 });

/** The test's own folder in its output folder: nothing is left in the system's temporary folder. */
function testFolder(): string {
  const dir = test.info().outputPath('durable');
  mkdirSync(dir, { recursive: true });
  return dir;
}

function phase(name: 'first' | 'resume', scenario: string, dir: string): Promise<{ code: number | null; stdout: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'tests/fixtures/durable/run.ts', name, scenario, join(dir, 'run.json'), join(dir, 'site.json')], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let stdout = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, stdout })));
}

test('a run killed mid-way resumes in a new process from its last durable step', async () => {
  const dir = testFolder();
  const first = await phase('first', 'classic', dir);
  expect(first.code).toBe(9);
  expect(existsSync(join(dir, 'run.json'))).toBe(true);

  const resumed = await phase('resume', 'classic', dir);
  expect(resumed.code).toBe(0);
  const run = JSON.parse(resumed.stdout) as RunRecord;
  expect(run).toMatchObject({ claimed: true, actual: true, stopReason: 'finished', iterations: 6 });
  const resume = run.trace.find((event) => event.type === 'harness_resume');
  expect(resume).toMatchObject({ fromStep: 3 });
  // The three steps of the first process are in the trace once, then the rest.
  const calls = run.trace.filter((event) => event.type === 'tool_call').map((event) => event.type === 'tool_call' && event.name);
  expect(calls).toEqual(['navigate', 'get_stories', 'click', 'sign_in', 'navigate', 'click', 'finish']);
  expect(existsSync(join(dir, 'run.json'))).toBe(false);
});

test('an action cut short while waiting (an unapproved vote) is not replayed on resume', async () => {
  const dir = testFolder();
  expect((await phase('first', 'vote-waits', dir)).code).toBe(9);
  const resumed = await phase('resume', 'vote-waits', dir);
  expect(resumed.code).toBe(0);
  const run = JSON.parse(resumed.stdout) as RunRecord;
  expect(run).toMatchObject({ claimed: false, actual: false, summary: 'resumed and gave up' });
  expect(run.trace.filter((event) => event.type === 'tool_result').map((event) => event.type === 'tool_result' && event.name)).toEqual(['navigate', 'get_stories', 'finish']);
  // The site kept no vote: it writes its state file only when something changes.
  const siteFile = join(dir, 'site.json');
  expect(existsSync(siteFile) ? JSON.parse(readFileSync(siteFile, 'utf8')).votes : {}).toEqual({});
});

test('a resumed run is judged from the site as it was when the run first started, not when it resumed', async () => {
  const dir = testFolder();
  expect((await phase('first', 'vote-then-die', dir)).code).toBe(9);
  // The vote landed before the crash: the site's state file holds it when the run resumes.
  expect(Object.values(JSON.parse(readFileSync(join(dir, 'site.json'), 'utf8')).votes)).toEqual([[expect.any(String)]]);
  const resumed = await phase('resume', 'vote-then-die', dir);
  expect(resumed.code).toBe(0);
  const run = JSON.parse(resumed.stdout) as RunRecord;
  expect(run).toMatchObject({ claimed: true, actual: true, falseSuccess: false, sideEffects: [] });
});

test.describe('a checkpoint that parses but cannot be true is rejected in one line naming the field', () => {
  const valid = { attempt: 1, iterations: 3, attemptIterations: 3, tokens: { input: 900, output: 60 }, messages: [], trace: [] };
  const impossible: Array<[string, object, RegExp]> = [
    ['iterations past the hard cap', { iterations: 400 }, new RegExp(`run\\.iterations: 400 is past the hard cap of ${HARD_MAX_ITERATIONS} per attempt`)],
    ['an attempt past the hard cap', { iterations: 80, attemptIterations: 80 }, /run\.attemptIterations: Too big/],
    ['tokens no run could reach', { tokens: { input: 9e12, output: 60 } }, /run\.tokens\.input: 9000000000000 is more than 3 model calls could use/],
    ['more iterations in the attempt than in the run', { attemptIterations: 5 }, /run\.attemptIterations: 5 is more than the run's 3 iterations/],
    ['iterations in no attempt', { attempt: 0 }, /run\.attempt: 0, yet the run has 3 iterations/],
    ['a negative token count', { tokens: { input: -5, output: 60 } }, /run\.tokens\.input: Too small/],
  ];
  for (const [name, change, message] of impossible) {
    test(name, async ({ context }) => {
      const file = join(testFolder(), 'run.json');
      const saved = { version: 1, task: upvoteFirstPost.prompt, model: 'scripted:diligent', url: 'about:blank', cookies: [], run: { ...valid, ...change } };
      writeFileSync(file, JSON.stringify(saved));
      const run = evaluate({ context, site: recordedHn(), model: 'scripted:diligent', layers: [['durable', { file }]], task: upvoteFirstPost });
      const error = await run.then(() => undefined, (caught: unknown) => caught as Error);
      expect(error?.name).toBe('InputError');
      expect(error?.message).toMatch(message);
      expect(error?.message.split('\n')).toHaveLength(1);
    });
  }

  test('the same checkpoint with possible values resumes', async ({ context }) => {
    const file = join(testFolder(), 'run.json');
    writeFileSync(file, JSON.stringify({ version: 1, task: upvoteFirstPost.prompt, model: 'scripted:diligent', url: 'about:blank', cookies: [], run: valid }));
    const result = await evaluate({ context, site: recordedHn(), model: 'scripted:diligent', layers: [['durable', { file }]], task: upvoteFirstPost });
    expect(result.trace.find((event) => event.type === 'harness_resume')).toMatchObject({ fromStep: 3 });
  });
});
