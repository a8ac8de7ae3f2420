import { readFileSync } from 'node:fs';
import { test } from '@playwright/test';
import { HARNESS_RUN_ATTACHMENT, HARNESS_RUN_START_ATTACHMENT, HARNESS_RUN_VOID_ATTACHMENT } from '../src/playwright/fixtures.ts';
import { collect, playwright, readSummary, workspace } from './playwright-child.ts';
import { expect } from './support.ts';

/**
 * Bad input met by the fixture (tests/fixtures/bad-input/): each test fails with one line naming
 * what is wrong, no run is recorded for it, and the reporter counts none (not even an incomplete
 * one, as it did for a corrupt checkpoint met after the run's start was announced).
 */
test.describe.configure({ timeout: 300_000 });

test('bad input met by harness.run() fails its test in one line and is never counted as a run', async () => {
  const { dir, env } = workspace('harness-eval-bad-input-');
  const child = await playwright(['test', '-c', 'tests/fixtures/bad-input/playwright.config.ts', 'bad-input.run.ts'], env);
  const results = collect(JSON.parse(readFileSync(env.JSON_OUT, 'utf8')));
  const of = (title: string) => {
    const { result } = results.find((entry) => entry.title.startsWith(title))!;
    const names = (result.attachments as Array<{ name: string }>).map((attachment) => attachment.name);
    return { status: result.status as string, message: (result.errors as Array<{ message?: string }>).map((error) => error.message ?? '').join('\n'), names };
  };

  const durable = of('a corrupt checkpoint');
  const expected: Array<[ReturnType<typeof of>, RegExp]> = [
    [durable, /^InputError: .*corrupt-durable\.json: not a JSON object \(a corrupt durable checkpoint: delete it, and the run starts afresh\)$/],
    [of('a program gone'), /^InputError: commandAgent: .*\/agents\/gone\.sh: no such file$/],
    [of('a program that cannot start'), /^InputError: commandAgent: .*\/agents\/no-interpreter\.sh: cannot start \(ENOENT: the interpreter its #! line names is not there\)$/],
    [of('a task with an empty prompt'), /^InputError: task upvote-first-post: prompt: Too small: expected string to have >=1 characters$/],
    [of('a request with a wrong type'), /^InputError: harness\.run\(\): maxIterations: Invalid input: expected number, received string$/],
  ];
  for (const [result, message] of expected) {
    expect(result.status, child.stdout).toBe('failed');
    expect(result.message.split('\n')[0]).toMatch(message);
    expect(result.names).not.toContain(HARNESS_RUN_ATTACHMENT);
  }
  // The checkpoint is read once the run has started: its start is taken back.
  expect(durable.names).toEqual(expect.arrayContaining([HARNESS_RUN_START_ATTACHMENT, HARNESS_RUN_VOID_ATTACHMENT]));
  expect(of('a program that cannot start').names).toEqual(expect.arrayContaining([HARNESS_RUN_START_ATTACHMENT, HARNESS_RUN_VOID_ATTACHMENT]));

  const twice = of('a second run started while the first goes on');
  expect(twice.status, child.stdout).toBe('passed');
  expect(twice.names.filter((name) => name === HARNESS_RUN_ATTACHMENT)).toHaveLength(1);

  // Only the one run that ran is counted: no incomplete run stands in for any failed test.
  const summary = readSummary(`${dir}/reports`);
  expect(summary.recorded).toBe(1);
  expect(summary.totals).toMatchObject({ runs: 1, incomplete: 0 });
  // The console says what is wrong in one line, with no stack.
  expect(child.stdout).toContain('corrupt-durable.json: not a JSON object');
  expect(child.stdout).not.toMatch(/^\s+at .*(fixtures|evaluate|durable)\.ts/m);
});
