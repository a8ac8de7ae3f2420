/**
 * `npm run bench:vision`: what the model pays to see a page, in prompt tokens, on the recorded
 * front page, an item page and a user page in each markup era: get_text's plain text (uncapped)
 * against its markdown (the `vision` layer's `text: 'markdown'`) and a 1280×720 screenshot
 * (OpenAI's tile formula at `detail: high` and `low`; the fixed estimate for Ollama). Text tokens
 * are o200k_base's (gpt-4o's). Prints each, and the ratios to plain text.
 */
import { chromium } from '@playwright/test';
import { textCounter } from '../src/harness/tokens.ts';
import { FIXED_IMAGE_TOKENS, openAIImageTokens } from '../src/models/images.ts';
import { chromiumLaunchOptions } from '../src/playwright/chromium.ts';
import { createReplica, HN_ORIGIN, markupYears, routeReplica } from '../src/sites/hn/index.ts';
import { pageMarkdown } from '../src/tools/markdown.ts';
import { jpegSize, takeScreenshot } from '../src/tools/screenshot.ts';

const tokens = await textCounter('gpt-4o');
const browser = await chromium.launch(chromiumLaunchOptions());
const rows: string[][] = [];
for (const markupYear of markupYears) {
  const replica = createReplica({ faults: { markupYear } });
  const first = [...replica.capture.items.values()].find((item) => item.rank === 1)!;
  const context = await browser.newContext();
  await routeReplica(context, replica);
  const page = await context.newPage();
  const pages = { front: '/news', item: `/item?id=${first.id}`, user: `/user?id=${first.author}` };
  for (const [name, path] of Object.entries(pages)) {
    await page.goto(`${HN_ORIGIN}${path}`);
    const plain = tokens(await page.locator('body').innerText());
    const markdown = tokens(await pageMarkdown(page));
    const { width, height } = jpegSize(await takeScreenshot(page));
    const high = openAIImageTokens(width, height, 'high');
    const low = openAIImageTokens(width, height, 'low');
    const ratio = (count: number) => (count / plain).toFixed(2);
    rows.push([String(markupYear), name, String(plain), String(markdown), ratio(markdown), String(high), ratio(high), String(low), ratio(low), String(FIXED_IMAGE_TOKENS), ratio(FIXED_IMAGE_TOKENS)]);
  }
  await context.close();
}
await browser.close();

const header = ['era', 'page', 'plain text', 'markdown', '÷ plain', 'screenshot high', '÷ plain', 'low', '÷ plain', 'ollama', '÷ plain'];
console.log('prompt tokens to see one page (text: o200k_base; screenshot 1280×720: OpenAI tile formula, Ollama fixed estimate)');
for (const row of [header, header.map(() => '---'), ...rows]) console.log(`| ${row.join(' | ')} |`);
