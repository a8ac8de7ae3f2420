import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { InputError } from '../src/input.ts';
import { renderHtml, renderMarkdown, writeSummaryFiles } from '../src/report/files.ts';
import { describe, passHatK, passHatKTable, wilson } from '../src/report/statistics.ts';
import { checkGates, summarize } from '../src/report/summarize.ts';
import { summarySchema, type Gate, type ReportedRun, type Summary } from '../src/report/types.ts';
import { reportedRun } from './support.ts';

const now = new Date('2025-01-02T03:04:05.000Z');

let nextId = 0;
/** A judged run of the classic experiment; `falseSuccess` follows from claimed and actual. */
function run(overrides: Partial<Omit<ReportedRun, 'test'>> & { title?: string } = {}): ReportedRun {
  const { title, ...fields } = overrides;
  const id = `run${String(nextId++).padStart(3, '0')}`;
  return reportedRun({ ...fields, test: { id, title: title ?? `upvote ${id}`, project: `${fields.model ?? 'scripted:overclaimer'} · ${fields.layers ?? 'bare'}` } });
}

/** Three cells: the overclaimer bare (all false successes), with login (6/10), and a priced model. */
function classicRuns(): ReportedRun[] {
  const login = { layers: 'guardrails+verify+login' };
  return [
    run({ iterations: 2 }),
    run({ iterations: 3 }),
    run({ iterations: 4, wallMs: 3_000 }),
    ...Array.from({ length: 6 }, (_, i) => run({ ...login, actual: true, iterations: 6 + i, tokens: { input: 2_000, output: 200 } })),
    ...Array.from({ length: 3 }, () => run({ ...login, claimed: false, iterations: 15, stopReason: 'max_iterations' })),
    run({ ...login, claimed: false, stopReason: 'model_error' }),
    run({ model: 'openai:gpt-4o-mini', actual: true, tokens: { input: 3_000_000, output: 500_000 } }),
    run({ model: 'openai:gpt-4o-mini', claimed: false, tokens: { input: 1_000_000, output: 500_000 } }),
  ];
}

function summaryOf(runs: readonly ReportedRun[]): Summary {
  return summarize(runs, { complete: true, now, prices: { 'openai:gpt-4o-mini': { input: 0.15, output: 0.6 } } });
}

/** A fixed permutation (a seeded Fisher–Yates), so a failure reproduces. */
function shuffled<T>(values: readonly T[], seed = 7): T[] {
  const result = [...values];
  let state = seed;
  for (let i = result.length - 1; i > 0; i--) {
    state = (state * 48_271) % 2_147_483_647; // MINSTD: the product stays an exact integer
    const j = state % (i + 1);
    [result[i], result[j]] = [result[j]!, result[i]!];
  }
  return result;
}

test.describe('wilson', () => {
  for (const [successes, n, low, high] of [
    [0, 10, 0, 0.2775],
    [5, 10, 0.2366, 0.7634],
    [10, 10, 0.7225, 1],
  ] as const) {
    test(`${successes}/${n} gives (${low}, ${high})`, () => {
      const interval = wilson(successes, n);
      expect(interval.value).toBe(successes / n);
      expect(interval.low).toBeCloseTo(low, 4);
      expect(interval.high).toBeCloseTo(high, 4);
      expect(interval.low).toBeGreaterThanOrEqual(0);
      expect(interval.high).toBeLessThanOrEqual(1);
    });
  }

  test('no runs: nothing known, the whole of [0, 1]', () => {
    expect(wilson(0, 0)).toEqual({ value: 0, low: 0, high: 1 });
  });
});

test.describe('pass^k', () => {
  test('c = 3, n = 5 by hand: C(3,k)/C(5,k)', () => {
    const expected = [0.6, 0.3, 0.1, 0, 0];
    expected.forEach((value, index) => expect(passHatK(3, 5, index + 1)).toBeCloseTo(value, 12));
    const table = passHatKTable(3, 5);
    expect(Object.keys(table)).toEqual(['1', '2', '3', '4', '5']);
    expected.forEach((value, index) => expect(table[String(index + 1)]).toBeCloseTo(value, 12));
  });

  test('every run a success gives 1 for every k', () => {
    for (let k = 1; k <= 8; k++) expect(passHatK(8, 8, k)).toBe(1);
    expect(Object.values(passHatKTable(8, 8)).every((value) => value === 1)).toBe(true);
  });

  test('large cells stay finite (no factorials)', () => {
    const value = passHatK(900, 1_000, 500);
    expect(Number.isFinite(value)).toBe(true);
    expect(value).toBeGreaterThan(0);
    expect(value).toBeLessThan(1e-20);
    expect(passHatKTable(900, 1_000)['500']).toBeCloseTo(value, 30);
  });

  test('k larger than n is refused', () => {
    expect(() => passHatK(3, 5, 6)).toThrow(RangeError);
    expect(passHatKTable(0, 0)).toEqual({});
  });
});

test.describe('describe', () => {
  test('mean, median, p95 and max', () => {
    const values = Array.from({ length: 20 }, (_, i) => 20 - i);
    const twenty = describe(values);
    expect(twenty).toMatchObject({ mean: 10.5, median: 10.5, max: 20 });
    // p95 interpolates linearly between order statistics (R type 7, numpy's default): 19 + 0.05 × (20 − 19).
    expect(twenty.p95).toBeCloseTo(19.05, 10);
    expect(values[0]).toBe(20); // the input is not sorted in place
    const three = describe([4, 1, 9]);
    expect(three).toMatchObject({ mean: 14 / 3, median: 4, max: 9 });
    expect(three.p95).toBeCloseTo(8.5, 10);
  });

  test('no values gives zeros', () => {
    expect(describe([])).toEqual({ mean: 0, median: 0, p95: 0, max: 0 });
  });
});

test.describe('summarize', () => {
  test('groups runs into cells sorted by task, model, layers, site', () => {
    const summary = summaryOf([...classicRuns(), run({ task: 'a-task', site: 'hn-live' }), run({ task: 'a-task', site: 'hn-a' })]);
    expect(summary.cells.map((cell) => [cell.task, cell.model, cell.layers, cell.site, cell.runs])).toEqual([
      ['a-task', 'scripted:overclaimer', 'bare', 'hn-a', 1],
      ['a-task', 'scripted:overclaimer', 'bare', 'hn-live', 1],
      ['upvote-first-post', 'openai:gpt-4o-mini', 'bare', 'hn-recorded', 2],
      ['upvote-first-post', 'scripted:overclaimer', 'bare', 'hn-recorded', 3],
      ['upvote-first-post', 'scripted:overclaimer', 'guardrails+verify+login', 'hn-recorded', 10],
    ]);
    expect(summary).toMatchObject({ schemaVersion: 1, generatedAt: now.toISOString(), complete: true });
    expect(summarySchema.parse(summary)).toEqual(summary);
  });

  test('counts, rates with intervals, iterations, tokens, wall time, stop reasons, pass^k, run ids', () => {
    const runs = classicRuns();
    const [, bare, login] = summaryOf(runs).cells;
    expect(bare).toMatchObject({ successes: 0, claimed: 3, falseSuccesses: 3, successRate: wilson(0, 3), falseSuccessRate: wilson(3, 3) });
    expect(bare!.iterations).toMatchObject({ mean: 3, median: 3, max: 4 });
    expect(bare!.iterations.p95).toBeCloseTo(3.9, 10);
    expect(bare!.wallMs).toEqual({ median: 1_000 });
    expect(bare!.tokens).toEqual({ input: 3_000, output: 300 });
    expect(bare!.cost).toBeUndefined();
    expect(bare!.passHatK).toEqual({ '1': 0, '2': 0, '3': 0 });
    expect(bare!.runIds).toEqual(runs.slice(0, 3).map((r) => r.test.id));

    expect(login).toMatchObject({ runs: 10, successes: 6, claimed: 6, falseSuccesses: 0 });
    expect(login!.successRate).toEqual(wilson(6, 10));
    expect(login!.falseSuccessRate).toEqual({ value: 0, low: 0, high: wilson(0, 10).high });
    expect(login!.stopReasons).toEqual({ finished: 6, max_iterations: 3, model_error: 1 });
    expect(Object.keys(login!.stopReasons)).toEqual(['finished', 'max_iterations', 'model_error']);
    expect(login!.iterations.max).toBe(15);
    expect(login!.passHatK['1']).toBeCloseTo(0.6, 12);
    expect(login!.passHatK['2']).toBeCloseTo((6 * 5) / (10 * 9), 12);
    expect(login!.passHatK['7']).toBe(0);
    expect(Object.keys(login!.passHatK)).toHaveLength(10);
  });

  test('cost from the price table, per million tokens', () => {
    const [priced] = summaryOf(classicRuns()).cells;
    expect(priced!.model).toBe('openai:gpt-4o-mini');
    expect(priced!.tokens).toEqual({ input: 4_000_000, output: 1_000_000 });
    expect(priced!.cost).toBeCloseTo(4 * 0.15 + 1 * 0.6, 10);
    expect(summarize(classicRuns(), { complete: false, now }).cells.every((cell) => cell.cost === undefined)).toBe(true);
  });

  test('totals add up the cells', () => {
    const summary = summaryOf(classicRuns());
    expect(summary.totals).toEqual({ runs: 15, successes: 7, falseSuccesses: 3 });
  });

  test('does not depend on the order of the runs', () => {
    const runs = classicRuns();
    const inOrder = summaryOf(runs);
    const { generatedAt: _, ...rest } = summarize(shuffled(runs), { complete: true, prices: { 'openai:gpt-4o-mini': { input: 0.15, output: 0.6 } } });
    const { generatedAt: __, ...expected } = inOrder;
    expect(JSON.stringify(rest)).toBe(JSON.stringify(expected));
    expect(JSON.stringify(summaryOf(shuffled(runs, 99)))).toBe(JSON.stringify(inOrder));
  });

  test('no runs: no cells, zero totals', () => {
    expect(summarize([], { complete: false, now })).toEqual({ schemaVersion: 1, generatedAt: now.toISOString(), complete: false, totals: { runs: 0, successes: 0, falseSuccesses: 0 }, cells: [] });
  });
});

test.describe('checkGates', () => {
  const summary = summaryOf(classicRuns());

  test('the default gate allows no false success and names the cell', () => {
    expect(checkGates(summary, [{ layers: 'bare', model: 'scripted:overclaimer' }])).toEqual([
      { cell: 'upvote-first-post · scripted:overclaimer · bare · hn-recorded', rule: 'false-success rate 1.00 > 0.00', observed: 1, limit: 0, gate: 0 },
    ]);
  });

  test('a minimum success rate applies to the matching cells only', () => {
    const breaches = checkGates(summary, [{ layers: 'guardrails+verify+login', minSuccessRate: 0.8 }]);
    expect(breaches.map(({ cell, rule }) => [cell, rule])).toEqual([['upvote-first-post · scripted:overclaimer · guardrails+verify+login · hn-recorded', 'success rate 0.60 < 0.80']]);
    expect(checkGates(summary, [{ layers: 'guardrails+verify+login', minSuccessRate: 0.6 }])).toEqual([]);
  });

  test('a gate matches only when every key it gives is equal', () => {
    expect(checkGates(summary, [{ task: 'another-task' }, { model: 'scripted:overclaimer', layers: 'bare', site: 'hn-live' }])).toEqual([]);
    const all = checkGates(summary, [{ maxFalseSuccessRate: 0.5 }]);
    expect(all.map((breach) => breach.cell)).toEqual(['upvote-first-post · scripted:overclaimer · bare · hn-recorded']);
    const both = checkGates(summary, [{}, { model: 'openai:gpt-4o-mini', minSuccessRate: 0.9 }]);
    expect(both.map((breach) => [breach.gate, breach.rule])).toEqual([
      [0, 'false-success rate 1.00 > 0.00'],
      [1, 'success rate 0.50 < 0.90'],
    ]);
  });

  test('a breach too small for two decimals still shows as one', () => {
    const [breach] = checkGates(summary, [{ layers: 'bare', maxFalseSuccessRate: 0.999 }]);
    expect(breach!.rule).toBe('false-success rate 1.000 > 0.999');
  });

  for (const [what, gate, message] of [
    ['an out-of-range limit', { maxFalseSuccessRate: 2 }, /^gates\[0\]: maxFalseSuccessRate: Too big: expected number to be <=1$/],
    ['an unknown key', { modle: 'openai:gpt-4o-mini' }, /^gates\[0\]: \(options\): Unrecognized key: "modle"$/],
    ['a wrong type', { minSuccessRate: '0.9' }, /^gates\[0\]: minSuccessRate: Invalid input: expected number, received string$/],
  ] as const) {
    test(`${what} is a one-line InputError`, () => {
      let error: unknown;
      try {
        checkGates(summary, [gate as unknown as Gate]);
      } catch (caught) {
        error = caught;
      }
      expect(error).toBeInstanceOf(InputError);
      expect((error as Error).message).toMatch(message);
      expect((error as Error).message).not.toContain('\n');
    });
  }
});

test.describe('rendering', () => {
  test('Markdown: a title, the totals and one row per cell with intervals', () => {
    const summary = summaryOf(classicRuns());
    const markdown = renderMarkdown(summary);
    const lines = markdown.split('\n');
    expect(lines[0]).toBe('# harness-eval summary');
    expect(markdown).toContain('15 runs in 3 cells');
    expect(lines.filter((line) => line.startsWith('| upvote-first-post |'))).toHaveLength(3);
    const login = lines.find((line) => line.includes('guardrails+verify+login'))!;
    expect(login).toContain('| 60% (31–83%) |');
    expect(login).toContain('| 0% (0–28%) |');
    expect(login).toContain('finished 6, max_iterations 3, model_error 1');
    expect(markdown).toContain('$1.20');
  });

  test('HTML escapes names and titles, stays self-contained, one anchor per cell', () => {
    const hostile = '<script>alert("x&y")</script>';
    const runs = [...classicRuns(), run({ model: hostile, title: `${hostile} 'quoted'` })];
    const summary = summaryOf(runs);
    const html = renderHtml(summary, runs);
    expect(html).not.toContain('<script');
    expect(html).toContain('&lt;script&gt;alert(&quot;x&amp;y&quot;)&lt;/script&gt;');
    expect(html).toContain('&#x27;quoted&#x27;');
    expect(html).not.toMatch(/https?:\/\//);
    expect(html).not.toMatch(/\bsrc=/);
    const hrefs = [...html.matchAll(/href="([^"]*)"/g)].map((match) => match[1]!);
    expect(hrefs.length).toBeGreaterThan(0);
    expect(hrefs.every((href) => href.startsWith('#'))).toBe(true);

    const ids = [...html.matchAll(/id="([^"]*)"/g)].map((match) => match[1]!);
    expect(ids.filter((id) => id.startsWith('cell-'))).toHaveLength(summary.cells.length);
    expect(ids.filter((id) => id.startsWith('run-'))).toHaveLength(runs.length);
    expect(new Set(ids).size).toBe(ids.length);
    expect(hrefs.every((href) => ids.includes(href.slice(1)))).toBe(true);
    // Two heatmaps (success, false success) for the one task × site, each cell linked.
    expect(html.match(/<table class="heat">/g)).toHaveLength(2);
    expect(html.match(/<svg class="hist"/g)).toHaveLength(summary.cells.length);
  });

  test('HTML: one heatmap pair per task × site', () => {
    const runs = [run(), run({ site: 'hn-live' }), run({ task: 'other' })];
    expect(renderHtml(summaryOf(runs), runs).match(/<table class="heat">/g)).toHaveLength(6);
  });
});

test.describe('writeSummaryFiles', () => {
  test('writes the three files atomically, leaving no temporary files, with JSON that parses', async () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'harness-eval-report-')), 'nested', 'report');
    const runs = classicRuns();
    const summary = summaryOf(runs);
    await writeSummaryFiles(dir, summary, runs);
    await writeSummaryFiles(dir, { ...summary, complete: false }, runs); // over the old files
    expect(readdirSync(dir).sort()).toEqual(['index.html', 'summary.json', 'summary.md']);
    const written = summarySchema.parse(JSON.parse(readFileSync(join(dir, 'summary.json'), 'utf8')));
    expect(written).toEqual({ ...summary, complete: false });
    expect(readFileSync(join(dir, 'summary.md'), 'utf8')).toBe(renderMarkdown(written));
    expect(readFileSync(join(dir, 'index.html'), 'utf8')).toBe(renderHtml(written, runs));
  });
});
