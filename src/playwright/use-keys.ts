import { createRequire } from 'node:module';
import { relative } from 'node:path';
import type { TestInfo } from '@playwright/test';
import { InputError } from '../input.ts';
import { closest } from '../text.ts';

/**
 * Playwright ignores a key in `use` that no fixture of the test declares: `use: { modle: … }`
 * measures the default model, silently. Here such a key fails the test in one line naming the
 * closest option. A key is known when a fixture of the test's own `test` declares it (Playwright's,
 * harness-eval's, or one of the user's `test.extend`), so nothing is listed by hand.
 *
 * Playwright offers no API for a test's fixtures: they are read, read-only, from the test as the
 * worker loaded it (its test type's fixture lists, its describe blocks' `test.use`). Where those
 * are not found (another Playwright), nothing is checked and the worker says so once;
 * tests/use-keys.spec.ts fails then.
 */

/** A fixture list as `test.extend` and `test.use` record it. */
interface FixtureList {
  fixtures: Record<string, unknown>;
  location?: { file: string; line: number };
}

/** What this reads of a test Playwright loaded. */
interface LoadedTest {
  titlePath(): string[];
  parent?: LoadedSuite;
  _testType?: { fixtures?: FixtureList[] };
}

interface LoadedSuite {
  parent?: LoadedSuite;
  _use?: FixtureList[];
  allTests(): LoadedTest[];
}

/** The fixtures a test declares (every name, and those that are options), and the keys its describe blocks' `test.use` set. */
export interface TestFixtures {
  declared: Set<string>;
  options: string[];
  used: FixtureList[];
}

/** Said once a worker: where the fixtures cannot be read, a typo goes unchecked, and the user is told. */
let unreadSaid = false;

/** The test's fixtures, or undefined (said once on stderr) where Playwright keeps them otherwise. */
export async function testFixtures(testInfo: TestInfo): Promise<TestFixtures | undefined> {
  const found = await loadedFixtures(testInfo);
  if (!found && !unreadSaid) {
    unreadSaid = true;
    process.stderr.write("harness-eval: this Playwright keeps a test's fixtures where harness-eval cannot read them, so a misspelt key in use is not caught: run tsc --noEmit\n");
  }
  return found;
}

/** Read from the test as the worker loaded it; undefined where any part is not where this reads it. */
async function loadedFixtures(testInfo: TestInfo): Promise<TestFixtures | undefined> {
  try {
    // The worker's own loader, through the package it ships in: the same module, so its cache.
    const common = createRequire(createRequire(import.meta.url).resolve('@playwright/test'))('playwright/lib/common') as {
      testLoader: { loadTestFile(file: string, config?: unknown): Promise<LoadedSuite> };
    };
    const file = (testInfo as TestInfo & { _requireFile?: string })._requireFile;
    if (!file) return undefined;
    // The file's suite as the worker loaded it, from the loader's cache. No config is passed: were it
    // not cached, the loader fails before it loads anything.
    const suite = await common.testLoader.loadTestFile(file);
    const titles = testInfo.titlePath.join('\n');
    const test = suite.allTests().find((loaded) => loaded.titlePath().join('\n') === titles);
    const lists = test?._testType?.fixtures;
    if (!test || !Array.isArray(lists)) return undefined;
    const used: FixtureList[] = [];
    for (let parent = test.parent; parent; parent = parent.parent) used.unshift(...(parent._use ?? []));
    // The latest extension first: its options are the likelier meant.
    const named = lists.toReversed().flatMap((list) => Object.entries(list.fixtures));
    const options = named.filter(([name, value]) => !name.startsWith('_') && Array.isArray(value) && (value[1] as { option?: boolean } | undefined)?.option === true).map(([name]) => name);
    return { declared: new Set(named.map(([name]) => name)), options: [...new Set(options)], used };
  } catch {
    return undefined;
  }
}

/**
 * Throws an InputError for the first key of the test's `use` (its project's, then its `test.use`
 * blocks') that no fixture of the test declares. A `test.use` entry that is a function defines a
 * fixture of its own; it is no option to misspell.
 */
export function checkUseKeys(fixtures: TestFixtures, projectUse: Record<string, unknown>, configDir: string): void {
  const unknown = (key: string) => !fixtures.declared.has(key);
  const fail = (where: string, key: string): never => {
    const meant = closest(key, fixtures.options);
    throw new InputError(`${where}${key}: not an option of Playwright, harness-eval or the test's fixtures${meant ? `; did you mean ${meant}?` : ''}`);
  };
  for (const key of Object.keys(projectUse)) if (unknown(key)) fail('use.', key);
  for (const { fixtures: set, location } of fixtures.used) {
    for (const [key, value] of Object.entries(set)) {
      if (unknown(key) && typeof value !== 'function') fail(`test.use()${location ? ` at ${relative(configDir, location.file)}:${location.line}` : ''}: `, key);
    }
  }
}
