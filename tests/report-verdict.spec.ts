import { writeFileSync } from 'node:fs';
import { test } from '@playwright/test';
import { renderHtml, renderMarkdown } from '../src/report/files.ts';
import { decideGates, summarize } from '../src/report/summarize.ts';
import { trialsToDecide, trialsToDetect, wilson } from '../src/report/statistics.ts';
import { plan } from '../src/cli/plan.ts';
import * as cheerio from 'cheerio';
import type { AttachedRunRecord } from '../src/report/types.ts';
import { expect, attachedRunRecord } from './support.ts';

/** "Which configuration should we ship?" answered first, in summary.json, summary.md and index.html, at 1280 and 390 px. */

const now = new Date('2026-11-28T12:00:00Z');
const TASK = 'reply-to-the-latest-ticket-then-close-it';
const models = ['openai:gpt-4o-mini-2024-07-18', 'anthropic:claude-sonnet-4-20250514'];
const stacks: Array<[string, unknown[]]> = [
  ['bare', []],
  ['guardrails+verify', [{ name: 'guardrails', options: { compaction: 'half', maxIterations: 15 } }, { name: 'verify', options: {} }]],
];
/** Successes of 3 trials per cell, and whether the cell's agent claims success every time (so its failures are false successes). */
const outcomes: Record<string, { done: number; liar: boolean }> = {
  'openai:gpt-4o-mini-2024-07-18 bare': { done: 0, liar: true },
  'openai:gpt-4o-mini-2024-07-18 guardrails+verify': { done: 2, liar: false },
  'anthropic:claude-sonnet-4-20250514 bare': { done: 1, liar: false },
  'anthropic:claude-sonnet-4-20250514 guardrails+verify': { done: 3, liar: false },
};

/** A held-out user's matrix: 2 models × 2 stacks × 3 trials; gpt-4o-mini's bare cell lies 3 of 3 times, and the only gate covers the verified stack. */
function heldOut(): AttachedRunRecord[] {
  return models.flatMap((model) =>
    stacks.flatMap(([layers, names]) =>
      Array.from({ length: 3 }, (_, index) => {
        const { done, liar } = outcomes[`${model} ${layers}`]!;
        const actual = index < done;
        return attachedRunRecord({
          task: TASK,
          model,
          layers,
          site: 'tinydesk',
          condition: { model: { id: model }, layers: names, site: { name: 'tinydesk' } } as AttachedRunRecord['condition'],
          claimed: liar || actual,
          actual,
          test: { id: `${model}-${layers}-${index}`, title: 'reply to the latest ticket then close it, as a support agent would on a busy Monday', project: `${model} · ${layers}`, run: 1 },
        });
      }),
    ),
  );
}

const gates = [{ layers: 'guardrails+verify', minSuccessRate: 0.5 }];
const prices = { [models[0]!]: { input: 0.15, output: 0.6 }, [models[1]!]: { input: 3, output: 15 } };

test('the summary names the configuration to ship, the cells it cannot be told from, and every false success, gated or not', () => {
  const summary = summarize(heldOut(), { complete: true, now, gates, prices });
  const [choice] = summary.recommendation!.choices;
  expect(choice!.best).toMatchObject({ configuration: 'harness-eval · anthropic:claude-sonnet-4-20250514 · guardrails+verify', successes: 3, runs: 3 });
  // At 3 trials, 3/3 cannot be told from 2/3 or from 1/3: each is named beside it.
  expect(choice!.tiedWith.map((tie) => tie.configuration)).toEqual(['harness-eval · openai:gpt-4o-mini-2024-07-18 · guardrails+verify', 'harness-eval · anthropic:claude-sonnet-4-20250514 · bare']);
  expect(choice).toMatchObject({ cells: 4, disqualified: 1 });
  expect(summary.recommendation!.falseSuccesses).toEqual([{ cell: `${TASK} · harness-eval · openai:gpt-4o-mini-2024-07-18 · bare · tinydesk`, trials: 3, runs: 3, gated: false }]);
  // No gate failed: only the answer says a cell lied.
  expect(summary.gates!.breaches).toEqual([]);

  const markdown = renderMarkdown(summary).split('\n');
  // The verdict first, then the configuration to ship and every false success.
  expect(markdown[2]).toMatch(/^\*\*✓ /);
  expect(markdown[4]).toMatch(/^\*\*Ship: harness-eval · anthropic:claude-sonnet-4-20250514 · guardrails\+verify: 3 of 3 done \(44–100%\), no false success; not yet told apart from /);
  expect(markdown[6]).toBe(`✗ 3 false successes in 3 of 3 trials: ${TASK} · harness-eval · openai:gpt-4o-mini-2024-07-18 · bare · tinydesk, under no gate`);
});

test('ties go to the higher observed rate, then the cheaper run; a cell with any false success is never the one to ship', () => {
  const cell = (model: string, done: number, runs: number, liar = false) =>
    Array.from({ length: runs }, (_, index) => attachedRunRecord({ model, claimed: liar || index < done, actual: index < done, tokens: { input: 1_000, output: 100 }, test: { id: `${model}-${index}` } }));
  const cheaper = summarize([...cell('a:dear', 4, 4), ...cell('b:cheap', 4, 4)], { complete: true, now, prices: { 'a:dear': { input: 10, output: 10 }, 'b:cheap': { input: 1, output: 1 } } });
  expect(cheaper.recommendation!.choices[0]!.best!.configuration).toBe('harness-eval · b:cheap · bare');
  // a:liar succeeds more often (9 of 10) but lied once: the honest 8 of 10 is the one to ship.
  const lying = summarize([...cell('a:liar', 9, 10, true), ...cell('b:honest', 8, 10)], { complete: true, now });
  expect(lying.recommendation!.choices[0]!.best!.configuration).toBe('harness-eval · b:honest · bare');
  const none = summarize(cell('a:liar', 1, 3, true), { complete: true, now });
  expect(none.recommendation!.choices[0]!.best).toBeUndefined();
  expect(renderMarkdown(none).split('\n')[4]).toBe('**No configuration to ship: every cell had a false success**');
});

test('a gate at 3 trials is not decided by the data, and the report says how many trials would; decided passes and breaches are named so', () => {
  // A zero-event cell's interval falls under a threshold at the n where wilson(0, n).high does; for a threshold of 0, under 5%.
  expect(trialsToDecide(0, 0.05)).toBe(73);
  expect(wilson(0, 73).high).toBeLessThan(0.05);
  expect(wilson(0, 72).high).toBeGreaterThanOrEqual(0.05);
  const summary = summarize(heldOut(), { complete: true, now, gates, prices });
  const decisions = summary.gates!.decisions!;
  const verified = (model: string) => decisions.filter((decision) => decision.cell.includes(model) && decision.cell.includes('guardrails+verify'));
  expect(verified('claude').map(({ rule, decided, trialsToDecide: trials }) => [rule, decided, trials])).toEqual([
    ['false-success rate ≤ 0%', 'undecided', 73],
    ['success rate ≥ 50%', 'undecided', 4],
  ]);
  const md = renderMarkdown(summary);
  expect(md).toContain('gates[0] false-success rate ≤ 0%, 2 cells: not decided by the data in 2; 73 trials per cell would decide it at the rates seen (the interval under 5%, for a limit of 0)');
  expect(md).toContain('gates[0] success rate ≥ 50%, 2 cells: not decided by the data in 2;');
  // Enough trials decide: 0 of 100 lies is a pass, 1 lie in 3 a breach of a limit of 0.
  const many = (lies: number, runs: number) => Array.from({ length: runs }, (_, index) => attachedRunRecord({ claimed: true, actual: index >= lies, test: { id: `t${index}` } }));
  expect(decideGates(summarize(many(0, 100), { complete: true, now }), [{}])[0]).toMatchObject({ decided: 'pass', target: 0.05 });
  expect(decideGates(summarize(many(1, 3), { complete: true, now }), [{}])[0]).toMatchObject({ decided: 'breach' });
  expect(decideGates(summarize(many(1, 3), { complete: true, now }), [{ maxFalseSuccessRate: 0.5 }])[0]).toMatchObject({ decided: 'undecided', target: 0.5 });
});

test('each pair the report compares says whether the data decide it, and how many trials per cell would: the number harness-eval plan gives for the same rates', () => {
  // 80% against 95% at 20 trials a cell: not told apart; `harness-eval plan --from 80% --to 95%` says how many trials would.
  const [planned] = plan(['--from', '80%', '--to', '95%']);
  const trials = Number(/: (\d+) trials per cell$/.exec(planned!)![1]);
  expect(trials).toBe(trialsToDetect(0.8, 0.95));
  const stacks = { verified: [{ name: 'verify', options: {} }], bare: [] };
  const cell = (layers: keyof typeof stacks, done: number) =>
    Array.from({ length: 20 }, (_, index) => attachedRunRecord({ model: 'scripted:diligent', layers, condition: { model: { id: 'scripted:diligent' }, layers: stacks[layers], site: { name: 'hn-recorded' } } as AttachedRunRecord['condition'], claimed: index < done, actual: index < done, test: { id: `${layers}-${index}` } }));
  const summary = summarize([...cell('verified', 19), ...cell('bare', 16)], { complete: true, now });
  expect(summary.recommendation!.choices[0]!.tiedWith).toMatchObject([{ configuration: 'harness-eval · scripted:diligent · bare', trialsToTell: trials }]);
  expect(summary.ablation).toMatchObject([{ layer: 'verify', trialsToTell: { successRate: trials } }]);
  const md = renderMarkdown(summary);
  expect(md).toContain(`not yet told apart from harness-eval · scripted:diligent · bare (16 of 20 done (58–92%); ${trials} trials per cell would tell them apart)`);
  expect(md).toContain(`| +15 pts (−7 to +37); ${trials} trials per cell would decide |`);
  expect(md).toContain(`- What each layer buys: 0 of 1 change seen decided by the data; ${trials} trials per cell would decide it at the rates seen`);
  const html = cheerio.load(renderHtml(summary, []));
  expect(html('#answer .ship').text()).toContain(`${trials} trials per cell would tell them apart`);
  expect(html('#verdict li').last().text()).toBe(`What each layer buys: 0 of 1 change seen decided by the data; ${trials} trials per cell would decide it at the rates seen`);
  expect(html('#ablation td[data-label="success rate"] small.undecided').text()).toBe(`${trials} trials per cell would decide`);

  // While the matrix runs (a progress write every second), or once cut short, nothing is planned from part of it.
  const partial = summarize([...cell('verified', 19), ...cell('bare', 16)], { complete: false, now });
  expect(partial.recommendation!.choices[0]!.tiedWith[0]!.trialsToTell).toBeUndefined();
  expect(partial.ablation![0]!.trialsToTell).toBeUndefined();
  expect(renderMarkdown(partial)).toContain('not yet told apart from harness-eval · scripted:diligent · bare (16 of 20 done (58–92%))');
  expect(renderMarkdown(partial)).not.toMatch(/would (tell|decide)/);

  // Decided pairs say so; the same rate seen, or rates too close for 1,000 trials, say that instead of a number.
  const decided = summarize([...cell('verified', 20), ...cell('bare', 5)], { complete: true, now });
  expect(renderMarkdown(decided)).toContain('better beyond chance than the 1 other cell with none');
  expect(renderMarkdown(decided)).toContain('- What each layer buys: 1 of 1 change seen decided by the data');
  expect(renderMarkdown(summarize([...cell('verified', 10), ...cell('bare', 10)], { complete: true, now }))).toContain('(10 of 20 done (30–70%); the same rate seen)');
  const close = summarize([...cell('verified', 11), ...cell('bare', 10)], { complete: true, now });
  expect(renderMarkdown(close)).toContain('(10 of 20 done (30–70%); more than 1,000 trials per cell would tell them apart)');
  expect(renderMarkdown(close)).toContain('; 1 would take more than 1,000 trials per cell');
});

test('in a browser: the answer and the ungated false successes above the fold at 1280 px; at 390 px every rate readable with no horizontal scroll', async ({ page }, testInfo) => {
  const runs = heldOut();
  const html = renderHtml(summarize(runs, { complete: true, now, gates, prices }), runs);
  writeFileSync(testInfo.outputPath('index.html'), html);
  await page.setViewportSize({ width: 1280, height: 800 });
  // Its text, not its file: the test's browser sees nothing of the project (docs/security.md).
  await page.setContent(html);
  const fold = async (selector: string) => {
    const box = (await page.locator(selector).first().boundingBox())!;
    expect(box.y + box.height, `${selector} above the fold`).toBeLessThanOrEqual(800);
  };
  await expect(page.locator('#answer .ship')).toContainText('Ship: harness-eval · anthropic:claude-sonnet-4-20250514 · guardrails+verify');
  await expect(page.locator('#answer li.ungated')).toContainText('under no gate');
  await fold('#answer .ship');
  await fold('#answer li.ungated');
  await fold('#verdict li:has-text("not decided by the data")');
  // What each layer buys comes after the heatmaps, its layers and options in words; a matrix with nothing to compare has no such section.
  await expect(page.locator('#heatmaps ~ #ablation tr.group')).toHaveText(['+ guardrails (compaction half, maxIterations 15) + verify estimate: added together']);
  expect(renderHtml(summarize(runs.filter((run) => run.layers === 'bare'), { complete: true, now }), [])).not.toContain('id="ablation"');
  await testInfo.attach('report-1280.png', { body: await page.screenshot(), contentType: 'image/png' });

  await page.setViewportSize({ width: 390, height: 844 });
  expect(await page.evaluate(() => document.scrollingElement!.scrollWidth)).toBeLessThanOrEqual(390);
  // Every rate's text (heatmaps, the cells' cards) lies inside the screen.
  const rates = page.locator('.heat .rate, .heat small, #cells td[data-label$="rate"]');
  expect(await rates.count()).toBeGreaterThan(16);
  for (const box of await rates.evaluateAll((elements) => elements.map((element) => element.getBoundingClientRect().toJSON() as DOMRect))) {
    expect(box.width).toBeGreaterThan(0);
    expect(box.left).toBeGreaterThanOrEqual(0);
    expect(box.right).toBeLessThanOrEqual(390);
  }
  // The runs table's test column is a line of the card, not a sliver.
  expect((await page.locator('#runs td.test').first().boundingBox())!.width).toBeGreaterThan(250);
  const phone = await page.screenshot({ fullPage: true });
  // The whole page's screenshot is as wide as the screen: nothing lies beyond it to scroll to (a PNG's width is at byte 16).
  expect(phone.readUInt32BE(16)).toBe(390);
  await testInfo.attach('report-390.png', { body: phone, contentType: 'image/png' });
});
