import type { PlaywrightTestOptions, PlaywrightWorkerOptions } from '@playwright/test';
import { test as harnessTest, type HarnessOptions } from '../src/playwright/fixtures.ts';
import { checkUseKeys, testFixtures, type TestFixtures } from '../src/playwright/use-keys.ts';
import { closest } from '../src/text.ts';
import { expect } from './support.ts';

/**
 * A key in `use` that no fixture of the test declares fails in one line naming the closest option
 * (src/playwright/use-keys.ts); tests/fixture-config-errors.spec.ts sees it fail a child run once.
 * Here: the test's fixtures as Playwright loaded them, and the check on them.
 */

/** A user's own option, as a spec declares one. */
const test = harnessTest.extend<{ account: string; helper: number }>({
  account: ['alice', { option: true }],
  helper: async ({}, use) => use(1),
});

/** Every option of Playwright's types, and of harness-eval's: a Playwright that adds one fails typecheck here until it is listed. */
const playwrightOptions: Record<keyof (PlaywrightTestOptions & PlaywrightWorkerOptions), true> = {
  acceptDownloads: true, bypassCSP: true, colorScheme: true, clientCertificates: true, contrast: true, deviceScaleFactor: true, extraHTTPHeaders: true,
  forcedColors: true, geolocation: true, hasTouch: true, httpCredentials: true, ignoreHTTPSErrors: true, isMobile: true, javaScriptEnabled: true,
  locale: true, offline: true, permissions: true, proxy: true, reducedMotion: true, screen: true, storageState: true, testIdAttribute: true,
  timezoneId: true, userAgent: true, viewport: true, actionTimeout: true, navigationTimeout: true, baseURL: true, serviceWorkers: true,
  contextOptions: true, browserName: true, defaultBrowserType: true, headless: true, channel: true, launchOptions: true, connectOptions: true,
  screenshot: true, trace: true, video: true, reuseContext: true,
};
const harnessOptions: Record<keyof HarnessOptions, true> = {
  agent: true, model: true, modelName: true, layers: true, layerStack: true, surface: true, site: true, harnessScreenshots: true,
  modelCache: true, prices: true, maxCost: true, maxRunCost: true, cell: true, matrix: true,
};

test.describe('a block with its own options', () => {
  test.use({ layers: ['verify'], account: 'bob' });

  test("the test's fixtures: Playwright's, harness-eval's and the user's, each option by name, and the keys its blocks set", async () => {
    const fixtures = (await testFixtures(test.info()))!;
    expect(fixtures, 'Playwright keeps a test\'s fixtures elsewhere now: src/playwright/use-keys.ts checks nothing').toBeDefined();
    for (const name of [...Object.keys(playwrightOptions), ...Object.keys(harnessOptions), 'account']) {
      expect(fixtures.declared.has(name), name).toBe(true);
      expect(fixtures.options, name).toContain(name);
    }
    // Fixtures that are not options are declared, never offered as what a typo meant.
    expect(fixtures.declared.has('page') && fixtures.declared.has('helper') && fixtures.declared.has('harness')).toBe(true);
    expect(fixtures.options).not.toContain('helper');
    expect(fixtures.options.filter((name) => name.startsWith('_'))).toEqual([]);
    expect(fixtures.used.map((list) => Object.keys(list.fixtures))).toEqual([['layers', 'account']]);
    expect(fixtures.used[0]!.location).toMatchObject({ file: test.info().file, line: expect.any(Number) });
  });
});

test('where the fixtures cannot be read, nothing is checked, and the worker says so once', async () => {
  const said: string[] = [];
  const write = process.stderr.write;
  process.stderr.write = ((line: string) => (said.push(line), true)) as typeof write;
  try {
    const elsewhere = { ...test.info(), titlePath: ['no', 'such', 'test'] };
    expect(await testFixtures(elsewhere)).toBeUndefined();
    expect(await testFixtures(elsewhere)).toBeUndefined();
  } finally {
    process.stderr.write = write;
  }
  expect(said).toEqual(["harness-eval: this Playwright keeps a test's fixtures where harness-eval cannot read them, so a misspelt key in use is not caught: run tsc --noEmit\n"]);
});

test.describe('the check', () => {
  const fixtures = (used: TestFixtures['used'] = []): TestFixtures => ({ declared: new Set(['model', 'layers', 'browserName', 'account']), options: ['account', 'model', 'layers', 'browserName'], used });
  const check = (projectUse: Record<string, unknown>, used?: TestFixtures['used']) => () => checkUseKeys(fixtures(used), projectUse, '/project');

  test('a misspelt key in use fails in one line naming the closest option', () => {
    expect(check({ model: 'scripted:diligent', browserName: 'chromium' })).not.toThrow();
    expect(check({ modle: 'openai:gpt-4o-mini' })).toThrow(/^use\.modle: not an option of Playwright, harness-eval or the test's fixtures; did you mean model\?$/);
    expect(check({ layer: ['verify'] })).toThrow(/; did you mean layers\?$/);
    expect(check({ acount: 'bob' })).toThrow(/; did you mean account\?$/);
    // Nothing close: no guess.
    expect(check({ somethingElse: 1 })).toThrow(/^use\.somethingElse: not an option of Playwright, harness-eval or the test's fixtures$/);
  });

  test("a misspelt key in test.use() names where it was set; a fixture test.use() defines is no option to misspell", () => {
    const at = { file: '/project/specs/upvote.spec.ts', line: 4 };
    expect(check({}, [{ fixtures: { Layers: [] }, location: at }])).toThrow(/^test\.use\(\) at specs\/upvote\.spec\.ts:4: Layers: not an option .*; did you mean layers\?$/);
    expect(check({}, [{ fixtures: { ownFixture: async () => {} }, location: at }])).not.toThrow();
  });

  test('the closest option: fewest edits, case ignored, a swap one edit; none past a third of the word', () => {
    expect(closest('modle', ['layers', 'model', 'modelName'])).toBe('model');
    expect(closest('maxcost', ['maxCost', 'maxRunCost'])).toBe('maxCost');
    expect(closest('lauchOptions', ['launchOptions', 'connectOptions'])).toBe('launchOptions');
    expect(closest('xyz', ['model', 'layers'])).toBeUndefined();
  });
});
