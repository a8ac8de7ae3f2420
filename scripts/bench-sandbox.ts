/**
 * `npm run bench:sandbox`: what the command agent's sandbox costs. Median wall time of one offline
 * run of the same small command agent (it reads the front page over HTTP and asks the model once,
 * through the relay when sandboxed) with `sandbox: 'required'` (bubblewrap) and with `sandbox: 'none'`,
 * interleaved (each first in half the rounds). Target ratio ≤ 1.10.
 */
import { chromium, type Browser } from '@playwright/test';
import { commandAgent } from '../src/agents/command.ts';
import { sandboxUnavailable } from '../src/agents/sandbox.ts';
import { chromiumLaunchOptions } from '../src/playwright/chromium.ts';
import { evaluate } from '../src/eval/evaluate.ts';
import { recordedHn } from '../src/sites/hn/site.ts';
import { upvoteFirstPost } from '../src/sites/hn/suite.ts';
// `scripted:<name>` resolves to HN's doubles once the shell registers them, as the fixtures do.
import '../src/playwright/doubles.ts';

const ROUNDS = Number(process.env.ROUNDS ?? 15);
const unavailable = sandboxUnavailable();
if (unavailable) throw new Error(`bench:sandbox needs the sandbox: ${unavailable}`);

// A small agent as users write them: plain HTTP to the site, one model call through the gateway.
const script = `
const html = await (await fetch(process.env.HARNESS_SITE_URL + '/news')).text();
const reply = await fetch(process.env.OPENAI_BASE_URL + '/chat/completions', { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer ' + process.env.OPENAI_API_KEY }, body: JSON.stringify({ model: 'any', messages: [{ role: 'user', content: process.env.HARNESS_TASK }] }) });
await reply.json();
(await import('node:fs')).writeFileSync(process.env.HARNESS_CLAIM_FILE, JSON.stringify({ success: false, summary: 'read ' + html.length + ' bytes' }));
`;
const argv = [process.execPath, '--input-type=module', '-e', script];
const agents = { sandboxed: commandAgent(argv, { name: 'bench', sandbox: 'required' }), plain: commandAgent(argv, { name: 'bench', sandbox: 'none' }) };

async function timedRun(browser: Browser, which: keyof typeof agents): Promise<number> {
  const started = performance.now();
  const context = await browser.newContext();
  const run = await evaluate({ context, site: recordedHn(), agent: agents[which], model: 'scripted:diligent', task: upvoteFirstPost });
  await context.close();
  if (run.stopReason !== 'finished' || run.iterations !== 1 || run.contained !== (which === 'sandboxed')) throw new Error(`${which} run went wrong: ${run.summary}`);
  return performance.now() - started;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

const browser = await chromium.launch(chromiumLaunchOptions());
await timedRun(browser, 'sandboxed');
await timedRun(browser, 'plain');
const times = { sandboxed: [] as number[], plain: [] as number[] };
// ABBA: each arm goes first in half the rounds, so what one run leaves to the next (a sandbox's namespaces torn down in the kernel) is charged to both arms alike.
for (let i = 0; i < ROUNDS; i++) {
  for (const which of i % 2 === 0 ? (['sandboxed', 'plain'] as const) : (['plain', 'sandboxed'] as const)) times[which].push(await timedRun(browser, which));
}
await browser.close();
const ratio = median(times.sandboxed) / median(times.plain);
console.log(`a command agent's run (HTTP front page + one model call), ${ROUNDS} runs each (interleaved, ABBA)`);
console.log(`  sandboxed (bubblewrap)  median ${median(times.sandboxed).toFixed(0)} ms`);
console.log(`  unsandboxed             median ${median(times.plain).toFixed(0)} ms`);
console.log(`  ratio ${ratio.toFixed(2)} (target ≤ 1.10)`);
