/**
 * `npm run bench:overhead`: the harness's cost over the browser work itself. Median wall time of
 * one offline run of the classic experiment's third stack (guardrails + verify + login) with
 * `scripted:overclaimer`, against a plain Playwright script doing the same clicks. Target ≤ 1.15.
 */
import { chromium, type Browser } from '@playwright/test';
import { upvoteFirstPost } from '../src/sites/hn/suite.ts';
import { chromiumLaunchOptions } from '../src/playwright/chromium.ts';
import { evaluate } from '../src/eval/evaluate.ts';
import { HN_ORIGIN } from '../src/sites/hn/options.ts';
import { recordedHn } from '../src/sites/hn/site.ts';
// `scripted:<name>` resolves to HN's doubles once the shell registers them, as the fixtures do.
import '../src/playwright/doubles.ts';

const ROUNDS = Number(process.env.ROUNDS ?? 15);

async function harnessRun(browser: Browser): Promise<number> {
  const started = performance.now();
  const context = await browser.newContext();
  const run = await evaluate({ context, site: recordedHn(), model: 'scripted:overclaimer', layers: ['guardrails', 'verify', 'login'], task: upvoteFirstPost });
  await context.close();
  if (!run.actual || !run.claimed) throw new Error(`harness run did not succeed: ${run.summary}`);
  return performance.now() - started;
}

/** The same clicks by hand: open the front page, read the first story, click its arrow, log in at
 * the wall, and look at the front page again to see the arrow gone. */
async function plainRun(browser: Browser): Promise<number> {
  const started = performance.now();
  const context = await browser.newContext();
  const site = recordedHn();
  await site.attach(context);
  const page = await context.newPage();
  await page.goto(`${HN_ORIGIN}/news`);
  const id = await page.locator('tr.athing').first().getAttribute('id');
  await page.locator(`#up_${id}`).click();
  await page.locator('input[name="acct"]').first().fill(site.account.username);
  await page.locator('input[name="pw"]').first().fill(site.account.password);
  await Promise.all([page.waitForURL(`${HN_ORIGIN}/news`), page.locator('input[value="login"]').first().click()]);
  await page.goto(`${HN_ORIGIN}/news`);
  if (!(await page.locator(`#up_${id}`).isHidden())) throw new Error('plain run did not vote');
  await context.close();
  return performance.now() - started;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

const browser = await chromium.launch(chromiumLaunchOptions());
await harnessRun(browser);
await plainRun(browser);
const harness: number[] = [];
const plain: number[] = [];
for (let i = 0; i < ROUNDS; i++) {
  harness.push(await harnessRun(browser));
  plain.push(await plainRun(browser));
}
await browser.close();
const ratio = median(harness) / median(plain);
console.log(`classic experiment, stack guardrails+verify+login, scripted:overclaimer, ${ROUNDS} runs each (interleaved)`);
console.log(`  harness run   median ${median(harness).toFixed(0)} ms`);
console.log(`  plain script  median ${median(plain).toFixed(0)} ms`);
console.log(`  ratio ${ratio.toFixed(2)} (target ≤ 1.15)`);
