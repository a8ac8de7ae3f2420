import { test } from '@playwright/test';
import { renderHtml } from '../src/report/files.ts';
import { summarize } from '../src/report/summarize.ts';
import type { AttachedRunRecord } from '../src/report/types.ts';
import { expect, attachedRunRecord } from './support.ts';

/** The HTML report read at 1280 px, a laptop's width: no column is out of sight. */

/** Runs of a matrix with names as long as real ones: models, stacks, a custom capture, retried lies, prices. */
function wideMatrix(): AttachedRunRecord[] {
  const models = ['openai:gpt-4o-mini-2024-07-18', 'ollama:qwen2.5-coder:32b-instruct-q4_K_M'];
  const stacks: Array<[string, string[]]> = [['bare', []], ['guardrails+context+permissions+observations+login+verify+retry', ['guardrails', 'context', 'permissions', 'observations', 'login', 'verify', 'retry']]];
  return models.flatMap((model) =>
    stacks.flatMap(([layers, names]) =>
      Array.from({ length: 12 }, (_, index) =>
        attachedRunRecord({
          task: 'upvote-the-first-post-then-favorite-its-author',
          agent: 'harness-eval',
          model,
          layers,
          site: 'hn-recorded-front-page-2026-11-22-with-injection',
          condition: { model: { id: model }, layers: names.map((name) => ({ name, options: {} })), site: { name: 'custom' } },
          claimed: index % 2 === 0,
          actual: index % 3 === 0,
          incomplete: index === 5,
          iterations: 3 + index,
          tokens: { input: 123_456 + index, output: 7_890 },
          stopReason: index === 5 ? 'timeout' : 'finished',
          test: { id: `${model}-${layers}-${index}`, title: 'upvote the first post then favorite its author', project: `${model} · ${layers}`, retry: index === 7 ? 1 : 0 },
        }),
      ),
    ),
  );
}

test('the report fits 1280 px: no page-wide scroll, the cells table\'s last column in view, no word broken inside', async ({ page }) => {
  const runs = wideMatrix();
  const summary = summarize(runs, { complete: true, prices: { 'openai:gpt-4o-mini-2024-07-18': { input: 0.15, output: 0.6 } } });
  await page.setViewportSize({ width: 1280, height: 800 });
  // Its text, not its file: the test's browser sees nothing of the project.
  await page.setContent(renderHtml(summary, runs));
  expect(await page.evaluate(() => document.scrollingElement!.scrollWidth)).toBeLessThanOrEqual(1280);
  // Each table's last column is inside its box, which is inside the page: no column is scrolled out of sight.
  for (const section of ['#cells', '#runs', '#ablation']) {
    const box = (await page.locator(`${section} .scroll`).first().boundingBox())!;
    const last = (await page.locator(`${section} .scroll tr`).first().locator('th').last().boundingBox())!;
    expect(box.x + box.width, `${section}'s box`).toBeLessThanOrEqual(1280);
    expect(last.x + last.width, `${section}'s last column`).toBeLessThanOrEqual(box.x + box.width);
  }
  // No word of any table is broken inside (`scripted:d|iligent`): a name wraps only after a separator.
  const broken = await page.evaluate(() => {
    const found: string[] = [];
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const cell = node.parentElement?.closest('td, th');
      if (!cell || node.parentElement?.closest('details:not([open]), svg')) continue;
      for (const match of (node.textContent ?? '').matchAll(/\S+/g)) {
        const range = document.createRange();
        range.setStart(node, match.index!);
        range.setEnd(node, match.index! + match[0].length);
        const lines = new Set([...range.getClientRects()].filter((rect) => rect.width > 0).map((rect) => Math.round(rect.top)));
        if (lines.size < 2) continue;
        // Where the line breaks: allowed only after a separator (`:`, `-`, `–`, `+`, `·`, `/`, `_`, `.`, `,`, `=`).
        const top = (offset: number) => {
          range.setStart(node!, match.index! + offset);
          range.setEnd(node!, match.index! + offset + 1);
          return Math.round(range.getClientRects()[0]?.top ?? 0);
        };
        for (let offset = 1; offset < match[0].length; offset++) {
          if (top(offset) !== top(offset - 1) && !/[:+/·_.,=\-–]/.test(match[0][offset - 1]!)) found.push(`${match[0].slice(0, offset)}|${match[0].slice(offset)} (in ${cell.closest('section')?.id})`);
        }
      }
    }
    return found;
  });
  expect(broken).toEqual([]);
});
