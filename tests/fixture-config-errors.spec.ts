import { readFileSync } from 'node:fs';
import { test } from '@playwright/test';
import { CONFIG_ERROR } from '../src/playwright/config-errors.ts';
import { collect, playwright, workspace } from './playwright-child.ts';
import { expect } from './support.ts';

/**
 * One config error, one line (tests/fixtures/config-errors/): it fails one test of those it
 * concerns, in one line, and the others are listed, skipped, pointing at that test, across two
 * workers. A file that names a command agent whose program is not there keeps its tests. Before,
 * `maxCost` over an offline double failed every test (a double needs no price),
 * `commandAgent(['python4', …])` threw when the file was collected ("No tests found"), and a
 * misspelt option (`use: { modle }`) was ignored: the runs measured the default model.
 */
test.describe.configure({ timeout: 300_000 });

test('a config error fails one test in one line, the others skipped and listed; a budget over a double needs no price', async () => {
  const { env } = workspace('harness-eval-config-errors-');
  const child = await playwright(['test', '-c', 'tests/fixtures/config-errors/playwright.config.ts'], { ...env, OPENAI_API_KEY: 'sk-fake-never-called' });
  const results = collect(JSON.parse(readFileSync(env.JSON_OUT, 'utf8')));
  const of = (project: string) =>
    results
      .filter((entry) => entry.project === project)
      .map(({ result }) => ({
        status: result.status as string,
        error: (result.errors as Array<{ message?: string }>).map((error) => error.message ?? '').join('\n'),
        skip: (result.annotations as Array<{ type: string; description?: string }>).find((note) => note.type === 'skip')?.description,
      }));

  // An offline double costs nothing: a budget over it needs no price, and its runs go on.
  expect(of('double-budget').map((result) => result.status), child.stdout).toEqual(['passed', 'passed', 'passed']);

  // The user's own option, set in use, is theirs: no typo.
  expect(of('own-option').map((result) => result.status), child.stdout).toEqual(['passed']);

  for (const [project, line] of [
    ['unpriced-budget', "maxCost: openai:gpt-4o-mini has no price in prices (a budget counts every run's cost)"],
    ['missing-program', 'commandAgent: python4: command not found'],
    // A misspelt option, in the config's use or a file's test.use(): Playwright alone ignores it.
    ['misspelt-option', "use.modle: not an option of Playwright, harness-eval or the test's fixtures; did you mean model?"],
    ['misspelt-in-file', "test.use() at misspelt.run.ts:5: layerz: not an option of Playwright, harness-eval or the test's fixtures; did you mean layers?"],
  ] as const) {
    const tests = of(project);
    // Every test of the file is there: one failed with the line, the rest skipped, pointing at it.
    expect(tests, child.stdout).toHaveLength(3);
    const failed = tests.filter((result) => result.status === 'failed');
    expect(failed.map((result) => result.error), child.stdout).toEqual([`InputError: ${line}`]);
    const skipped = tests.filter((result) => result.status === 'skipped');
    expect(skipped).toHaveLength(2);
    for (const result of skipped) expect(result.skip).toMatch(new RegExp(`^${CONFIG_ERROR}".+ \\(${project}\\)"$`));
    // A skipped test points at the failed one, never repeats the line.
    expect(child.stdout.split('\n').filter((printed) => printed.includes('skipped') && printed.includes(line))).toEqual([]);
  }
  // A test with no run keeps its describe block's name (a cells() cell) on its progress line.
  expect(child.stdout).toMatch(/\] unpriced-budget › a cell › upvote \d: skipped/);
  expect(child.stdout).not.toContain('No tests found');
  expect(child.code).not.toBe(0);
});
