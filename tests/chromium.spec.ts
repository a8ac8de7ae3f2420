import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { chromium, expect, test } from '@playwright/test';
import { chromiumAsFound, chromiumLaunchOptions, findChromium } from '../src/playwright/chromium.ts';

const found = findChromium();
/** Debian's full browser and headless shell, when this machine has both. */
const pair = found?.kind === 'system' ? found.pair : undefined;

/** The features a `--disable-features=` flag names, each flag's list in the order given. */
const disabledFeatureLists = (argv: readonly string[]): string[][] =>
  argv.filter((arg) => arg.startsWith('--disable-features=')).map((arg) => arg.slice('--disable-features='.length).split(','));

test('a browser context opens no browser UI of its own: no omnibox popup, no renderer for it', async () => {
  // The full browser, which has UI to hide, even where headless launches run Debian's headless shell.
  const browser = await chromium.launch({ ...chromiumLaunchOptions(), ...(pair && { executablePath: pair.browser }) });
  try {
    const cdp = await browser.newBrowserCDPSession();
    for (let i = 0; i < 2; i++) {
      const context = await browser.newContext();
      const page = await context.newPage();
      await page.setContent('<h1>a run</h1>');
      const { targetInfos } = await cdp.send('Target.getTargets');
      expect(targetInfos.map((target) => `${target.type} ${target.url}`)).toEqual(['page about:blank']);
      await context.close();
    }
  } finally {
    await browser.close();
  }
});

test("our --disable-features, the one Chromium reads (the last), keeps every feature Playwright's own flag disables", async () => {
  test.skip(process.platform !== 'linux', "reads the browser's command line in /proc");
  const server = await chromium.launchServer(chromiumLaunchOptions());
  try {
    // Chromium may rewrite its command line as one string: the flags hold no spaces.
    const argv = readFileSync(`/proc/${server.process().pid}/cmdline`, 'utf8').split(/[\0 ]/);
    const lists = disabledFeatureLists(argv);
    const ours = lists.at(-1) ?? [];
    expect(lists.slice(0, -1).flat().filter((feature) => !ours.includes(feature))).toEqual([]);
    expect(ours).toContain('WebUIOmniboxPopup');
  } finally {
    await server.close();
  }
});

test("with Debian's headless shell beside its Chromium, a headless launch runs the shell and a headed one the full browser", () => {
  test.skip(!pair, 'no Debian Chromium with its headless shell here');
  expect(chromiumAsFound().executablePath).toBe(found!.path);
  // Debian's full browser says where it was built; the shell does not.
  expect(execFileSync(found!.path, ['--headless', '--version'], { encoding: 'utf8' })).not.toContain('built on');
  expect(execFileSync(found!.path, ['--version'], { encoding: 'utf8' })).toContain('built on Debian');
});
