/**
 * `npm run bench:report`: the reporter's cost on a large matrix. 10,000 synthetic runs (4 models ×
 * 4 layer stacks × 2 sites × 3 tasks, seeded so every run of the bench sees the same data) go
 * through the reporter's trial counting, `summarize`, rendering and the atomic writes of the three files. Targets: under 2 s wall
 * time and under 200 MB peak memory.
 */
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { uniformInt } from 'pure-rand/distribution/uniformInt';
import { xoroshiro128plus } from 'pure-rand/generator/xoroshiro128plus';
import { writeSummaryFiles } from '../src/report/files.ts';
import { summarize } from '../src/report/summarize.ts';
import { countTrials, type TestRecord } from '../src/report/trials.ts';
import type { PriceTable, AttachedRunRecord } from '../src/report/types.ts';

const RUNS = Number(process.env.RUNS ?? 10_000);
const SEED = 42;
const TARGET_MS = 2_000;
const TARGET_MB = 200;

/** Per model: how often it really does the task, and how often it claims success when it has not. */
const models = [
  { id: 'scripted:overclaimer', skill: 0.3, overclaim: 0.9 },
  { id: 'openai:gpt-4o-mini', skill: 0.55, overclaim: 0.35 },
  { id: 'openai:gpt-4.1', skill: 0.8, overclaim: 0.15 },
  { id: 'ollama:llama3.1', skill: 0.4, overclaim: 0.5 },
];
/** Per layer stack: what it adds to success, and how many false claims it catches. */
const stacks = [
  { name: 'bare', help: 0, catches: 0 },
  { name: 'guardrails+context', help: 0.05, catches: 0 },
  { name: 'verified', help: 0.05, catches: 0.95 },
  { name: 'guardrails+verify+login', help: 0.35, catches: 0.95 },
];
const sites = ['hn-recorded', 'hn-live'];
const tasks = ['upvote-first-post', 'open-top-comments', 'find-show-hn'];
const prices: PriceTable = { 'openai:gpt-4o-mini': { input: 0.15, output: 0.6 }, 'openai:gpt-4.1': { input: 2, output: 8 } };

function syntheticRuns(count: number): AttachedRunRecord[] {
  const rng = xoroshiro128plus(SEED);
  const int = (from: number, to: number) => uniformInt(rng, from, to);
  const chance = (p: number) => int(0, 9_999) < p * 10_000;
  const pick = <T>(values: readonly T[]): T => values[int(0, values.length - 1)]!;
  const runs: AttachedRunRecord[] = [];
  for (let i = 0; i < count; i++) {
    const model = pick(models);
    const stack = pick(stacks);
    const site = pick(sites);
    const task = pick(tasks);
    const actual = chance(Math.min(0.98, model.skill + stack.help - (site === 'hn-live' ? 0.05 : 0)));
    const claimed = actual ? chance(0.95) : chance(model.overclaim * (1 - stack.catches));
    const hitLimit = !claimed && !actual && chance(0.4);
    const iterations = hitLimit ? 15 : int(2, actual ? 9 : 14);
    const input = iterations * int(1_500, 3_500);
    runs.push({
      schemaVersion: 1,
      task,
      agent: 'harness-eval',
      model: model.id,
      layers: stack.name,
      site,
      claimed,
      actual,
      falseSuccess: claimed && !actual,
      falseFailure: actual && !claimed,
      sideEffects: [],
      incomplete: false,
      judged: true,
      condition: { agent: 'harness-eval', model: model.id, layers: stack.name, site },
      iterations,
      attempts: 1,
      stopReason: hitLimit ? 'max_iterations' : chance(0.02) ? 'model_error' : 'finished',
      tokens: { input, output: iterations * int(40, 220) },
      wallMs: iterations * int(300, 1_400),
      test: { id: `t${i.toString(16).padStart(5, '0')}`, title: `${task} with ${model.id} on ${stack.name} @ ${site}`, project: `${model.id} · ${stack.name}`, repeatEachIndex: i % 10, retry: 0, run: 1 },
    });
  }
  return runs;
}

const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(1);

const runs = syntheticRuns(RUNS);
const dir = await mkdtemp(join(tmpdir(), 'harness-eval-bench-report-'));
const before = process.memoryUsage();

// As the reporter holds them: a test per run, one attempt each, with its start and its end.
const tests: TestRecord[] = runs.map((run) => ({ ...run.test, status: 'passed', attempts: [{ retry: 0, runs: [run], starts: [run], unreadable: [] }] }));

const started = performance.now();
const trials = countTrials(tests);
const counted = performance.now();
const summary = summarize(trials.runs, { prices, complete: true, planned: trials.planned, missing: trials.missing });
const summarized = performance.now();
const files = await writeSummaryFiles(dir, summary, runs);
const finished = performance.now();

const after = process.memoryUsage();
const peakRssMb = process.resourceUsage().maxRSS / 1024; // maxRSS is in kilobytes
const sizes = await Promise.all(Object.values(files).map(async (path) => `${path.slice(dir.length + 1)} ${((await stat(path)).size / 1024).toFixed(0)} kB`));
await rm(dir, { recursive: true, force: true });

const totalMs = finished - started;
console.log(`bench:report — ${runs.length.toLocaleString('en-US')} runs, ${summary.cells.length} cells`);
console.log(`  count trials         ${(counted - started).toFixed(1)} ms`);
console.log(`  summarize            ${(summarized - counted).toFixed(1)} ms`);
console.log(`  render + write files ${(finished - summarized).toFixed(1)} ms  (${sizes.join(', ')})`);
console.log(`  total                ${totalMs.toFixed(1)} ms  (target < ${TARGET_MS} ms)`);
console.log(`  RSS       before ${mb(before.rss)} MB, after ${mb(after.rss)} MB, peak ${peakRssMb.toFixed(1)} MB  (target < ${TARGET_MB} MB)`);
console.log(`  heap used before ${mb(before.heapUsed)} MB, after ${mb(after.heapUsed)} MB`);
const met = totalMs < TARGET_MS && peakRssMb < TARGET_MB;
console.log(met ? 'targets met' : 'targets NOT met');
if (!met) process.exitCode = 1;
