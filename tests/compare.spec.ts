import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from '@playwright/test';
import { compareSummaries, readSummary, renderComparison } from '../src/report/compare.ts';
import { trialsToDetect } from '../src/report/statistics.ts';
import { summarize } from '../src/report/summarize.ts';
import type { AttachedRunRecord } from '../src/report/types.ts';
import { expect, attachedRunRecord } from './support.ts';

/** n runs of one cell, `successes` of them successes and `falseSuccesses` false successes. */
function runs(model: string, n: number, successes: number, falseSuccesses = 0): AttachedRunRecord[] {
  return Array.from({ length: n }, (_, index) =>
    attachedRunRecord({
      model,
      layers: 'verified',
      claimed: index < successes + falseSuccesses,
      actual: index < successes,
      iterations: 5,
      tokens: { input: 100, output: 10 },
      test: { id: `${model}-${index}`, title: 't', project: 'p', repeatEachIndex: index },
    }),
  );
}

const summaryOf = (...cells: AttachedRunRecord[][]) => summarize(cells.flat(), { complete: true });

test('a change is flagged only when the 95% interval of the difference excludes 0', () => {
  const baseline = summaryOf(runs('model:a', 10, 0), runs('model:b', 10, 5), runs('model:c', 10, 10));
  const current = summaryOf(runs('model:a', 10, 10), runs('model:b', 10, 6), runs('model:c', 10, 0, 10));
  const changes = compareSummaries(baseline, current);
  expect(changes.map((change) => [change.cell.split(' · ')[2], change.flagged])).toEqual([
    ['model:a', ['success rate']],
    ['model:b', []],
    ['model:c', ['success rate', 'false-success rate']],
  ]);
  expect(changes[0]!.successRate.before!.value).toBe(0);
  expect(changes[0]!.successRate.after!.value).toBe(1);
});

test('a change whose rates\' intervals still overlap is flagged when the difference\'s interval excludes 0; too few trials say so', () => {
  const baseline = summaryOf(runs('model:d', 30, 10), runs('model:e', 1, 0));
  const current = summaryOf(runs('model:d', 30, 20), runs('model:e', 1, 1));
  const [d, e] = compareSummaries(baseline, current);
  // 33% (19–51%) → 67% (49–81%): the intervals overlap, yet the difference +33 pts (+8 to +53) excludes 0.
  expect(d!.successRate.before!.high).toBeGreaterThan(d!.successRate.after!.low);
  expect(d!.successRate.difference!.low).toBeCloseTo(0.0804, 3);
  expect(d!).toMatchObject({ flagged: ['success rate'], tooFewTrials: false });
  // One run against one: 0% → 100% is within chance, and the comparison says no change could have shown.
  expect(e!).toMatchObject({ flagged: [], tooFewTrials: true, runs: { before: 1, after: 1 } });
  const text = renderComparison([d!, e!]);
  expect(text).toContain('success 33% (19–51%) → 67% (49–81%) [+33 pts (+8 to +53)]');
  expect(text).toContain('(too few trials to detect any change: 1 → 1)  (trials per cell that would decide it: success rate 2)');
  expect(e!.successRate.trialsToTell).toBe(trialsToDetect(0, 1));
  expect(text.split('\n').at(-1)).toBe('2 cells compared, 1 flagged, 1 with too few trials to detect any change');
});

test('cells only in one summary are added or removed; the text has a line per cell and a count', () => {
  const changes = compareSummaries(summaryOf(runs('model:old', 4, 2)), summaryOf(runs('model:new', 4, 2)));
  expect(changes.map((change) => [change.cell.split(' · ')[2], change.status])).toEqual([
    ['model:new', 'added'],
    ['model:old', 'removed'],
  ]);
  const text = renderComparison(changes);
  expect(text).toContain('upvote-first-post · harness-eval · model:new · verified · hn-recorded (added): success — → 50% (');
  expect(text).toMatch(/false failure — → 0% \(0–\d+%\); side effects — → 0% \(0–\d+%\)$/m);
  expect(text.split('\n').at(-1)).toBe('2 cells compared, 0 flagged');
});

test('harness-eval report --baseline prints the comparison from files; bad files end in one line', () => {
  const dir = mkdtempSync(test.info().outputPath('compare-'));
  writeFileSync(join(dir, 'old.json'), JSON.stringify(summaryOf(runs('model:a', 10, 0))));
  writeFileSync(join(dir, 'new.json'), JSON.stringify(summaryOf(runs('model:a', 10, 10))));
  writeFileSync(join(dir, 'broken.json'), '{ "schemaVersion": 2 }');
  const cli = (...args: string[]) => spawnSync(process.execPath, ['bin/harness-eval.js', 'report', ...args], { encoding: 'utf8' });
  const ok = cli('--baseline', join(dir, 'old.json'), join(dir, 'new.json'));
  expect(ok.status).toBe(0);
  expect(ok.stdout).toContain('⚑ success rate changed (95% interval of the difference excludes 0)');
  const broken = cli('--baseline', join(dir, 'broken.json'), join(dir, 'new.json'));
  expect(broken.status).toBe(2);
  expect(broken.stderr.trim().split('\n')).toHaveLength(1);
  expect(broken.stderr).toContain('broken.json: generatedAt: Invalid input: expected string, received undefined;');
  expect(() => readSummary(join(dir, 'missing.json'))).toThrow(/missing\.json: cannot read this summary\.json \(ENOENT\)$/);
  expect(cli('--baseline', join(dir, 'old.json')).stderr).toContain('usage: harness-eval report [--dir reports] [OLD NEW], or harness-eval report --baseline OLD.json NEW.json');
});

test('false failures and side effects are compared too, flagged when their intervals part', () => {
  const sideEffect = { kind: 'vote', id: '1', detail: 'harness upvoted 1' };
  const before = summaryOf(runs('model:a', 10, 10));
  const after = summarize(
    runs('model:a', 10, 10).map((run) => ({ ...run, claimed: false, falseFailure: true, sideEffects: [sideEffect] })),
    { complete: true },
  );
  const [change] = compareSummaries(before, after);
  expect(change!.flagged).toEqual(['false-failure rate', 'side-effect rate']);
  expect(renderComparison([change!])).toContain('false failure 0% (0–28%) → 100% (72–100%) [+100 pts (+61 to +100)]; side effects 0% (0–28%) → 100% (72–100%) [+100 pts (+61 to +100)]  ⚑ false-failure rate, side-effect rate changed (95% interval of the difference excludes 0)');
});

test('a version 1 summary is read as a baseline: what it lacks shows as —, never as 0', () => {
  const dir = mkdtempSync(test.info().outputPath('compare-v1-'));
  const interval = (value: number, low: number, high: number) => ({ value, low, high });
  // A summary.json as version 1 wrote it: no condition, false failures, side effects or planned runs.
  const v1 = {
    schemaVersion: 1,
    generatedAt: '2025-06-01T00:00:00.000Z',
    complete: true,
    totals: { runs: 10, successes: 0, falseSuccesses: 10 },
    cells: [
      {
        task: 'upvote-first-post',
        model: 'model:a',
        layers: 'verified',
        site: 'hn-recorded',
        runs: 10,
        successes: 0,
        claimed: 10,
        falseSuccesses: 10,
        unsupportedClaims: 0,
        successRate: interval(0, 0, 0.2775),
        falseSuccessRate: interval(1, 0.7225, 1),
        iterations: { mean: 5, median: 5, p95: 5, max: 5 },
        tokens: { input: 1000, output: 100 },
        wallMs: { median: 1000 },
        stopReasons: { finished: 10 },
        passHatK: {},
        runIds: [],
      },
    ],
  };
  writeFileSync(join(dir, 'v1.json'), JSON.stringify(v1));
  writeFileSync(join(dir, 'v2.json'), JSON.stringify(summaryOf(runs('model:a', 10, 10))));
  const baseline = readSummary(join(dir, 'v1.json'));
  expect(baseline.schemaVersion).toBe(1);
  expect(baseline.cells[0]!.falseFailureRate).toBeUndefined();
  const text = renderComparison(compareSummaries(baseline, readSummary(join(dir, 'v2.json'))));
  expect(text).toContain('upvote-first-post · harness-eval · model:a · verified · hn-recorded: success 0% (0–28%) → 100% (72–100%) [+100 pts (+61 to +100)]; false success 100% (72–100%) → 0% (0–28%) [−100 pts (−100 to −61)]; false failure — → 0% (0–28%); side effects — → 0% (0–28%)  ⚑ success rate, false-success rate changed (95% interval of the difference excludes 0)');
  const cli = spawnSync(process.execPath, ['bin/harness-eval.js', 'report', '--baseline', join(dir, 'v1.json'), join(dir, 'v2.json')], { encoding: 'utf8' });
  expect(cli.status).toBe(0);
  expect(cli.stdout).toContain('false failure — → 0% (0–28%)');
});
