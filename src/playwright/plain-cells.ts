import { createRequire } from 'node:module';
import { dirname, isAbsolute, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test as playwrightTest, type Project, type TestType } from '@playwright/test';
import { InputError } from '../input.ts';
import { checkedOnce } from './config-errors.ts';

/**
 * Playwright's own matching of testMatch and testIgnore (its exported `playwright/lib/util`), so a
 * matrix takes the files its project runs: the `playwright` that the project's `@playwright/test` depends on.
 */
const fromPlaywrightTest = createRequire(createRequire(import.meta.url).resolve('@playwright/test'));
const { createFileMatcher } = fromPlaywrightTest('playwright/lib/util') as { createFileMatcher(patterns: NonNullable<Project['testMatch']>): (file: string) => boolean };

/**
 * A spec written once runs in every cell of the config's `matrix()`, as a spec runs in every
 * project: where a matrix's project takes a spec file, each `test()` of it that no `cells()` cell
 * encloses is declared once per cell, as a describe block named by the cell with the cell's options
 * in use, so one project (and its workers, started once) runs them all. Playwright declares tests
 * when a file loads, for every project alike, so which files a matrix takes is decided from its
 * project's testDir, testMatch and testIgnore; a spec another project takes too is ambiguous, and
 * its tests fail there in one line.
 */

/** A matrix's cell as a spec declares it (matrix.ts's Cell). */
interface DeclaredCell {
  name: string;
  use: Record<string, unknown>;
}

/** What `matrix()` declared in this process's config: its project, and which files it takes. */
interface DeclaredMatrix {
  project: string;
  cells: readonly DeclaredCell[];
  takes(file: string): boolean;
}

/** One list per process, whatever copies of this module the config and the specs load. */
const declared: DeclaredMatrix[] = ((globalThis as { [key: symbol]: DeclaredMatrix[] | undefined })[Symbol.for('harness-eval.matrices')] ??= []);

/**
 * Called by `matrix()`: its project takes the files under its testDir (relative to the file that
 * called matrix(), the config as a rule; all files when it has none) that its testMatch matches
 * and its testIgnore does not. A config loaded again (a worker's) declares it again: the latest stands.
 */
export function declareMatrix(project: Project, cells: readonly DeclaredCell[], calledFrom: string | undefined): void {
  // Only a config's matrix() declares one: one a spec or a test calls (to read its cells) must not
  // change how the files loaded after it in that worker declare their tests.
  if (!loadingConfig()) return;
  const testDir = project.testDir === undefined ? undefined : isAbsolute(project.testDir) || !calledFrom ? resolve(project.testDir) : resolve(dirname(calledFrom), project.testDir);
  const matches = project.testMatch === undefined ? () => true : createFileMatcher(project.testMatch);
  const ignored = project.testIgnore === undefined ? () => false : createFileMatcher(project.testIgnore);
  const takes = (file: string) => (testDir === undefined || file === testDir || file.startsWith(`${testDir}/`)) && matches(file) && !ignored(file);
  const name = project.name!;
  const at = declared.findIndex((matrix) => matrix.project === name);
  declared.splice(at === -1 ? declared.length : at, at === -1 ? 0 : 1, { project: name, cells, takes });
}

/** Whether neither a test runs nor a test file loads here: a config is loading (Playwright's internals, as below). */
function loadingConfig(): boolean {
  try {
    playwrightTest.info();
    return false;
  } catch {
    // No test runs: is a test file loading?
  }
  const impl = implOf(playwrightTest);
  try {
    return impl?._currentSuite(undefined, 'matrix()') === undefined;
  } catch {
    return true;
  }
}

/** A test type's implementation (Playwright 1.65's internals), or undefined where it is not found. */
function implOf(test: TestType<any, any>): TestTypeImpl | undefined {
  const symbol = Object.getOwnPropertySymbols(test).find((key) => key.description === 'testType');
  const impl = symbol && ((test as unknown as Record<symbol, TestTypeImpl>)[symbol] as TestTypeImpl | undefined);
  return impl && typeof impl._createTest === 'function' && typeof impl._describe === 'function' ? impl : undefined;
}

/**
 * Where the function that calls this was called from (a spec's `test()`, a config's `matrix()`), as
 * Playwright locates a test: its caller's frame, with Playwright's source maps in place while specs load.
 */
export function callerLocation(): { file: string; line: number; column: number } | undefined {
  // Lines: the message, this function, the function that called it, and its caller.
  const frame = new Error().stack?.split('\n')[3];
  const found = frame?.match(/\(?((?:file:\/\/)?[^\s()]+):(\d+):(\d+)\)?$/);
  if (!found) return undefined;
  const file = found[1]!.startsWith('file://') ? fileURLToPath(found[1]!) : found[1]!;
  return { file, line: Number(found[2]), column: Number(found[3]) };
}

/** Playwright's internals this relies on (1.65): a test type's implementation, and a suite as it loads. */
interface LoadingSuite {
  _requireFile: string;
  _use: Array<{ fixtures: Record<string, unknown> }>;
  parent?: LoadingSuite;
}
interface TestTypeImpl {
  _currentSuite(location: unknown, title: string): LoadingSuite | undefined;
  _createTest(type: string, location: unknown, title: string, detailsOrBody: unknown, body?: unknown): void;
  _describe(type: string, location: unknown, title: string, body: () => void): void;
  _use(location: unknown, fixtures: Record<string, unknown>): void;
  _hook(name: string, location: unknown, title: string, fn: (fixtures: object, testInfo: import('@playwright/test').TestInfo) => Promise<void>): void;
}

/** Whether a `cell` option is in use where a test is being declared (a `cells()` describe block's). */
function inCell(suite: LoadingSuite | undefined): boolean {
  for (let at = suite; at; at = at.parent) if (at._use.some(({ fixtures }) => fixtures.cell !== undefined)) return true;
  return false;
}

/**
 * `test` whose `test()` (and its `only` form) declares a test once per cell in a file a `matrix()`
 * takes (outside any `cells()` cell), and whose `extend()` gives such a test again.
 */
export function plainCells<T extends TestType<any, any>>(test: T): T {
  const impl = implOf(test);
  // Another Playwright than this was written for: specs declare cells with cells(), as before.
  if (!impl) return test;
  const declare = (type: string, location: ReturnType<typeof callerLocation>, title: string, detailsOrBody: unknown, body?: unknown) => {
    const suite = impl._currentSuite(location, 'test()');
    const matrix = suite && !inCell(suite) ? takenBy(suite._requireFile) : undefined;
    if (!matrix) return impl._createTest(type, location, title, detailsOrBody, body);
    for (const cell of matrix.cells) {
      impl._describe('default', location, cell.name, () => {
        impl._use(location, cell.use);
        impl._hook('beforeEach', location, 'matrix cell', async ({}, testInfo) => {
          if (testInfo.project.name === matrix.project) return;
          // One failure, one line; the other tests meeting it are skipped pointing at it (config-errors.ts).
          await checkedOnce(testInfo, () => {
            throw new InputError(
            `matrix(): this spec runs in project "${matrix.project}"'s cells and in project "${testInfo.project.name}" too: give the matrix's project a testDir or testMatch of its own, or the other project a testIgnore`,
            );
          });
        });
        impl._createTest(type, location, title, detailsOrBody, body);
      });
    }
  };
  return new Proxy(test, {
    apply: (_target, _this, args: [string, unknown, unknown?]) => declare('default', callerLocation(), ...args),
    get(target, key, receiver) {
      if (key === 'only') return (...args: [string, unknown, unknown?]) => declare('only', callerLocation(), ...args);
      if (key === 'extend') return (...args: unknown[]) => plainCells((target.extend as (...a: unknown[]) => T)(...args));
      return Reflect.get(target, key, receiver);
    },
  });
}

/** The matrix that takes `file`; two that both do are an error naming them. */
export function takenBy(file: string): DeclaredMatrix | undefined {
  const taking = declared.filter((matrix) => matrix.takes(file));
  if (taking.length > 1) throw new InputError(`matrix(): projects ${taking.map((matrix) => `"${matrix.project}"`).join(' and ')} both take ${file}: give each matrix a testDir or testMatch of its own`);
  return taking[0];
}
