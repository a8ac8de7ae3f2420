/**
 * `npm run bench:overhead`: the harness's cost over the browser work itself. Median wall time of
 * one offline run of the classic experiment's third stack (guardrails + verify + login) with
 * `scripted:overclaimer`, against a plain Playwright script doing the same browser work on the same
 * path. Target ≤ 1.05.
 *
 * The path is the harness's: the login handler signs in from outside the page with the wall's
 * `goto` made harmless (a sign-in never casts the vote it interrupted), so the run votes with a
 * second click. A script that logs in through the wall's form casts the vote in the login's
 * redirect and saves that click: it is printed too, as the shortest path by hand, but comparing
 * with it would charge the harness for keeping its authority, not for its overhead.
 */
import { chromium, type Browser } from '@playwright/test';
import { upvoteFirstPost } from '../src/sites/hn/suite.ts';
import { chromiumLaunchOptions } from '../src/playwright/chromium.ts';
import { evaluate } from '../src/eval/evaluate.ts';
import { HN_ORIGIN } from '../src/sites/hn/options.ts';
import { recordedHn } from '../src/sites/hn/site.ts';
import { signIn } from '../src/sites/hn/sign-in.ts';
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

/** A fresh context on the recorded site, its front page open and the first story's arrow clicked: on the login wall. */
async function atTheWall(browser: Browser) {
  const context = await browser.newContext();
  const site = recordedHn();
  await site.attach(context);
  const page = await context.newPage();
  await page.goto(`${HN_ORIGIN}/news`);
  const id = (await page.locator('tr.athing').first().getAttribute('id'))!;
  await page.locator(`#up_${id}`).click();
  await page.locator('input[name="acct"]').first().waitFor();
  return { context, site, page, id };
}

/** The harness's path by hand: sign in from outside the page (to the story's page, as the login handler does), go back to the front page, click the arrow again, see it gone. */
async function plainRun(browser: Browser): Promise<number> {
  const started = performance.now();
  const { context, site, page, id } = await atTheWall(browser);
  await signIn(context, site);
  await page.goto(`${HN_ORIGIN}/item?id=${id}`);
  await page.goto(`${HN_ORIGIN}/news`);
  await Promise.all([page.waitForURL(`${HN_ORIGIN}/news`), page.locator(`#up_${id}`).click()]);
  if (!(await page.locator(`#up_${id}`).isHidden())) throw new Error('plain run did not vote');
  await context.close();
  return performance.now() - started;
}

/** The shortest path by hand: log in through the wall's form, whose redirect casts the vote, and look at the front page. */
async function shortestRun(browser: Browser): Promise<number> {
  const started = performance.now();
  const { context, site, page, id } = await atTheWall(browser);
  await page.locator('input[name="acct"]').first().fill(site.account.username);
  await page.locator('input[name="pw"]').first().fill(site.account.password);
  await Promise.all([page.waitForURL(`${HN_ORIGIN}/news`), page.locator('input[value="login"]').first().click()]);
  await page.goto(`${HN_ORIGIN}/news`);
  if (!(await page.locator(`#up_${id}`).isHidden())) throw new Error('shortest run did not vote');
  await context.close();
  return performance.now() - started;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

const browser = await chromium.launch(chromiumLaunchOptions());
const sides = { harness: harnessRun, plain: plainRun, shortest: shortestRun };
const times = { harness: [] as number[], plain: [] as number[], shortest: [] as number[] };
for (const run of Object.values(sides)) await run(browser);
// Interleaved, so a change of load falls on every side alike.
for (let i = 0; i < ROUNDS; i++) for (const [side, run] of Object.entries(sides)) times[side as keyof typeof sides].push(await run(browser));
await browser.close();
const ratio = median(times.harness) / median(times.plain);
console.log(`classic experiment, stack guardrails+verify+login, scripted:overclaimer, ${ROUNDS} runs each (interleaved)`);
console.log(`  harness run                    median ${median(times.harness).toFixed(0)} ms`);
console.log(`  plain script, the same path    median ${median(times.plain).toFixed(0)} ms`);
console.log(`  plain script, shortest path    median ${median(times.shortest).toFixed(0)} ms (the wall's login casts the vote; not the comparison)`);
console.log(`  ratio ${ratio.toFixed(2)} (target ≤ 1.05)`);
