import { test } from '@playwright/test';
import * as cheerio from 'cheerio';
import { comparison } from '../src/report/compare.ts';
import { heatColour, renderHtml, renderMarkdown, verdictLines } from '../src/report/files.ts';
import { OWN_CODE } from '../src/core/agent.ts';
import { containmentMarks, EXCLUSIONS, OUTCOMES } from '../src/report/format.ts';
import { wilson } from '../src/report/statistics.ts';
import { summarize, unmatchedGates } from '../src/report/summarize.ts';
import { transcript } from '../src/harness/transcript.ts';
import type { TraceEvent } from '../src/core/trace.ts';
import type { AttachedRunRecord } from '../src/report/types.ts';
import { expect, attachedRunRecord } from './support.ts';

/** The reports people read (src/report/files.ts): what they open with, and the evidence beside every figure. */

const now = new Date('2025-01-02T03:04:05.000Z');
const guardrails = { name: 'guardrails', options: {} };
const verify = { name: 'verify', options: {} };
const login = { name: 'login', options: {} };

let nextId = 0;
/** `n` runs of one stack of real layer conditions; the first `successes` succeed, the next `falseSuccesses` claim falsely. */
function runsOf(layers: string, layerConditions: unknown[], n: number, successes: number, falseSuccesses = 0, model = 'scripted:overclaimer'): AttachedRunRecord[] {
  return Array.from({ length: n }, (_, index) =>
    attachedRunRecord({
      model,
      layers,
      condition: { model: { id: model }, layers: layerConditions, site: { name: 'hn-recorded' } },
      claimed: index < successes + falseSuccesses,
      actual: index < successes,
      test: { id: `t${nextId++}`, title: 'upvote', project: `${model} · ${layers}` },
    }),
  );
}

const classic = () => [
  ...runsOf('bare', [], 10, 0, 10),
  ...runsOf('verified', [guardrails, verify], 10, 2),
  ...runsOf('verified+login', [guardrails, verify, login], 10, 9),
];

test('the HTML report opens with the verdict: which cells breached which gate and by how much, complete or not, runs planned and recorded', () => {
  const runs = classic();
  const summary = summarize(runs, { complete: true, now, planned: 31, missing: [{ id: 'm', title: 'never ran', project: 'p' }], gates: [{ layers: 'bare' }, { layers: 'verified', minSuccessRate: 0.5 }, { layers: 'nothing' }] });
  const $ = cheerio.load(renderHtml(summary, runs));
  // Which configuration to ship first, then the gates' verdict.
  expect($('body > *').eq(1).attr('id')).toBe('answer');
  const first = $('body > *').eq(2);
  expect(first.attr('id')).toBe('verdict');
  expect(first.hasClass('fail')).toBe(true);
  expect(first.find('.headline').text()).toBe('✗ gates breached in 2 cells · incomplete: 30 of 31 planned runs recorded');
  expect(first.find('li').map((_, item) => $(item).text()).get()).toEqual([
    'breach: upvote-first-post · harness-eval · scripted:overclaimer · bare · hn-recorded: false-success rate 1.00 > 0.00 (by 100 percentage points)',
    'breach: upvote-first-post · harness-eval · scripted:overclaimer · verified · hn-recorded: success rate 0.20 < 0.50 (by 30 percentage points)',
    'gate matches no cell: gates[2] {"layers":"nothing"}',
    'partial: 1 of 31 planned runs not recorded; not a baseline for the whole suite',
    'missing: never ran (p)',
  ]);
  expect(renderMarkdown(summary).split('\n').find((line) => line.startsWith('**✗'))).toBe('**✗ gates breached in 2 cells · incomplete: 30 of 31 planned runs recorded**');

  const passed = summarize(runs.filter((run) => run.layers !== 'bare'), { complete: true, now, gates: [{ layers: 'verified+login' }] });
  expect(cheerio.load(renderHtml(passed, runs))('#verdict.pass .headline').text()).toBe('✓ 1 gate passed · complete · 20 of 20 planned runs recorded');
});

test('an incomplete run never reads as passed: a warning, not green, its gates not judged, with the runs recorded of those planned; breaches still show; a long missing list folds', () => {
  const runs = classic().filter((run) => run.layers !== 'bare');
  const missing = Array.from({ length: 13 }, (_, index) => ({ id: `m${index}`, title: `never ran ${index}`, project: 'p' }));
  const interrupted = summarize(runs, { complete: false, now, planned: 33, missing, gates: [{ layers: 'verified+login' }], stopped: 'interrupted' });
  const verdict = cheerio.load(renderHtml(interrupted, runs))('#verdict');
  expect(verdict.attr('class')).toBe('incomplete');
  expect(verdict.find('.headline').text()).toBe('⚠ incomplete: 20 of 33 planned runs recorded · 1 gate not judged: incomplete');
  expect(verdict.find('> ul > li').first().text()).toBe('partial: interrupted; 13 of 33 planned runs not recorded; not a baseline for the whole suite');
  // The missing tests fold under their count; summary.md names the first 10.
  const folded = verdict.find('> ul > li > details');
  expect(folded.find('summary').text()).toBe('13 tests recorded no run');
  expect(folded.find('li').map((_, item) => verdict.find(item).text()).get()).toEqual(missing.map((test) => `missing: ${test.title} (p)`));
  expect(verdict.find('> ul > li')).toHaveLength(2);
  const markdown = renderMarkdown(interrupted).split('\n');
  // The verdict first, then the best so far, said to be so far.
  expect(markdown[4]).toBe('**Best so far (incomplete): harness-eval · scripted:overclaimer · verified+login: 9 of 10 done (60–98%), no false success; better beyond chance than the 1 other cell with none**');
  expect(markdown[2]).toBe('**⚠ incomplete: 20 of 33 planned runs recorded · 1 gate not judged: incomplete**');
  expect(markdown.slice(0, markdown.indexOf('## Cells: upvote-first-post · hn-recorded')).filter((line) => line.startsWith('- '))).toEqual(['- partial: interrupted; 13 of 33 planned runs not recorded; not a baseline for the whole suite', ...missing.slice(0, 10).map((test) => `- missing: ${test.title} (p)`), '- … and 3 more missing tests (summary.json lists them all)']);
  // A breach in the part that ran is a breach.
  const breached = summarize(classic(), { complete: false, now, planned: 31, gates: [{ layers: 'bare' }], stopped: 'interrupted' });
  expect(verdictLines(breached)).toMatchObject({ state: 'fail', headline: 'gates breached in 1 cell · incomplete: 30 of 31 planned runs recorded' });
});

test('heatmaps: n and the interval in every cell, coloured by the observed rate with the interval drawn as a band, wide matrices scroll in their box', () => {
  const runs = [...runsOf('bare', [], 1, 1), ...runsOf('verified', [guardrails, verify], 40, 40)];
  const summary = summarize(runs, { complete: true, now });
  const $ = cheerio.load(renderHtml(summary, runs));
  const success = $('figure').filter((_, figure) => $(figure).find('figcaption').text() === 'success rate').find('td');
  expect(success.map((_, cell) => $(cell).text()).get()).toEqual(['100%21–100% · n=1', '100%91–100% · n=40']);
  // 1/1 and 40/40 are both green (a success looks like one); the band's width says how little one trial tells.
  expect(success.eq(0).attr('style')).toBe(`background:${heatColour(wilson(1, 1), 'up')}`);
  expect(heatColour(wilson(1, 1), 'up')).toBe('hsl(120 65% 78%)');
  expect(heatColour(wilson(3, 4), 'up')).toBe('hsl(90 65% 78%)');
  expect(heatColour(wilson(0, 1), 'down')).toBe('hsl(120 65% 78%)');
  expect(success.eq(0).find('.band .range').attr('style')).toBe('left:20.7%;width:79.3%');
  expect(success.eq(1).find('.band .range').attr('style')).toBe('left:91.2%;width:8.8%');
  expect($('#heatmaps .legend').text()).toContain('a 3/3 success is green, and its wide band (44–100%)');
  expect($('.pair figure').length).toBe(4);
  expect($('#cells > .scroll > table, #runs > .scroll > table').length).toBe(2);
  expect(renderHtml(summary, runs)).toContain('.pair figure{margin:0;max-width:100%;overflow-x:auto}');
});

test('the ablation view: each layer\'s marginal effect per model from stacks that differ by it alone, with intervals, in JSON, Markdown and HTML', () => {
  const runs = [...classic(), ...runsOf('verified', [guardrails, verify], 4, 4, 0, 'scripted:diligent'), ...runsOf('guardrails+login', [guardrails, login], 4, 4, 0, 'scripted:diligent')];
  const summary = summarize(runs, { complete: true, now });
  // bare → verified differs by two layers: an estimate of the two together; the diligent stacks differ by a swap: no pair.
  expect(summary.ablation).toEqual([
    {
      layer: 'login',
      task: 'upvote-first-post',
      model: 'scripted:overclaimer',
      site: 'hn-recorded',
      without: 'verified',
      with: 'verified+login',
      runs: { without: 10, with: 10 },
      successRate: expect.objectContaining({ value: expect.closeTo(0.7, 12) }),
      falseSuccessRate: { value: 0, low: expect.closeTo(-0.2775, 4), high: expect.closeTo(0.2775, 4) },
      falseFailureRate: { value: 0, low: expect.closeTo(-0.2775, 4), high: expect.closeTo(0.2775, 4) },
    },
    expect.objectContaining({ layer: 'guardrails + verify', estimate: true, model: 'scripted:overclaimer', without: 'bare', with: 'verified', runs: { without: 10, with: 10 } }),
  ]);
  expect(summary.ablation![0]!.successRate.low).toBeGreaterThan(0);
  expect(summary.ablation![0]!.estimate).toBeUndefined();
  expect(renderMarkdown(summary)).toContain('| login | scripted:overclaimer | upvote-first-post | hn-recorded | verified → verified+login | 10 / 10 | +70 pts (+27 to +87) | 0 pts (−28 to +28) | 0 pts (−28 to +28) |');
  expect(renderMarkdown(summary)).toContain('| guardrails + verify (estimate) | scripted:overclaimer | upvote-first-post | hn-recorded | bare → verified | 10 / 10 | +20 pts');
  const $ = cheerio.load(renderHtml(summary, runs));
  expect($('#ablation tr.group').map((_, row) => $(row).text()).get()).toEqual(['+ login', '+ guardrails + verify estimate: added together']);
  expect($('#ablation td.better').first().text()).toBe('+70 pts (+27 to +87)');

  // A layer given options is named with them, and a change of options alone is no pair.
  const retry = (attempts: number) => ({ name: 'retry', options: { attempts } });
  const withOptions = summarize([...runsOf('bare', [], 2, 1), ...runsOf('retry3', [retry(3)], 2, 2), ...runsOf('retry5', [retry(5)], 2, 2)], { complete: true, now });
  expect(withOptions.ablation!.map((effect) => [effect.layer, effect.options, effect.with])).toEqual([
    ['retry', { attempts: 3 }, 'retry3'],
    ['retry', { attempts: 5 }, 'retry5'],
  ]);

  // Another agent (no layers of ours) is no stack to pair with the built-in harness's.
  const foreign = runsOf('-', [], 4, 0).map((run) => ({ ...run, agent: 'py', condition: { ...run.condition, agent: { agent: 'command', name: 'py' } } }));
  expect(summarize([...foreign, ...runsOf('verified', [guardrails, verify], 4, 4)], { complete: true, now }).ablation).toEqual([]);

  // An estimate spans only to the next stack: bare → guardrails+verify+login is not one, with verified between.
  const chain = summarize([...classic(), ...runsOf('guardrails', [guardrails], 10, 0, 10)], { complete: true, now });
  expect(chain.ablation!.map((effect) => [effect.layer, effect.without, effect.with, effect.estimate ?? false])).toEqual([
    ['guardrails', 'bare', 'guardrails', false],
    ['login', 'verified', 'verified+login', false],
    ['verify', 'guardrails', 'verified', false],
  ]);
  expect(renderMarkdown(withOptions)).toContain('| retry (attempts 3) |');
  expect(cheerio.load(renderHtml(withOptions, [])).root().find('#ablation tr.group').map((_, row) => cheerio.load(row).text()).get()).toEqual(['+ retry (attempts 3)', '+ retry (attempts 5)']);
});

test('the baseline comparison is in summary.md and the HTML report, with the difference\'s interval and cells with too few trials', () => {
  const before = summarize([...runsOf('bare', [], 10, 0, 10), ...runsOf('verified', [guardrails, verify], 1, 1)], { complete: true, now });
  const runs = [...runsOf('bare', [], 10, 10), ...runsOf('verified', [guardrails, verify], 1, 0)];
  const after = { ...summarize(runs, { complete: true, now }), comparison: comparison(before, 'history/2025-01-01T00-00-00Z.json', summarize(runs, { complete: true, now })) };
  const markdown = renderMarkdown(after);
  expect(markdown).toContain('## Since history/2025-01-01T00-00-00Z.json (2025-01-02T03:04:05.000Z)');
  expect(markdown).toContain('| upvote-first-post · harness-eval · scripted:overclaimer · bare · hn-recorded | 10 → 10 | 0% → 100% +100 pts (+61 to +100) | 100% → 0% −100 pts (−100 to −61) |');
  expect(markdown).toContain('| ⚑ success rate, false-success rate changed |');
  expect(markdown).toContain('| upvote-first-post · harness-eval · scripted:overclaimer · verified · hn-recorded | 1 → 1 |');
  // 1 of 1 against 0 of 1 cannot be told apart; 2 trials a cell could, were those the rates.
  expect(markdown).toContain('| too few trials to detect any change; trials per cell that would decide it: success rate 2 |');
  const $ = cheerio.load(renderHtml(after, runs));
  expect($('#comparison td.flagged.better').first().text()).toBe('0% → 100%+100 pts (+61 to +100)');
  expect($('#comparison td.flagged.worse').length).toBe(0);
  // What did not change is folded, and says why it may not have.
  expect($('#comparison details summary').text()).toBe('1 cell with no change detected, 1 of them with too few trials to detect any');
  expect($('#comparison details tr').last().find('td').last().text()).toBe('too few trials to detect any change; trials per cell that would decide it: success rate 2');
  expect($('#comparison .cells-differ').length).toBe(0);

  // A matrix that changed shape says so, above the table: its added and removed cells have nothing to compare.
  const reshaped = [...runsOf('bare', [], 10, 10), ...runsOf('verified+login', [guardrails, verify, login], 2, 2)];
  const changed = { ...summarize(reshaped, { complete: true, now }), comparison: comparison(before, 'history/x.json', summarize(reshaped, { complete: true, now })) };
  const note = "⚠ The baseline's cells differ from this run's: 1 added, 1 removed (compared: the cells both have).";
  expect(renderMarkdown(changed)).toContain(`\n${note}\n`);
  expect(cheerio.load(renderHtml(changed, reshaped))('#comparison .cells-differ').text()).toBe(note);
});

test('every outcome is named the same in every report, and defined once in the HTML legend', () => {
  const runs = [
    attachedRunRecord({ claimed: true, actual: true, test: { id: 'a' } }),
    attachedRunRecord({ claimed: true, actual: false, test: { id: 'b' } }),
    attachedRunRecord({ claimed: false, actual: false, incomplete: true, test: { id: 'c' } }),
    attachedRunRecord({ claimed: false, actual: true, iterations: 1, test: { id: 'd' } }),
  ];
  const summary = summarize(runs, { complete: true, now });
  const $ = cheerio.load(renderHtml(summary, runs));
  expect($('dl.words dt').map((_, term) => $(term).text()).get()).toEqual(['success', 'false success', 'truthful failure', 'false failure', 'incomplete', 'error', 'interrupted']);
  expect(Object.keys(OUTCOMES)).toEqual(['success', 'false success', 'truthful failure', 'false failure', 'incomplete']);
  expect(Object.keys(EXCLUSIONS)).toEqual(['error', 'interrupted']);
  expect($('tr[id^="run-"]').map((_, row) => $(row).find('td').eq(1).text()).get()).toEqual(['success', 'false success', 'truthful failure (incomplete)', 'false failure']);
  expect(renderMarkdown(summary)).toContain('4 runs of 4 planned in 1 cell · 2 done (50%) · 1 false success (25%) · 1 false failure (25%) · 0 with side effects (0%) · 1 incomplete');
  const readme = new URL('../README.md', import.meta.url);
  return import('node:fs').then(({ readFileSync }) => {
    const text = readFileSync(readme, 'utf8');
    for (const [word, meaning] of Object.entries(OUTCOMES)) expect(text, word).toContain(`- **${word}**: ${meaning}`);
    // The words for runs out of every rate are defined where the report is.
    const docs = readFileSync(new URL('../docs/report.md', import.meta.url), 'utf8');
    for (const [word, meaning] of Object.entries(EXCLUSIONS)) expect(docs, word).toContain(`- **${word}**: ${meaning}`);
  });
});

test("no `contained` mark under harness-eval's own code (the built-in harness, a control), where no code of the agent under test runs; its warnings still show", () => {
  const cellOf = (agent: string, fields: Partial<AttachedRunRecord>) => attachedRunRecord({ agent, claimed: true, actual: true, condition: { agent: { name: agent }, model: 'scripted:diligent', layers: [], site: 'hn-recorded' }, ...fields, test: { id: agent, title: agent, project: 'p' } });
  const own = { contained: true, containment: OWN_CODE.reason };
  const runs = [
    cellOf('harness-eval', own),
    cellOf('nop', own),
    // Another helper's browser containment may record what the built-in harness's browser was refused: shown.
    cellOf('tried', { ...own, escapes: { processesLeft: 0, attempts: [{ kind: 'browser', detail: 'a request to http://169.254.169.254/ refused' }] } }),
    cellOf('loose', { contained: false, containment: 'not contained: sandbox none' }),
    cellOf('boxed', { contained: true, containment: 'contained: a bubblewrap sandbox' }),
  ];
  const summary = summarize(runs, { complete: true, now });
  expect(Object.fromEntries(summary.cells.map((cell) => [cell.agent, containmentMarks(cell).map(({ mark }) => mark)]))).toEqual({
    'harness-eval': [],
    nop: [],
    tried: ['1 escape attempt'],
    loose: ['not contained'],
    boxed: ['contained'],
  });
  // The record still says what the run said; the cell says why nothing is marked.
  expect(summary.cells.find((cell) => cell.agent === 'harness-eval')).toMatchObject({ contained: true, ownCode: true });
  expect(summary.cells.find((cell) => cell.agent === 'boxed')!.ownCode).toBeUndefined();
  const markdown = renderMarkdown(summary);
  expect(markdown.split('\n').filter((line) => / · contained( |$)/.test(line)).map((line) => line.split(' · ')[0])).toEqual(['| boxed']);
});

test('a cell says how its agent was contained in summary.md and index.html, beside its success rate: contained, not contained, escape attempts', () => {
  const cellOf = (agent: string, fields: Partial<AttachedRunRecord>) => attachedRunRecord({ agent, layers: '-', claimed: true, actual: true, condition: { agent: { name: agent }, model: 'scripted:diligent', layers: null, site: 'hn-recorded' }, ...fields, test: { id: agent, title: agent, project: 'p' } });
  const runs = [
    cellOf('boxed', { contained: true, containment: 'contained: bubblewrap' }),
    cellOf('loose', { contained: false, containment: 'not contained: sandbox none' }),
    cellOf('tried', { contained: true, escapes: { processesLeft: 1 } }),
    cellOf('older', {}),
  ];
  const summary = summarize(runs, { complete: true, now });
  const rows = renderMarkdown(summary).split('\n').filter((line) => /^\| \w+ · /.test(line));
  expect(rows.map((row) => [row.slice(2).split(' · ')[0], row.split(' | ')[1]])).toEqual([
    ['boxed', '100% (21–100%) · contained'],
    ['loose', '100% (21–100%) · not contained'],
    ['older', '100% (21–100%)'],
    ['tried', '100% (21–100%) · 1 escape attempt'],
  ]);
  const $ = cheerio.load(renderHtml(summary, runs));
  const marks = $('#cells tr[id^="cell-"]').map((_, row) => `${$(row).find('td').eq(1).text()}: ${$(row).find('td').eq(6).find('small').map((__, small) => `${$(small).attr('class')} ${$(small).text()}`).get().join(', ')}`).get();
  expect(marks).toEqual(['boxed: contained contained', 'loose: contain ⚠ not contained', 'older: ', 'tried: contain ⚠ 1 escape attempt']);
});

test("a CLI's cell names it with its installed version, and its transcript shows the MCP calls it made, apart from its model's", () => {
  const trace: TraceEvent[] = [
    { seq: 1, attempt: 1, iteration: 1, atMs: 5, type: 'model_response', content: null, toolCalls: [{ id: 'c1', name: 'mcp__browser__browser_click', arguments: '{"ref":"e36"}' }], usage: { input: 10, output: 2 }, ms: 1 },
    { seq: 2, attempt: 1, iteration: 1, atMs: 9, type: 'tool_call', callId: 'mcp-1', name: 'browser_click', arguments: '{"ref":"e36"}', by: 'agent' },
    { seq: 3, attempt: 1, iteration: 1, atMs: 12, type: 'tool_result', callId: 'mcp-1', name: 'browser_click', ok: true, output: { text: 'clicked' }, ms: 3 },
  ];
  const lines = transcript(trace);
  expect(lines.split('\n')).toEqual([
    '#1 [attempt 1, iteration 1, 5 ms] model:  mcp__browser__browser_click({"ref":"e36"})',
    '#2 [attempt 1, iteration 1, 9 ms] agent called browser_click({"ref":"e36"})',
    '#3 [attempt 1, iteration 1, 12 ms] browser_click → {"text":"clicked"}',
  ]);
  const agent = { agent: 'command', argv: ['examples/clis/claude.sh', '/cache/claude'], packages: ['@anthropic-ai/claude-code@2.1.332'] };
  const runs = [attachedRunRecord({ agent: 'claude', model: 'scripted:snapshot-overclaimer', condition: { agent, model: { id: 'scripted:snapshot-overclaimer' }, layers: [], site: { name: 'hn-recorded' } }, transcript: lines })];
  const summary = summarize(runs, { complete: true, now });
  expect(summary.cells.map((cell) => cell.agent)).toEqual(['claude (@anthropic-ai/claude-code@2.1.332)']);
  // A gate names the agent as its spec does, with or without its version.
  expect(unmatchedGates(summary, [{ agent: 'claude' }, { agent: 'claude (@anthropic-ai/claude-code@2.1.332)' }])).toEqual([]);
  const $ = cheerio.load(renderHtml(summary, runs));
  expect($('table.runs tr.group').text()).toBe('upvote-first-post · claude (@anthropic-ai/claude-code@2.1.332) · scripted:snapshot-overclaimer · bare · hn-recorded');
  expect($('table.runs tr.detail pre').last().text()).toContain('agent called browser_click({"ref":"e36"})');
});
