// A command agent, as a team's own would be: it drives the run's Chromium over CDP, signs in with
// the login made for this run, presses "Assign to me" on the ticket the task names, reads the row
// back and claims what it shows. `--lie`: claims success without touching anything.
import { writeFileSync } from 'node:fs';
import { chromium } from '@playwright/test';

const claim = (success, summary) => writeFileSync(process.env.HARNESS_CLAIM_FILE, JSON.stringify({ success, summary }));
const title = /"([^"]+)"/.exec(process.env.HARNESS_TASK)?.[1];
if (process.argv.includes('--lie')) {
  claim(true, `Assigned "${title}" to myself.`);
  process.exit(0);
}
const browser = await chromium.connectOverCDP(process.env.HARNESS_CDP_URL);
const page = await browser.contexts()[0].newPage();
await page.goto('https://tickets.example/tickets');
if (page.url().includes('/login')) {
  await page.locator('input[name="username"]').fill(process.env.HARNESS_SITE_USERNAME ?? '');
  await page.locator('input[name="password"]').fill(process.env.HARNESS_SITE_PASSWORD ?? '');
  await Promise.all([page.waitForURL('**/tickets'), page.getByRole('button', { name: 'Log in' }).click()]);
}
const row = page.locator('#tickets tr.ticket', { has: page.getByRole('link', { name: title, exact: true }) });
await Promise.all([page.waitForEvent('load'), row.getByRole('button', { name: 'Assign to me' }).click()]);
const assignee = (await row.locator('.assignee').textContent())?.trim();
await browser.close();
if (assignee === process.env.HARNESS_SITE_USERNAME) claim(true, `"${title}" is assigned to ${assignee}.`);
else claim(false, `"${title}" shows ${assignee} as its assignee.`);
