import { appendFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { fromCompletion } from '../src/models/wire-openai.ts';
import { addUsage } from '../src/models/types.ts';
import { budgetSpent, LEDGER_ENV, openRunLedger, parseCostOptions, runLedger } from '../src/playwright/cost.ts';
import HarnessReporter from '../src/playwright/reporter.ts';
import { renderHtml, renderMarkdown } from '../src/report/files.ts';
import { costSuccess, tokensCost } from '../src/report/cost.ts';
import { summarize } from '../src/report/summarize.ts';
import { summarySchema, type AttachedRunRecord } from '../src/report/types.ts';
import { attachedRunRecord } from './support.ts';

/** Prices with cached input, a run's and a matrix's cost, the cost–success view and its Pareto front, and bad prices or budgets in one line. */

let nextId = 0;
function run(fields: Partial<Omit<AttachedRunRecord, 'test'>> = {}): AttachedRunRecord {
  const id = `run${nextId++}`;
  return attachedRunRecord({ ...fields, test: { id, title: id } });
}

test('cached input tokens are read from the OpenAI usage, summed over calls, and priced at the cached price', () => {
  const completion = (usage: object) => ({ id: 'c', created: 0, model: 'm', object: 'chat.completion', choices: [{ index: 0, finish_reason: 'stop', logprobs: null, message: { role: 'assistant', content: 'hi', refusal: null } }], usage }) as never;
  const cached = fromCompletion(completion({ prompt_tokens: 1_000, completion_tokens: 10, total_tokens: 1_010, prompt_tokens_details: { cached_tokens: 800 } })).usage;
  expect(cached).toEqual({ input: 1_000, output: 10, cachedInput: 800 });
  // A server that says nothing of a cache: the whole input is priced in full.
  expect(fromCompletion(completion({ prompt_tokens: 1_000, completion_tokens: 10 })).usage).toEqual({ input: 1_000, output: 10 });
  expect(addUsage(addUsage({ input: 0, output: 0 }, cached), { input: 500, output: 5 })).toEqual({ input: 1_500, output: 15, cachedInput: 800 });
  // $2.50 per million input, $1.25 cached, $10 output.
  const price = { input: 2.5, cachedInput: 1.25, output: 10 };
  expect(tokensCost({ input: 1_000_000, output: 100_000, cachedInput: 800_000 }, price)).toBeCloseTo(0.2 * 2.5 + 0.8 * 1.25 + 0.1 * 10, 10);
  // No cached price: cached tokens cost what input costs.
  expect(tokensCost({ input: 1_000_000, output: 0, cachedInput: 800_000 }, { input: 2.5, output: 10 })).toBeCloseTo(2.5, 10);
});

test('a run, a cell and the matrix have a cost: the reporter prices its runs, else each run’s own cost stands', () => {
  const runs = [
    run({ model: 'openai:gpt-4o', tokens: { input: 1_000_000, output: 100_000, cachedInput: 500_000 } }),
    run({ model: 'openai:gpt-4o', tokens: { input: 1_000_000, output: 100_000 } }),
    // Priced in the worker (the `prices` use option): the reporter has no price for it.
    run({ model: 'ollama:llama3.1', tokens: { input: 10, output: 10 }, cost: 0.25 }),
    run({ model: 'ollama:llama3.1', tokens: { input: 10, output: 10 }, cost: 0.5 }),
    run({ model: 'scripted:diligent' }),
  ];
  const summary = summarize(runs, { complete: true, prices: { 'openai:gpt-4o': { input: 2, cachedInput: 1, output: 10 } } });
  const cost = Object.fromEntries(summary.cells.map((cell) => [cell.model, cell.cost]));
  expect(cost['openai:gpt-4o']).toBeCloseTo(0.5 * 2 + 0.5 * 1 + 1 + 2 * 1 + 1, 10);
  expect(cost['ollama:llama3.1']).toBeCloseTo(0.75, 10);
  expect(cost['scripted:diligent']).toBeUndefined();
  expect(summary.cells.find((cell) => cell.model === 'openai:gpt-4o')!.tokens).toEqual({ input: 2_000_000, output: 200_000, cachedInput: 500_000, unknownRuns: 0 });
  expect(summary.totals.cost).toBeCloseTo(5.5 + 0.75, 10);
  expect(() => summarySchema.parse(summary)).not.toThrow();
  const markdown = renderMarkdown(summary);
  expect(markdown).toContain('cost $6.25');
  expect(markdown).toContain('$5.50 ($2.75 a run)');
  expect(markdown).toContain('2,000,000 (500,000 cached) / 200,000');
  // A model named by its matrix key is priced by its id.
  const named = run({ model: 'mini-t0', tokens: { input: 1_000_000, output: 0 }, condition: { agent: 'harness-eval', model: { id: 'openai:gpt-4o', temperature: 0 }, layers: 'bare', site: 'hn-recorded' } });
  expect(summarize([named], { complete: true, prices: { 'openai:gpt-4o': { input: 2, output: 10 } } }).cells[0]!.cost).toBe(2);
  // No prices at all: no cost anywhere, no chart.
  const unpriced = summarize([run()], { complete: true });
  expect(unpriced.totals.cost).toBeUndefined();
  expect(unpriced.costSuccess).toBeUndefined();
});

test('cost against success per task set: each configuration’s cost per run and success interval, the Pareto front marked, in summary.json, summary.md and index.html', () => {
  const cell = (model: string, layers: string, task: string, successes: number, n: number, costEach: number) =>
    Array.from({ length: n }, (_, i) => run({ task, model, layers, actual: i < successes, claimed: i < successes, cost: costEach, condition: { agent: 'harness-eval', model, layers, site: 'hn-recorded' } }));
  const runs = [
    // cheap and weak, dear and strong, and one dearer and weaker than the strong one: dominated.
    ...cell('openai:mini', 'bare', 'a', 2, 10, 0.01),
    ...cell('openai:mini', 'bare', 'b', 3, 10, 0.01),
    ...cell('openai:big', 'bare', 'a', 9, 10, 0.1),
    ...cell('openai:big', 'bare', 'b', 8, 10, 0.1),
    ...cell('openai:big', 'verified', 'a', 7, 10, 0.2),
    ...cell('openai:big', 'verified', 'b', 7, 10, 0.2),
    // Another task set: only task a.
    ...cell('openai:mini', 'verified', 'a', 5, 10, 0.02),
  ];
  const summary = summarize(runs, { complete: true });
  const sets = summary.costSuccess!;
  expect(sets.map((set) => set.tasks)).toEqual([['a'], ['a', 'b']]);
  const both = sets[1]!;
  expect(both.points.map((point) => [point.model, point.layers, Number(point.costPerRun.toFixed(6)), point.successRate.value, point.front])).toEqual([
    ['openai:mini', 'bare', 0.01, 0.25, true],
    ['openai:big', 'bare', 0.1, 0.85, true],
    ['openai:big', 'verified', 0.2, 0.7, false],
  ]);
  expect(both.points[0]!.runs).toBe(20);
  expect(both.points[0]!.successRate.low).toBeGreaterThan(0);
  expect(both.points[0]!.successRate.high).toBeLessThan(0.5);
  expect(sets[0]!.points).toEqual([expect.objectContaining({ model: 'openai:mini', layers: 'verified', front: true })]);
  expect(costSuccess(summary.cells)).toEqual(sets);

  const html = renderHtml(summary, runs);
  const section = html.slice(html.indexOf('<section id="cost-success">'), html.indexOf('</section>', html.indexOf('<section id="cost-success">')));
  expect(section).toContain('<h2>Cost against success</h2>');
  expect(section.match(/<svg class="cost-chart"/g)).toHaveLength(2);
  // The front joined by a line; every point with its interval bar and its numbered label.
  expect(section.match(/<polyline/g)).toHaveLength(1);
  expect(section.match(/<g class="point front">/g)).toHaveLength(3);
  expect(section.match(/<g class="point">/g)).toHaveLength(1);
  expect(section).toContain('openai:big · verified: $0.2000 a run, success 70%');
  // Each run's own cost, in its row.
  expect(html.match(/<b>cost<\/b> \$0\.2000/g)).toHaveLength(20);

  const markdown = renderMarkdown(summary);
  const part = markdown.slice(markdown.indexOf('## Cost against success'));
  expect(part).toContain('2 tasks · hn-recorded (a, b):');
  expect(part).toContain('1. harness-eval · openai:mini · bare: $0.0100 a run, success 25% (11–47%), 20 runs, on the front');
  expect(part).toContain('3. harness-eval · openai:big · verified: $0.2000 a run, success 70% (48–85%), 20 runs\n');
  // Plain text: no HTML, no entities.
  expect(part).not.toMatch(/[<>]|&[a-z]+;/);
});

/** Doubles at $0 (one success rate each) beside priced models: the chart a suite of offline doubles draws. */
function doublesAndModels(): AttachedRunRecord[] {
  const cell = (model: string, layers: string, successes: number, n: number, costEach: number) =>
    Array.from({ length: n }, (_, i) => run({ task: 'a', model, layers, actual: i < successes, claimed: true, cost: costEach, condition: { agent: 'harness-eval', model, layers, site: 'hn-recorded' } }));
  return [
    ...cell('scripted:diligent', 'bare', 5, 5, 0),
    ...cell('scripted:diligent', 'verified', 5, 5, 0),
    ...cell('scripted:overclaimer', 'bare', 0, 5, 0),
    ...cell('scripted:overclaimer', 'verified', 0, 5, 0),
    ...cell('scripted:lazy', 'bare', 1, 5, 0),
    ...cell('openai:mini', 'bare', 2, 5, 0.01),
    ...cell('openai:mini', 'verified', 2, 5, 0.0101),
    ...cell('openai:big', 'bare', 4, 5, 0.1),
  ];
}

test('a configuration that cost nothing (a double) is off the Pareto front and beats none: the front is the priced ones’, and the reports say “no cost”', () => {
  const summary = summarize(doublesAndModels(), { complete: true });
  const [set] = summary.costSuccess!;
  // At $0 with every run a success, the double alone was the front; now the front is the priced configurations'.
  expect(set!.points.filter((point) => point.front).map((point) => `${point.model} · ${point.layers}`)).toEqual(['openai:mini · bare', 'openai:big · bare']);
  expect(set!.points.filter((point) => point.costPerRun === 0).every((point) => !point.front)).toBe(true);
  expect(renderMarkdown(summary)).toContain('harness-eval · scripted:diligent · bare: no cost (off the front), success 100% (57–100%), 5 runs\n');
});

test('the cost chart’s labels never overlap, in a browser: points at one spot (doubles at $0) share a label, and near ones move apart', async ({ page }) => {
  const summary = summarize(doublesAndModels(), { complete: true });
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.setContent(renderHtml(summary, []));
  // Every text of the chart that is a point's number (or numbers): no axis label is only digits.
  const labels = page.locator('svg.cost-chart text').filter({ hasText: /^\d+(, \d+)*$/ });
  const texts = await labels.allTextContents();
  expect(texts.flatMap((text) => text.split(', ')).map(Number).sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
  const boxes = await Promise.all((await labels.all()).map(async (label) => (await label.boundingBox())!));
  const chart = (await page.locator('svg.cost-chart').boundingBox())!;
  for (const [i, a] of boxes.entries()) {
    expect(a.x >= chart.x && a.x + a.width <= chart.x + chart.width && a.y >= chart.y && a.y + a.height <= chart.y + chart.height, `label ${texts[i]} inside the chart`).toBe(true);
    for (const [j, b] of boxes.entries()) {
      if (j <= i) continue;
      const apart = a.x + a.width <= b.x || b.x + b.width <= a.x || a.y + a.height <= b.y || b.y + b.height <= a.y;
      expect(apart, `labels ${texts[i]} and ${texts[j]} overlap`).toBe(true);
    }
  }
});

test('bad prices and budgets are one line naming the field: a negative price, an unknown provider, a budget of 0 or less', () => {
  expect(() => parseCostOptions({ prices: { 'openai:gpt-4o': { input: -1, output: 2 } } })).toThrow(/^harness-eval options: prices\.openai:gpt-4o\.input: Too small: expected number to be >=0$/);
  expect(() => parseCostOptions({ prices: { 'openai:gpt-4o': { input: 1, cachedInput: -0.5, output: 2 } } })).toThrow(/^harness-eval options: prices\.openai:gpt-4o\.cachedInput: Too small/);
  expect(() => parseCostOptions({ prices: { 'opnai:gpt-4o': { input: 1, output: 2 } } })).toThrow(/^harness-eval options: prices\.opnai:gpt-4o: unknown provider "opnai" \(a model id is provider:name, provider one of openai, ollama, scripted\)$/);
  expect(() => parseCostOptions({ prices: { 'gpt-4o': { input: 1, output: 2 } } })).toThrow(/^harness-eval options: prices\.gpt-4o: unknown provider \(/);
  expect(() => parseCostOptions({ prices: { 'openai:gpt-4o': { input: 1, output: 2, outptu: 3 } } })).toThrow(/^harness-eval options: prices\.openai:gpt-4o: Unrecognized key: "outptu"$/);
  for (const maxCost of [0, -1]) expect(() => parseCostOptions({ maxCost })).toThrow(/^harness-eval options: maxCost: must be more than 0 \(USD\)$/);
  expect(() => parseCostOptions({ maxCost: '5' })).toThrow(/^harness-eval options: maxCost: Invalid input: expected number, received string$/);
  expect(parseCostOptions({ prices: { 'openai:gpt-4o': { input: 1, output: 2 } }, maxCost: 5 })).toEqual({ prices: { 'openai:gpt-4o': { input: 1, output: 2 } }, maxCost: 5 });
  for (const bad of [() => parseCostOptions({ maxCost: 0 }), () => new HarnessReporter({ prices: { 'nope:x': { input: 1, output: 1 } } })]) {
    try {
      bad();
      throw new Error('did not throw');
    } catch (error) {
      expect((error as Error).name).toBe('InputError');
      expect((error as Error).message).not.toContain('\n');
    }
  }
  expect(() => new HarnessReporter({ prices: { 'nope:x': { input: 1, output: 1 } } })).toThrow(/^harness-eval reporter options: prices\.nope:x: unknown provider "nope"/);
});

test('the run-wide ledger: made once by the runner, shared by every worker, removed by whoever made it; each call holds its worst case there and settles it to its cost', () => {
  const env: NodeJS.ProcessEnv = {};
  expect(() => runLedger(env)).toThrow(/^maxCost: this run has no ledger \(HARNESS_EVAL_LEDGER\)/);
  const close = openRunLedger(env);
  const dir = env[LEDGER_ENV]!;
  // A second opener (the reporter after sharedBrowser()'s globalSetup) keeps the first one's.
  const again = openRunLedger(env);
  expect(env[LEDGER_ENV]).toBe(dir);
  // Two workers' views: only the file is shared.
  const [a, b] = [runLedger(env), runLedger({ ...env })];
  expect(a.spent()).toEqual({ usd: 0, largestHold: 0, refusedHold: 0 });
  const settleFirst = a.budget(1).hold(0.5)!;
  const settleSecond = b.budget(1).hold(0.4)!;
  expect(settleSecond).toBeInstanceOf(Function);
  // What the other worker holds counts: $0.2 more would pass $1.
  expect(b.budget(1).hold(0.2)).toBeUndefined();
  expect(a.spent()).toEqual({ usd: 0.9, largestHold: 0.5, refusedHold: 0.2 });
  // Settled below its hold, a call gives the rest back.
  settleFirst(0.1);
  expect(b.budget(1).hold(0.5)).toBeInstanceOf(Function);
  expect(a.spent().usd).toBeCloseTo(1, 12);
  settleSecond(0.3);
  expect(b.spent().usd).toBeCloseTo(0.9, 12);
  // Lines that would give money back (an uncontained agent writing to the ledger), and a second settle, count nothing.
  appendFileSync(join(dir, 'spent'), '-100\nNaN\nsettle x -5\n');
  settleFirst(0);
  expect(a.spent().usd).toBeCloseTo(0.9, 12);
  expect(runLedger({ ...env }).spent().usd).toBeCloseTo(0.9, 12);
  again();
  expect(existsSync(dir)).toBe(true);
  close();
  expect(existsSync(dir)).toBe(false);
  expect(env[LEDGER_ENV]).toBeUndefined();
});

test('a run starts while no call was refused for the budget and it could hold a call as large as any it held', () => {
  expect(budgetSpent({ usd: 0, largestHold: 0, refusedHold: 0 }, 1)).toBeUndefined();
  expect(budgetSpent({ usd: 0.5, largestHold: 0.5, refusedHold: 0 }, 1)).toBeUndefined();
  expect(budgetSpent({ usd: 0.6, largestHold: 0.5, refusedHold: 0 }, 1)).toBe('budget spent: $0.6000 of maxCost $1.0000: too little for a call as large as one it held ($0.5000)');
  expect(budgetSpent({ usd: 0.1, largestHold: 0.1, refusedHold: 2 }, 1)).toBe("budget spent: $0.1000 of maxCost $1.0000: a call's worst case did not fit ($2.0000)");
  expect(budgetSpent({ usd: 1, largestHold: 0, refusedHold: 0 }, 1)).toBe('budget spent: $1.0000 of maxCost $1.0000');
});
