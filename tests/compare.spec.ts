import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from '@playwright/test';
import { compareSummaries, readSummary, renderComparison } from '../src/report/compare.ts';
import { summarize } from '../src/report/summarize.ts';
import type { ReportedRun } from '../src/report/types.ts';
import { expect, reportedRun } from './support.ts';

/** n runs of one cell, `successes` of them successes and `falseSuccesses` false successes. */
function runs(model: string, n: number, successes: number, falseSuccesses = 0): ReportedRun[] {
  return Array.from({ length: n }, (_, index) =>
    reportedRun({
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

const summaryOf = (...cells: ReportedRun[][]) => summarize(cells.flat(), { complete: true });

test('a change is flagged only when the 95% intervals no longer overlap', () => {
  const baseline = summaryOf(runs('model:a', 10, 0), runs('model:b', 10, 5), runs('model:c', 10, 10));
  const current = summaryOf(runs('model:a', 10, 10), runs('model:b', 10, 6), runs('model:c', 10, 0, 10));
  const changes = compareSummaries(baseline, current);
  expect(changes.map((change) => [change.cell.split(' · ')[1], change.flagged])).toEqual([
    ['model:a', ['success rate']],
    ['model:b', []],
    ['model:c', ['success rate', 'false-success rate']],
  ]);
  expect(changes[0]!.successRate.before!.value).toBe(0);
  expect(changes[0]!.successRate.after!.value).toBe(1);
});

test('cells only in one summary are added or removed; the text has a line per cell and a count', () => {
  const changes = compareSummaries(summaryOf(runs('model:old', 4, 2)), summaryOf(runs('model:new', 4, 2)));
  expect(changes.map((change) => [change.cell.split(' · ')[1], change.status])).toEqual([
    ['model:new', 'added'],
    ['model:old', 'removed'],
  ]);
  const text = renderComparison(changes);
  expect(text).toContain('upvote-first-post · model:new · verified · hn-recorded (added): success — → 50% (');
  expect(text.split('\n').at(-1)).toBe('2 cells compared, 0 flagged');
});

test('harness-eval report --baseline prints the comparison from files; bad files end in one line', () => {
  const dir = mkdtempSync(join(tmpdir(), 'harness-eval-compare-'));
  writeFileSync(join(dir, 'old.json'), JSON.stringify(summaryOf(runs('model:a', 10, 0))));
  writeFileSync(join(dir, 'new.json'), JSON.stringify(summaryOf(runs('model:a', 10, 10))));
  writeFileSync(join(dir, 'broken.json'), '{ "schemaVersion": 2 }');
  const cli = (...args: string[]) => spawnSync(process.execPath, ['bin/harness-eval.js', 'report', ...args], { encoding: 'utf8' });
  const ok = cli('--baseline', join(dir, 'old.json'), join(dir, 'new.json'));
  expect(ok.status).toBe(0);
  expect(ok.stdout).toContain('⚑ success rate changed beyond the intervals');
  const broken = cli('--baseline', join(dir, 'broken.json'), join(dir, 'new.json'));
  expect(broken.status).toBe(2);
  expect(broken.stderr.trim().split('\n')).toHaveLength(1);
  expect(broken.stderr).toContain('broken.json: schemaVersion: Invalid input: expected 1');
  expect(() => readSummary(join(dir, 'missing.json'))).toThrow(/missing\.json: cannot read this summary\.json \(ENOENT\)$/);
  expect(cli('--baseline', join(dir, 'old.json')).stderr).toContain('usage: harness-eval report --baseline OLD.json NEW.json');
});
