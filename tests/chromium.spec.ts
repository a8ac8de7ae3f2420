import { readFileSync } from 'node:fs';
import { chromium, expect, test } from '@playwright/test';
import { chromiumLaunchOptions } from '../src/playwright/chromium.ts';

/** The features a `--disable-features=` flag names, each flag's list in the order given. */
const disabledFeatureLists = (argv: readonly string[]): string[][] =>
  argv.filter((arg) => arg.startsWith('--disable-features=')).map((arg) => arg.slice('--disable-features='.length).split(','));

test('a browser context opens no browser UI of its own: no omnibox popup, no renderer for it', async () => {
  const browser = await chromium.launch(chromiumLaunchOptions());
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
