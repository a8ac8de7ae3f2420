import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { main } from '../src/cli/main.ts';
import { playwright, readSummary, workspace } from './playwright-child.ts';

/**
 * `harness-eval init kit DIR`: a kit for a team's own app, made from templates/kit/, runs green on
 * its first try: its controls pass, as a user's own Playwright run, reported.
 */
test('the kit it writes runs green as written: the reference does both tasks, the nop fails truthfully, the liar is found out', async () => {
  test.setTimeout(120_000);
  const { dir, env } = workspace('harness-eval-init-');
  const kit = join(dir, 'acme');
  const printed: string[] = [];
  const log = console.log;
  console.log = (line: string) => void printed.push(line);
  try {
    expect(await main(['init', 'kit', kit])).toBe(0);
  } finally {
    console.log = log;
  }
  expect(printed.join('\n').split('\n').slice(0, -1)).toEqual(['README.md', 'app.mjs', 'controls.spec.ts', 'playwright.config.ts', 'site.ts', 'tasks.ts'].map((file) => join(kit, file)));
  // Inside this repository harness-eval is not installed: its reporter by path, as the example kits name it.
  const config = join(kit, 'playwright.config.ts');
  writeFileSync(config, readFileSync(config, 'utf8').replace("'harness-eval/reporter'", JSON.stringify(join(import.meta.dirname, '..', 'src', 'playwright', 'reporter.ts'))));
  const child = await playwright(['test', '-c', config], env);
  expect(child.code, child.stdout.slice(-3000)).toBe(0);
  const summary = readSummary(env.REPORT_DIR);
  const cells = summary.cells.map((cell) => `${cell.site} ${cell.task} ${cell.agent}: ${cell.successes}/${cell.runs}, ${cell.falseSuccesses} false`).sort();
  expect(cells).toEqual([
    'acme add-note liar: 0/1, 1 false',
    'acme add-note nop: 0/1, 0 false',
    'acme add-note reference: 1/1, 0 false',
    'acme delete-note liar: 0/1, 1 false',
    'acme delete-note nop: 0/1, 0 false',
    'acme delete-note reference: 1/1, 0 false',
  ]);
});

test('bad input is one line naming what is wrong: another command than kit, no folder, a folder with files in it, a name that is no host', async () => {
  const { dir } = workspace('harness-eval-init-bad-');
  const errors: string[] = [];
  const original = console.error;
  console.error = (line: string) => void errors.push(line);
  try {
    mkdirSync(join(dir, 'full'));
    writeFileSync(join(dir, 'full', 'x'), '');
    for (const args of [['init', 'app', 'x'], ['init', 'kit'], ['init', 'kit', join(dir, 'full')], ['init', 'kit', join(dir, 'ok'), '--name', 'Not A Host']]) expect(await main(args)).toBe(2);
  } finally {
    console.error = original;
  }
  expect(errors).toEqual([
    'harness-eval: init: expected "init kit DIR", got "init app x"',
    'harness-eval: init kit: expected one folder, DIR',
    `harness-eval: init kit: ${join(dir, 'full')} is not empty: a kit is written into a new or empty folder`,
    'harness-eval: init kit: --name: expected a lowercase name of letters, digits and dashes (the site\'s host), got "Not A Host"',
  ]);
});
