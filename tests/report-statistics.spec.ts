import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { InputError } from '../src/input.ts';
import { renderHtml, renderMarkdown, writeSummaryFiles } from '../src/report/files.ts';
import { canDetectAnyChange, describe, detectionPower, differs, newcombe, passHatK, passHatKTable, trialsToDetect, wilson } from '../src/report/statistics.ts';
import { cellLabel, checkGates, summarize, unmatchedGates } from '../src/report/summarize.ts';
import { parseRunAttachment } from '../src/report/trials.ts';
import { summarySchema, type Gate, type AttachedRunRecord, type Summary } from '../src/report/types.ts';
import { attachedRunRecord } from './support.ts';

const now = new Date('2025-01-02T03:04:05.000Z');

let nextId = 0;
/** A judged run of the classic experiment; `falseSuccess` follows from claimed and actual. */
function run(overrides: Partial<Omit<AttachedRunRecord, 'test'>> & { title?: string } = {}): AttachedRunRecord {
  const { title, ...fields } = overrides;
  const id = `run${String(nextId++).padStart(3, '0')}`;
  return attachedRunRecord({ ...fields, test: { id, title: title ?? `upvote ${id}`, project: `${fields.model ?? 'scripted:overclaimer'} · ${fields.layers ?? 'bare'}` } });
}

/** Three cells: the overclaimer bare (all false successes), with login (6/10), and a priced model. */
function classicRuns(): AttachedRunRecord[] {
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

function summaryOf(runs: readonly AttachedRunRecord[]): Summary {
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
    expect(summary).toMatchObject({ schemaVersion: 4, generatedAt: now.toISOString(), complete: true, planned: 17, recorded: 17, missing: [] });
    expect(summarySchema.parse(summary)).toEqual(summary);
  });

  test('counts, rates with intervals, iterations, tokens, wall time, stop reasons, pass^k, run ids', () => {
    const runs = classicRuns();
    const [, bare, login] = summaryOf(runs).cells;
    expect(bare).toMatchObject({ successes: 0, claimed: 3, falseSuccesses: 3, successRate: wilson(0, 3), falseSuccessRate: wilson(3, 3) });
    expect(bare!.iterations).toMatchObject({ mean: 3, median: 3, max: 4 });
    expect(bare!.iterations.p95).toBeCloseTo(3.9, 10);
    expect(bare!.wallMs).toEqual({ median: 1_000 });
    expect(bare!.tokens).toEqual({ input: 3_000, output: 300, unknownRuns: 0 });
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
    expect(priced!.tokens).toEqual({ input: 4_000_000, output: 1_000_000, unknownRuns: 0 });
    expect(priced!.cost).toBeCloseTo(4 * 0.15 + 1 * 0.6, 10);
    expect(summarize(classicRuns(), { complete: false, now }).cells.every((cell) => cell.cost === undefined)).toBe(true);
  });

  test('totals add up the cells', () => {
    const summary = summaryOf(classicRuns());
    expect(summary.totals).toEqual({ runs: 15, successes: 7, falseSuccesses: 3, falseSuccessAttempts: 0, falseFailures: 0, sideEffectRuns: 0, incomplete: 0, retried: 0, cost: expect.closeTo(4 * 0.15 + 1 * 0.6, 10) });
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
    expect(summarize([], { complete: false, now })).toEqual({
      schemaVersion: 4,
      generatedAt: now.toISOString(),
      complete: false,
      planned: 0,
      recorded: 0,
      missing: [],
      totals: { runs: 0, successes: 0, falseSuccesses: 0, falseSuccessAttempts: 0, falseFailures: 0, sideEffectRuns: 0, incomplete: 0, retried: 0 },
      cells: [],
      ablation: [],
    });
  });
});

test.describe('checkGates', () => {
  const summary = summaryOf(classicRuns());

  test('the default gate allows no false success and names the cell', () => {
    expect(checkGates(summary, [{ layers: 'bare', model: 'scripted:overclaimer' }])).toEqual([
      { cell: 'upvote-first-post · harness-eval · scripted:overclaimer · bare · hn-recorded', rule: 'false-success rate 1.00 > 0.00', observed: 1, limit: 0, gate: 0 },
    ]);
  });

  test('a minimum success rate applies to the matching cells only', () => {
    const breaches = checkGates(summary, [{ layers: 'guardrails+verify+login', minSuccessRate: 0.8 }]);
    expect(breaches.map(({ cell, rule }) => [cell, rule])).toEqual([['upvote-first-post · harness-eval · scripted:overclaimer · guardrails+verify+login · hn-recorded', 'success rate 0.60 < 0.80']]);
    expect(checkGates(summary, [{ layers: 'guardrails+verify+login', minSuccessRate: 0.6 }])).toEqual([]);
  });

  test('a gate matches only when every key it gives is equal', () => {
    expect(checkGates(summary, [{ task: 'another-task' }, { model: 'scripted:overclaimer', layers: 'bare', site: 'hn-live' }])).toEqual([]);
    const all = checkGates(summary, [{ maxFalseSuccessRate: 0.5 }]);
    expect(all.map((breach) => breach.cell)).toEqual(['upvote-first-post · harness-eval · scripted:overclaimer · bare · hn-recorded']);
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
    expect(markdown).toContain('15 runs of 15 planned in 3 cells');
    // A narrow table (configuration, success, false success, runs), then each cell's other figures as a line.
    expect(lines).toContain('## Cells: upvote-first-post · hn-recorded');
    expect(lines).toContain('| configuration | success | false success | runs |');
    expect(lines.filter((line) => line.startsWith('| harness-eval · '))).toHaveLength(3);
    const login = lines.find((line) => line.startsWith('|') && line.includes('guardrails+verify+login'))!;
    expect(login).toMatch(/^\| harness-eval · [^|]+ · guardrails\+verify\+login \| 60% \(31–83%\) \| 0% \(0–28%\) \| 10 \|$/);
    expect(lines.find((line) => line.startsWith('- ') && line.includes('guardrails+verify+login'))).toContain('stop reasons finished 6, max_iterations 3, model_error 1');
    expect(markdown).toContain('$1.20');
  });

  test('Markdown stays plain text: no HTML entities, a tag-like name kept literal by a backslash', () => {
    const runs = [...classicRuns(), run({ model: 'a > b & c <x> | &amp;' })];
    const markdown = renderMarkdown(summaryOf(runs));
    expect(markdown).toContain('a > b & c \\<x> \\| \\&amp;');
    expect(markdown).not.toMatch(/&(gt|lt);/);
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
    // Four heatmaps (success, false success, false failure, side effects) for the one task × site, each cell linked.
    expect(html.match(/<table class="heat">/g)).toHaveLength(4);
    expect(html.match(/<svg class="hist"/g)).toHaveLength(summary.cells.length);
  });

  test('HTML: one set of four heatmaps per task × site', () => {
    const runs = [run(), run({ site: 'hn-live' }), run({ task: 'other' })];
    expect(renderHtml(summaryOf(runs), runs).match(/<table class="heat">/g)).toHaveLength(12);
  });
});

test.describe('writeSummaryFiles', () => {
  test('writes the three files atomically, leaving no temporary files, with JSON that parses', async () => {
    const dir = join(mkdtempSync(test.info().outputPath('report-')), 'nested', 'report');
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

test.describe('cells keyed by what ran', () => {
  // The same names over two different sites: one with every request failing and a cap of 1, one clean.
  const faulty = { model: 'scripted:diligent', layers: 'bare', site: { name: 'hn-recorded-custom', faults: { errorRate: 1 }, maxIterations: 1 } };
  const clean = { model: 'scripted:diligent', layers: 'bare', site: { name: 'hn-recorded-custom', maxIterations: 15 } };
  const named = { model: 'scripted:diligent', site: 'hn-recorded-custom' };
  const runsUnder = () => [
    run({ ...named, condition: faulty, claimed: false }),
    run({ ...named, condition: faulty, claimed: false }),
    run({ ...named, condition: clean, actual: true }),
    run({ ...named, condition: clean, actual: true }),
  ];

  test('two conditions under one name are two cells, a site told apart by its settings, anything else by a short hash of the part that differs', () => {
    const summary = summaryOf(runsUnder());
    expect(summary.cells).toHaveLength(2);
    const sites = summary.cells.map((cell) => cell.site);
    expect(sites).toEqual(['hn-recorded-custom (faults: {"errorRate":1}, maxIterations: 1)', 'hn-recorded-custom (maxIterations: 15)']);
    // Two agents of one name (a function agent's source changed): a hash of what differs.
    const agent = (source: string) => run({ agent: 'my-agent', condition: { agent: { name: 'my-agent', source }, model: 'scripted:diligent', layers: 'bare', site: 'hn-recorded' } });
    const agents = summaryOf([agent('a'), agent('b')]).cells.map((cell) => cell.agent);
    expect(agents.every((name) => /^my-agent#[0-9a-f]{6}$/.test(name))).toBe(true);
    expect(new Set(agents).size).toBe(2);
    expect(summary.cells.map((cell) => [cell.model, cell.layers])).toEqual([['scripted:diligent', 'bare'], ['scripted:diligent', 'bare']]);
    const bySuccess = Object.fromEntries(summary.cells.map((cell) => [cell.successRate.value, cell.condition]));
    expect(bySuccess).toEqual({ 0: faulty, 1: clean });
    // Stable: the same condition gets the same label in any order, in any run.
    expect(summaryOf(shuffled(runsUnder(), 3)).cells.map((cell) => cell.site)).toEqual(sites);
  });

  test('one condition written with its keys in another order is one cell, with no hash', () => {
    const reordered = { site: { maxIterations: 15, name: 'hn-recorded-custom' }, layers: 'bare', model: 'scripted:diligent' };
    const summary = summaryOf([run({ ...named, condition: clean }), run({ ...named, condition: reordered })]);
    expect(summary.cells.map((cell) => [cell.site, cell.runs])).toEqual([['hn-recorded-custom', 2]]);
  });

  test('a gate matches a label exactly, or its name without the hash', () => {
    const summary = summaryOf(runsUnder());
    const limits = { maxFalseSuccessRate: 1, minSuccessRate: 0.5 };
    const [failing, succeeding] = [...summary.cells].sort((a, b) => a.successRate.value - b.successRate.value);
    expect(checkGates(summary, [{ site: 'hn-recorded-custom', ...limits }]).map((breach) => breach.cell)).toEqual([cellLabel(failing!)]);
    expect(checkGates(summary, [{ site: failing!.site, ...limits }])).toHaveLength(1);
    expect(checkGates(summary, [{ site: succeeding!.site, ...limits }])).toEqual([]);
    expect(unmatchedGates(summary, [{ site: 'hn-recorded-custom' }, { site: 'hn-recorded' }])).toEqual(['gates[1] {"site":"hn-recorded"}']);
  });
});

test.describe('names that say what ran', () => {
  const trace = (calls: number) => [
    { seq: 0, attempt: 1, iteration: 0, atMs: 0, type: 'run_start', task: 'Upvote the first post.', model: 'scripted:diligent', layers: [] },
    ...Array.from({ length: calls }, (_, index) => ({ seq: index + 1, attempt: 1, iteration: index + 1, atMs: 10 * (index + 1), type: 'model_response', content: 'ok', toolCalls: [], usage: { input: 10, output: 1 }, ms: 5 })),
  ];
  /** A run as the reporter reads its attachment, its trace with so many model calls; none: no trace at all; -1: an empty one. */
  const read = (agent: string, calls: number | undefined, fields: Partial<AttachedRunRecord> = {}) => {
    const record = run({ agent, layers: '-', model: 'scripted:diligent', condition: { agent: { name: agent }, model: { id: 'scripted:diligent' }, layers: null, site: 'hn-recorded' }, ...fields });
    const parsed = parseRunAttachment(JSON.stringify({ ...record, ...(calls !== undefined && { trace: calls < 0 ? [] : trace(calls) }) }), 'harness-run.json');
    if (!parsed.ok) throw new Error(parsed.error);
    return parsed.value;
  };

  test('an agent that called no model has none: null in summary.json, "-" in summary.md and index.html, from its runs\' traces, not its name', () => {
    const runs = [
      read('nop', 0),
      read('nop', 0),
      read('liar', 0, { claimed: true }),
      // A command agent that never called the gateway, and one that did once in two runs.
      read('py', 0),
      read('ts', 0),
      read('ts', 2),
      // A name says nothing: a "nop" of the user's own that called its model has it.
      read('my-nop', 3),
      // A record without a trace (attached by hand), or with an empty one (a run that never returned), says nothing of its calls: its model stays.
      read('by-hand', undefined),
      read('cut-short', -1),
    ];
    expect(runs.map((one) => one.modelCalls)).toEqual([0, 0, 0, 0, 0, 2, 3, undefined, undefined]);
    const summary = summaryOf(runs);
    expect(Object.fromEntries(summary.cells.map((cell) => [cell.agent, cell.model]))).toEqual({ nop: null, liar: null, py: null, ts: 'scripted:diligent', 'my-nop': 'scripted:diligent', 'by-hand': 'scripted:diligent', 'cut-short': 'scripted:diligent' });
    expect(JSON.parse(JSON.stringify(summary)).cells.find((cell: { agent: string }) => cell.agent === 'nop').model).toBeNull();
    expect(summarySchema.parse(JSON.parse(JSON.stringify(summary))).cells.map((cell) => cell.model)).toEqual(summary.cells.map((cell) => cell.model));
    expect(cellLabel(summary.cells.find((cell) => cell.agent === 'nop')!)).toBe('upvote-first-post · nop · - · - · hn-recorded');
    const markdown = renderMarkdown(summary);
    expect(markdown).toContain('| nop · - · - |');
    expect(markdown).not.toMatch(/\| (nop|liar|py) · scripted:diligent /);
    const html = renderHtml(summary, runs);
    expect(html).not.toMatch(/<td data-label="agent">(nop|liar|py)<\/td><td data-label="model">scripted:<wbr>diligent<\/td>/);
    expect(html).toMatch(/<td data-label="agent">nop<\/td><td data-label="model">-<\/td>/);
  });

  test('cells that called no model and differ only by the model they were given keep its name: the one thing telling them apart', () => {
    const under = (model: string) => read('nop', 0, { model, condition: { agent: { name: 'nop' }, model: { id: model }, layers: null, site: 'hn-recorded' } });
    const summary = summaryOf([under('scripted:diligent'), under('openai:gpt-4o-mini'), read('liar', 0)]);
    expect(summary.cells.map((cell) => [cell.agent, cell.model])).toEqual([
      ['liar', null],
      ['nop', 'openai:gpt-4o-mini'],
      ['nop', 'scripted:diligent'],
    ]);
  });

  test("one site under two settings is named by the setting that differs, the same in every row: never a hash, nor the bare name in one row and another's elsewhere", () => {
    const at = (task: string, startLoggedIn: boolean) => run({ task, site: 'tinydesk', condition: { agent: { name: 'harness-eval' }, model: { id: 'scripted:diligent' }, layers: [], site: { site: 'tinydesk', startLoggedIn } } });
    const runs = [at('assign-ticket', true), at('assign-ticket', false), at('close-ticket', true), at('comment', false)];
    const summary = summaryOf(runs);
    expect(summary.cells.map((cell) => [cell.task, cell.site])).toEqual([
      ['assign-ticket', 'tinydesk'],
      ['assign-ticket', 'tinydesk (startLoggedIn)'],
      ['close-ticket', 'tinydesk (startLoggedIn)'],
      ['comment', 'tinydesk'],
    ]);
    // In any order of the runs; a gate by the site's name covers both settings, by its label one.
    expect(summaryOf(shuffled(runs, 5)).cells.map((cell) => cell.site)).toEqual(summary.cells.map((cell) => cell.site));
    expect(checkGates(summary, [{ site: 'tinydesk', maxFalseSuccessRate: 0 }])).toHaveLength(4);
    expect(checkGates(summary, [{ site: 'tinydesk (startLoggedIn)', maxFalseSuccessRate: 0 }])).toHaveLength(2);
    // Settings of any kind: a value is named with its field, a flag by its name.
    const other = (site: Record<string, unknown>) => run({ site: 'shop', condition: { agent: { name: 'harness-eval' }, model: { id: 'scripted:diligent' }, layers: [], site: { site: 'shop', ...site } } });
    expect(summaryOf([other({ seed: 1, faults: { errorRate: 0.5 } }), other({ seed: 2 }), other({ seed: 2, slow: true })]).cells.map((cell) => cell.site)).toEqual(['shop (faults: {"errorRate":0.5}, seed: 1)', 'shop (seed: 2)', 'shop (seed: 2, slow)']);
  });
});

test.describe('false failures, side effects, incomplete runs and unknown tokens', () => {
  const voteElsewhere = { kind: 'vote', id: '46194762', detail: 'harness upvoted 46194762 ("Show HN: a thing")' };
  const mixed = () => [
    run({ layers: 'stall', actual: true, claimed: false }),
    run({ layers: 'stall', actual: true, sideEffects: [voteElsewhere] }),
    run({ layers: 'stall', actual: true }),
    run({ layers: 'stall', claimed: false, incomplete: true, judged: false, stopReason: 'timeout', tokens: { input: null, output: null } }),
  ];

  test('cells count and rate them, with intervals', () => {
    const [cell] = summaryOf(mixed()).cells;
    expect(cell).toMatchObject({ runs: 4, falseFailures: 1, sideEffectRuns: 1, incomplete: 1, falseFailureRate: wilson(1, 4), sideEffectRate: wilson(1, 4) });
    expect(cell!.tokens).toEqual({ input: 3_000, output: 300, unknownRuns: 1 });
  });

  test('gates on the false-failure and side-effect rates', () => {
    const summary = summaryOf(mixed());
    expect(checkGates(summary, [{ maxFalseFailureRate: 0.2, maxSideEffectRate: 0 }]).map((breach) => breach.rule)).toEqual(['false-failure rate 0.25 > 0.20', 'side-effect rate 0.25 > 0.00']);
    expect(checkGates(summary, [{ maxFalseFailureRate: 0.25, maxSideEffectRate: 0.25 }])).toEqual([]);
  });

  test('Markdown and HTML show them beside the false-success rate; a run row shows its side effects and that it was cut short', () => {
    const runs = mixed();
    const summary = summaryOf(runs);
    const markdown = renderMarkdown(summary);
    expect(markdown).toContain(': false failure 25% (5–70%) · side effects 25% (5–70%) · 1 incomplete · 0 retried · ');
    expect(markdown).toContain('1 false failure (25%) · 1 with side effects (25%) · 1 incomplete');
    expect(markdown).toContain(' · tokens in / out 3,000 / 300 (+1 unknown) · ');
    const html = renderHtml(summary, runs);
    expect(html).toContain('<figcaption>false-failure rate</figcaption>');
    expect(html).toContain('<figcaption>side-effect rate</figcaption>');
    expect(html).toContain('harness upvoted 46194762 (&quot;Show HN: a thing&quot;)');
    expect(html).toContain('<td data-label="outcome" class="truthful-failure">truthful failure (incomplete, unjudged)</td><td data-label="stop reason">timeout</td>');
    expect(html).toContain('<div class="claim"><b>claim</b> claimed failure</div><div class="oracle"><b>oracle</b> not judged: the site no longer answered</div>');
  });

  test('a cell whose every run has unknown tokens shows them as unknown, never as 0', () => {
    const summary = summaryOf([run({ tokens: { input: null, output: null } })]);
    expect(renderMarkdown(summary)).toContain(' · tokens in / out unknown · ');
    expect(renderMarkdown(summary)).not.toContain('0 / 0');
  });

  test('a summary with missing tests is not complete, and the reports list them', () => {
    const summary = summarize(mixed(), { complete: true, now, planned: 5, missing: [{ id: 'm1', title: 'upvote never ran', project: 'p' }] });
    expect(summary).toMatchObject({ complete: false, planned: 5, recorded: 4 });
    expect(renderMarkdown(summary)).toContain('- missing: upvote never ran (p)');
  });
});

test.describe('newcombe: the difference of two proportions', () => {
  // Newcombe (1998), Statistics in Medicine 17:873–890, table II, method 10 (hybrid score, no continuity correction).
  for (const [x1, n1, x2, n2, low, high] of [
    [56, 70, 48, 80, 0.0524, 0.3339],
    [9, 10, 3, 10, 0.1705, 0.809],
    [5, 56, 0, 29, -0.0381, 0.1926],
    [0, 10, 0, 20, -0.1611, 0.2775],
    [0, 10, 0, 10, -0.2775, 0.2775],
    [10, 10, 0, 20, 0.6791, 1],
    [10, 10, 0, 10, 0.6075, 1],
  ] as const) {
    test(`${x1}/${n1} − ${x2}/${n2} gives (${low}, ${high})`, () => {
      const interval = newcombe(x1, n1, x2, n2);
      expect(interval.value).toBeCloseTo(x1 / n1 - x2 / n2, 12);
      expect(interval.low).toBeCloseTo(low, 4);
      expect(interval.high).toBeCloseTo(high, 4);
    });
  }

  test('a change is detectable only when the interval of the difference excludes 0; one trial a side never is', () => {
    expect(differs(9, 10, 3, 10)).toBe(true);
    expect(differs(5, 56, 0, 29)).toBe(false);
    expect(canDetectAnyChange(1, 1)).toBe(false);
    expect(canDetectAnyChange(2, 2)).toBe(true);
    expect(canDetectAnyChange(1, 10)).toBe(true);
    expect(differs(0, 0, 0, 10)).toBe(false);
  });

  test('detection power is exact: certain when the rates are 0 and 1 with enough trials, never above 1', () => {
    expect(detectionPower(1, 0, 5)).toBeCloseTo(1, 12);
    expect(detectionPower(1, 0, 1)).toBe(0);
    expect(detectionPower(0.5, 0.5, 20)).toBeLessThan(0.05); // the false-alarm rate stays under 5%
  });

  test('detection power is the sum over every pair of outcomes, also where (1 − p)^n underflows; trials to detect is fast enough for a report', () => {
    // The definition, summed over every pair of outcomes with the binomial terms taken in logs (no underflow).
    const logChoose = (n: number, k: number) => { let sum = 0; for (let i = 1; i <= k; i++) sum += Math.log((n - k + i) / i); return sum; };
    const pmf = (n: number, p: number, k: number) => (p === 0 ? Number(k === 0) : p === 1 ? Number(k === n) : Math.exp(logChoose(n, k) + k * Math.log(p) + (n - k) * Math.log(1 - p)));
    const bySum = (p1: number, p2: number, n: number) => {
      const [first, second] = [p1, p2].map((p) => Array.from({ length: n + 1 }, (_, k) => pmf(n, p, k)));
      let power = 0;
      for (let x1 = 0; x1 <= n; x1++) for (let x2 = 0; x2 <= n; x2++) if (differs(x1, n, x2, n)) power += first![x1]! * second![x2]!;
      return power;
    };
    for (const [p1, p2, n] of [[0.8, 0.95, 3], [0.8, 0.95, 71], [1, 2 / 3, 16], [0.5, 0.3, 40], [0.1, 0, 30], [0.95, 0.9, 400], [0.5, 0.5, 25]] as const) {
      expect(detectionPower(p1, p2, n), `${p1} → ${p2}, n = ${n}`).toBeCloseTo(bySum(p1, p2, n), 9);
    }
    // What the sum by runs rests on: for each x1, the x2 that differs() does not tell from it are one run (checked here to n = 50; offline to 400).
    const broken: string[] = [];
    for (let n = 1; n <= 50; n++) {
      for (let x1 = 0; x1 <= n; x1++) {
        const undecided = Array.from({ length: n + 1 }, (_, x2) => !differs(x1, n, x2, n));
        if (!undecided.slice(undecided.indexOf(true), undecided.lastIndexOf(true) + 1).every(Boolean)) broken.push(`n = ${n}, x1 = ${x1}`);
      }
    }
    expect(broken).toEqual([]);
    // 0.05^400 is below the smallest double: the old recurrence from P(X = 0) made every term 0, so no power at all.
    expect(detectionPower(0.95, 0.9, 400)).toBeGreaterThan(0.5);
    expect(trialsToDetect(0.9, 0.85)).toBeGreaterThan(600);
    expect(trialsToDetect(0.9, 0.85)).toBeLessThan(800);
    // Rates too close (or equal) for 1,000 trials: answered in well under a second each (about 0.7 s for the first in a process), not 25 s each.
    const started = performance.now();
    expect(trialsToDetect(0.5, 0.45)).toBeUndefined();
    expect(trialsToDetect(2 / 3, 2 / 3)).toBeUndefined();
    expect(performance.now() - started).toBeLessThan(5_000); // was 50 s
  });
});

test('docs/report.md\'s table of trials per cell is what trialsToDetect computes', () => {
  const readme = readFileSync(new URL('../docs/report.md', import.meta.url), 'utf8');
  const rows = [...readme.matchAll(/^\| (\d\.\d+) → (\d\.?\d*) \| (\d+) \| (\d+) \|$/gm)];
  expect(rows.length).toBeGreaterThanOrEqual(3);
  for (const [, from, to, at80, at95] of rows) {
    expect([trialsToDetect(Number(from), Number(to), 0.8), trialsToDetect(Number(from), Number(to), 0.95)], `${from} → ${to}`).toEqual([Number(at80), Number(at95)]);
  }
});
