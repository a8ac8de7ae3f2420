/**
 * `npx tsx scripts/shoot-report.ts [REPORT_DIR] [OUT_DIR]`: opens a report's index.html from disk in
 * Chromium at 1280 px and saves PNGs of the verdict banner, the baseline comparison (when there is
 * one), the ablation view and one run's detail (the first false success with verdicts, its
 * transcript unfolded), then the top of the page and the heatmaps at 390 px (a phone), for a person
 * to look at. Defaults: `reports`, and a `shots` folder in it.
 */
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium } from '@playwright/test';
import { chromiumAsFound } from '../src/playwright/chromium.ts';

const reportDir = resolve(process.argv[2] ?? 'reports');
const outDir = resolve(process.argv[3] ?? join(reportDir, 'shots'));
mkdirSync(outDir, { recursive: true });

const browser = await chromium.launch(chromiumAsFound());
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  await page.goto(pathToFileURL(join(reportDir, 'index.html')).href);
  const shots: Array<[string, string]> = [];
  const shoot = async (name: string, selector: string) => {
    const element = page.locator(selector).first();
    if ((await element.count()) === 0) return;
    const file = join(outDir, `${name}.png`);
    await element.screenshot({ path: file });
    shots.push([name, file]);
  };
  await page.screenshot({ path: join(outDir, 'page-top.png') });
  shots.push(['page-top', join(outDir, 'page-top.png')]);
  await shoot('verdict', '#verdict');
  await shoot('comparison', '#comparison');
  await shoot('ablation', '#ablation');
  await shoot('heatmaps', '#heatmaps');
  // A run's two rows (how it ended; its claim, verdicts and transcript), the transcript unfolded.
  const run = page.locator('tr[id^="run-"]').filter({ has: page.locator('td.false-success') }).first();
  if ((await run.count()) > 0) {
    const detail = run.locator('xpath=following-sibling::tr[1]');
    // A run with no transcript (or stderr) has nothing to unfold.
    await detail.locator('details').evaluateAll((all) => all.forEach((details) => ((details as HTMLDetailsElement).open = true)));
    // Boxes are relative to the viewport, a full-page clip to the document: add the scroll.
    const scrollY = await page.evaluate(() => window.scrollY);
    const [top, bottom] = [(await run.boundingBox())!, (await detail.boundingBox())!];
    const file = join(outDir, 'run.png');
    await page.screenshot({ path: file, fullPage: true, clip: { x: top.x, y: top.y + scrollY, width: Math.max(top.width, bottom.width), height: bottom.y + bottom.height - top.y } });
    shots.push(['run', file]);
  }
  // A phone: the top of the page and the heatmaps at 390 px, where nothing may scroll sideways.
  await page.setViewportSize({ width: 390, height: 844 });
  await page.screenshot({ path: join(outDir, 'page-top-390.png') });
  shots.push(['page-top-390', join(outDir, 'page-top-390.png')]);
  await shoot('heatmaps-390', '#heatmaps');
  for (const [name, file] of shots) console.log(`${name}: ${file}`);
} finally {
  await browser.close();
}
