import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { chromium } from '@playwright/test';
import * as cheerio from 'cheerio';
import { chromiumAsFound } from '../../playwright/chromium.ts';
import { HN_ORIGIN, type Account } from './options.ts';
import { sanitizeCapture } from './sanitize.ts';

export interface RecordOptions {
  out: string;
  origin?: string;
  /** Log in first (pages then show what a member sees); the saved pages are sanitized either way. */
  account?: Account;
  /** Pause between page loads: the live site asks for polite crawling. */
  delayMs?: number;
}

/**
 * Saves the pages the replica serves from (front page, page 2, the first story's item page, the
 * login page) with a real browser, as the server sent them, minus tokens, user names and cookies.
 */
export async function recordHn({ out, origin = HN_ORIGIN, account, delayMs = 1000 }: RecordOptions): Promise<string[]> {
  const browser = await chromium.launch(chromiumAsFound());
  const context = await browser.newContext();
  const page = await context.newPage();
  const saved: string[] = [];
  const pause = () => new Promise((resolve) => setTimeout(resolve, delayMs));
  const save = async (path: string, name: string) => {
    const response = await page.goto(new URL(path, `${origin}/`).href);
    if (!response?.ok()) throw new Error(`${path} answered ${response?.status() ?? 'nothing'}`);
    const html = sanitizeCapture(await response.text());
    writeFileSync(join(out, name), html);
    saved.push(name);
    await pause();
    return html;
  };
  try {
    mkdirSync(out, { recursive: true });
    if (account) {
      await page.goto(new URL('login?goto=news', `${origin}/`).href);
      await page.locator('input[name="acct"]').first().fill(account.username);
      await page.locator('input[name="pw"]').first().fill(account.password);
      await Promise.all([page.waitForURL((url) => !url.pathname.startsWith('/login')), page.locator('input[value="login"]').click()]);
      await pause();
    }
    const front = await save('news', 'news.html');
    await save('news?p=2', 'news-p2.html');
    const firstId = cheerio.load(front)('tr.athing').first().attr('id');
    if (firstId) await save(`item?id=${firstId}`, `item-${firstId}.html`);
    await context.clearCookies();
    await save('login?goto=news', 'login.html');
  } finally {
    await browser.close();
  }
  return saved;
}
