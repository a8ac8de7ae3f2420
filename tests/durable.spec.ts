import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from '@playwright/test';
import type { RunRecord } from '../src/playwright/evaluate.ts';
import { resolveLayers } from '../src/layers/index.ts';
import { expect } from './support.ts';

test.describe.configure({ timeout: 120_000 });

function phase(name: 'first' | 'resume', scenario: string, dir: string): Promise<{ code: number | null; stdout: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'tests/fixtures/durable/run.ts', name, scenario, join(dir, 'run.json'), join(dir, 'site.json')], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let stdout = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, stdout })));
}

test('a run killed mid-way resumes in a new process from its last durable step', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'harness-eval-durable-'));
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
  expect(calls).toEqual(['navigate', 'get_stories', 'click', 'navigate', 'click', 'finish']);
  expect(existsSync(join(dir, 'run.json'))).toBe(false);
});

test('an action cut short while waiting (an unapproved vote) is not replayed on resume', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'harness-eval-durable-'));
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

test('durable needs a file', () => {
  expect(() => resolveLayers([['durable', {}]])).toThrow(/^layer durable: file: /);
});
