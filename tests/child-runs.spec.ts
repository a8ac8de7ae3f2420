import { readdirSync, readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { test } from '@playwright/test';
import config, { childRunFiles, lateChildRunFiles } from './playwright.config.ts';
import { expect } from './support.ts';

test('the files that start child Playwright runs share one worker, a few short ones a second once the other tests are done, and no other file starts one', () => {
  // Child runs first, so the dispatcher starts them beside the other tests, not after them all.
  expect(config.projects).toEqual([
    expect.objectContaining({ name: 'child runs', testMatch: childRunFiles.filter((name) => !lateChildRunFiles.includes(name)), workers: 1 }),
    expect.objectContaining({ name: 'tests', testIgnore: childRunFiles }),
    expect.objectContaining({ name: 'child runs after tests', testMatch: lateChildRunFiles, workers: 1, dependencies: ['tests'] }),
  ]);
  expect(childRunFiles).toEqual(expect.arrayContaining(lateChildRunFiles));
  expect(childRunFiles).toEqual(expect.arrayContaining(['audit-faults.spec.ts', 'nightly.spec.ts', 'surface.spec.ts']));
  // A Playwright child started some other way (its CLI by path, npx) would escape the project. This file names them only to look for them.
  const others = readdirSync(import.meta.dirname).filter((name) => name.endsWith('.spec.ts') && !childRunFiles.includes(name) && name !== basename(import.meta.filename));
  const spawning = others.filter((name) => /@playwright\/test\/cli|npx playwright/.test(readFileSync(new URL(name, import.meta.url), 'utf8')));
  expect(spawning).toEqual([]);
});
