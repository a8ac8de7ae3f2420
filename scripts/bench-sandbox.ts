/**
 * `npm run bench:sandbox`: what the command agent's sandbox costs. One offline run of the same
 * small command agent (it reads the front page over HTTP and asks the model once, through the
 * relay when sandboxed) with `sandbox: 'required'` (bubblewrap) and with `sandbox: 'none'`: WARMUP
 * rounds of each first, not counted, then ROUNDS rounds, each arm first in half of them (ABBA), so
 * that a slow spell of a shared machine, or what one run leaves the next (a network namespace torn
 * down in the kernel), falls on both arms alike. It prints the ratio of the median wall times
 * (target ≤ 1.10) with its 95% interval (the rounds resampled), the milliseconds the sandbox adds
 * per run, the worker's CPU per run, and where a run's time goes: each stage's median, in ms since
 * the run began, in each arm.
 */
import { chromium, type Browser } from '@playwright/test';
import { uniformInt } from 'pure-rand/distribution/uniformInt';
import { xoroshiro128plus } from 'pure-rand/generator/xoroshiro128plus';
import { quantileSorted } from 'simple-statistics';
import { subscribe } from 'node:diagnostics_channel';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { COMMAND_AGENT_STAGES, commandAgent, type CommandAgentStages } from '../src/agents/command.ts';
import { sandboxUnavailable } from '../src/agents/sandbox.ts';
import { chromiumLaunchOptions } from '../src/playwright/chromium.ts';
import { evaluate } from '../src/eval/evaluate.ts';
import { recordedHn } from '../src/sites/hn/site.ts';
import { upvoteFirstPost } from '../src/sites/hn/suite.ts';
// `scripted:<name>` resolves to HN's doubles once the shell registers them, as the fixtures do.
import '../src/playwright/doubles.ts';

const ROUNDS = Number(process.env.ROUNDS ?? 41);
const WARMUP = Number(process.env.WARMUP ?? 3);
const TARGET = 1.1;
const unavailable = sandboxUnavailable();
if (unavailable) throw new Error(`bench:sandbox needs the sandbox: ${unavailable}`);

// A small agent as users write them: plain HTTP to the site, one model call through the gateway.
// It notes when it got to each step (epoch ms, as performance.timeOrigin counts them) in a file beside its claim: the bench's only use of it.
const script = `
const at = () => performance.timeOrigin + performance.now();
const marks = { agentProcess: performance.timeOrigin, agentScript: at() };
const html = await (await fetch(process.env.HARNESS_SITE_URL + '/news')).text();
marks.agentSiteRead = at();
const reply = await fetch(process.env.OPENAI_BASE_URL + '/chat/completions', { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer ' + process.env.OPENAI_API_KEY }, body: JSON.stringify({ model: 'any', messages: [{ role: 'user', content: process.env.HARNESS_TASK }] }) });
await reply.json();
marks.agentModelReplied = at();
const fs = await import('node:fs');
fs.writeFileSync(process.env.HARNESS_CLAIM_FILE, JSON.stringify({ success: false, summary: 'read ' + html.length + ' bytes' }));
marks.agentClaimed = at();
fs.writeFileSync(process.env.HARNESS_CLAIM_FILE + '.marks', JSON.stringify(marks));
`;
const argv = [process.execPath, '--input-type=module', '-e', script];
const agents = { sandboxed: commandAgent(argv, { name: 'bench', sandbox: 'required' }), plain: commandAgent(argv, { name: 'bench', sandbox: 'none' }) };
type Arm = keyof typeof agents;

let published: CommandAgentStages | undefined;
subscribe(COMMAND_AGENT_STAGES, (message) => void (published = message as CommandAgentStages));

/** One run: its wall time, the worker's CPU, and each stage in ms since it began. */
interface Timed {
  wallMs: number;
  workerCpuMs: number;
  stages: Record<string, number>;
}

async function timedRun(browser: Browser, which: Arm): Promise<Timed> {
  published = undefined;
  const outputDir = await mkdtemp(join(tmpdir(), 'bench-sandbox-'));
  const cpu = process.cpuUsage();
  const started = performance.now();
  const context = await browser.newContext();
  const run = await evaluate({ context, site: recordedHn(), agent: agents[which], model: 'scripted:diligent', task: upvoteFirstPost, outputDir });
  await context.close();
  const wallMs = performance.now() - started;
  const used = process.cpuUsage(cpu);
  if (run.stopReason !== 'finished' || run.iterations !== 1 || run.contained !== (which === 'sandboxed')) throw new Error(`${which} run went wrong: ${run.summary}`);
  // Set by the subscriber while the run closed: read through a cast, as the compiler cannot see it change.
  const own = published as CommandAgentStages | undefined;
  if (own?.sandboxed !== (which === 'sandboxed')) throw new Error(`${which} run published no stages`);
  const marks = JSON.parse(await readFile(join(outputDir, 'agent-claim.json.marks'), 'utf8')) as Record<string, number>;
  await rm(outputDir, { recursive: true, force: true });
  const stages: Record<string, number> = { ...Object.fromEntries(Object.entries(own.stages).map(([stage, at]) => [stage, at! - started])), ...Object.fromEntries(Object.entries(marks).map(([stage, at]) => [stage, at - performance.timeOrigin - started])), evaluated: wallMs };
  return { wallMs, workerCpuMs: (used.user + used.system) / 1000, stages };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const ms = (value: number | undefined) => (value === undefined ? '' : value.toFixed(0));

const browser = await chromium.launch(chromiumLaunchOptions());
for (let i = 0; i < WARMUP; i++) for (const which of ['sandboxed', 'plain'] as const) await timedRun(browser, which);
const runs: Record<Arm, Timed[]> = { sandboxed: [], plain: [] };
const load = loadavg()[0]!;
for (let i = 0; i < ROUNDS; i++) {
  for (const which of i % 2 === 0 ? (['sandboxed', 'plain'] as const) : (['plain', 'sandboxed'] as const)) runs[which].push(await timedRun(browser, which));
}
await browser.close();

const wall = (which: Arm) => median(runs[which].map((run) => run.wallMs));
const ratio = wall('sandboxed') / wall('plain');
// How far one run's ratio can be trusted: the rounds drawn again with replacement (each round's two runs together), the ratio of
// their medians each time; the 2.5th and 97.5th percentiles of RESAMPLES draws. A seeded draw: the same runs print the same interval.
const RESAMPLES = 2000;
const rng = xoroshiro128plus(1);
const ratios = Array.from({ length: RESAMPLES }, () => {
  const rounds = Array.from({ length: ROUNDS }, () => uniformInt(rng, 0, ROUNDS - 1));
  return median(rounds.map((i) => runs.sandboxed[i]!.wallMs)) / median(rounds.map((i) => runs.plain[i]!.wallMs));
}).sort((a, b) => a - b);
const [low, high] = [quantileSorted(ratios, 0.025), quantileSorted(ratios, 0.975)];
const paired = median(runs.sandboxed.map((run, i) => run.wallMs - runs.plain[i]!.wallMs));
const cpu = (which: Arm) => median(runs[which].map((run) => run.workerCpuMs));
// The fastest run of each arm: on a shared machine, the nearest to what a quiet one gives.
const fastest = (which: Arm) => Math.min(...runs[which].map((run) => run.wallMs));
console.log(`a command agent's run (HTTP front page + one model call): ${ROUNDS} rounds of each arm, interleaved ABBA, after ${WARMUP} warm-up rounds; load ${load.toFixed(1)} → ${loadavg()[0]!.toFixed(1)}`);
console.log(`  sandboxed (bubblewrap)  median ${ms(wall('sandboxed'))} ms (fastest ${ms(fastest('sandboxed'))}), the worker's CPU ${ms(cpu('sandboxed'))} ms`);
console.log(`  unsandboxed             median ${ms(wall('plain'))} ms (fastest ${ms(fastest('plain'))}), the worker's CPU ${ms(cpu('plain'))} ms`);
console.log(`  the sandbox adds ${ms(wall('sandboxed') - wall('plain'))} ms a run (difference of medians; median of the rounds' differences ${ms(paired)} ms)`);
// Three decimals: 1.104 is not met, and two would print it as 1.10.
console.log(`  ratio ${ratio.toFixed(3)} (target ≤ ${TARGET.toFixed(2)}: ${ratio <= TARGET ? 'met' : 'NOT met'}); 95% interval ${low.toFixed(3)}–${high.toFixed(3)}${low <= TARGET && TARGET < high ? ': the target is inside it, this run alone cannot tell' : ''}`);
// Stages in the order a sandboxed run reaches them; a stage one arm has not is left blank.
const stage = (which: Arm, name: string) => {
  const values = runs[which].flatMap((run) => (run.stages[name] === undefined ? [] : [run.stages[name]]));
  return values.length === 0 ? undefined : median(values);
};
const names = [...new Set(runs.sandboxed.flatMap((run) => Object.keys(run.stages)))].sort((a, b) => stage('sandboxed', a)! - stage('sandboxed', b)!);
console.log('  stage (median ms since the run began)   sandboxed   unsandboxed');
for (const name of names) console.log(`    ${name.padEnd(36)} ${ms(stage('sandboxed', name)).padStart(9)}   ${ms(stage('plain', name)).padStart(11)}`);
