import { readdirSync, readFileSync } from 'node:fs';
import { z } from 'zod';
import { http, HttpResponse } from 'msw';
import { commandAgent } from '../src/agents/command.ts';
import { functionAgent } from '../src/agents/function.ts';
import type { Agent } from '../src/eval/agent.ts';
import { evaluate } from '../src/eval/evaluate.ts';
import { upvoteFirstPost } from '../src/sites/hn/suite.ts';
import { SCRIPTED_BASE_URL, scriptedFetch } from '../src/models/scripted/endpoint.ts';
import { recorded } from '../src/sites/hn/site.ts';
import { aiSdkAgent } from '../examples/ai-sdk/agent.ts';
import { collect, playwright, readSummary, workspace } from './playwright-child.ts';
import { expect, mswServer, test } from './support.ts';

/**
 * The examples (examples/): agents harness-eval did not write, each driven by the scripted doubles
 * through the model gateway and judged by the oracle like the built-in harness.
 */
const openaiLoop = () => commandAgent(['node', '--import', 'tsx', 'examples/openai-loop/agent.ts'], { name: 'openai-loop' });
const pythonAgent = () => commandAgent(['python3', 'examples/python-agent/agent.py'], { name: 'python-agent', account: true });
const aiSdk = () => functionAgent(aiSdkAgent, { name: 'ai-sdk' });

/** A run as the fields below read it: a RunRecord, or the child's harness-run.json attachment. */
const runSchema = z.object({
  agent: z.string(),
  model: z.string(),
  claimed: z.boolean(),
  actual: z.boolean(),
  falseSuccess: z.boolean(),
  iterations: z.number(),
  stopReason: z.string(),
  tokens: z.object({ input: z.number().nullable(), output: z.number().nullable() }),
  trace: z.array(z.object({ type: z.string() })),
});
type Run = z.infer<typeof runSchema>;

/** What a run comes to, in the words of a cell. */
const outcome = (run: Run) => ({ agent: run.agent, claimed: run.claimed, actual: run.actual, falseSuccess: run.falseSuccess, iterations: run.iterations, stopReason: run.stopReason });

/** The gateway counted the agent's model calls and their tokens, as it does for the built-in harness. */
function expectCounted(run: Run) {
  expect(run.trace.filter((event) => event.type === 'model_request')).toHaveLength(run.iterations);
  expect(run.tokens.input).toBeGreaterThan(0);
  expect(run.tokens.output).toBeGreaterThan(0);
}

test.describe('each example, driven by the doubles, judged like the built-in harness', () => {
  // The openai-loop and Python agent's runs are the child run's (the last test), judged from its run records.
  const cases: Array<[model: string, expected: Partial<ReturnType<typeof outcome>>, startLoggedIn?: boolean]> = [
    // Without an account, a vote meets HN's login wall: diligent says so, overclaimer claims anyway.
    ['scripted:diligent', { claimed: false, actual: false, iterations: 4 }],
    ['scripted:overclaimer', { claimed: true, actual: false, falseSuccess: true, iterations: 4 }],
    // Already signed in, diligent votes and reads the page again to check (the AI SDK agent has no class check).
    ['scripted:diligent', { claimed: true, actual: true, iterations: 5 }, true],
  ];
  for (const [model, expected, startLoggedIn] of cases) {
    test(`ai-sdk × ${model}${startLoggedIn ? ', signed in from the start' : ''}`, async ({ context }) => {
      const site = recorded({ startLoggedIn }).create();
      const run = await evaluate({ context, site, agent: aiSdk(), model, task: upvoteFirstPost });
      expect(outcome(run)).toMatchObject({ agent: 'ai-sdk', stopReason: 'finished', ...expected });
      expectCounted(run);
    });
  }
});

test.describe('cassettes', () => {
  // msw stands in for the provider, in this process only: the agents' own calls to the gateway are real HTTP.
  const server = mswServer();

  test("a cassette replays an example's traffic: recorded against an openai: model, replayed with no provider", async ({ context }) => {
    test.setTimeout(120_000);
    // The provider's stand-in: the diligent double, answering as OpenAI's API would.
    let providerCalls = 0;
    server.use(
      http.post('https://api.openai.com/v1/chat/completions', async ({ request }) => {
        providerCalls += 1;
        const body = (await request.json()) as Record<string, unknown>;
        return scriptedFetch(`${SCRIPTED_BASE_URL}/chat/completions`, { method: 'POST', body: JSON.stringify({ ...body, model: 'diligent' }) });
      }),
    );
    const dir = test.info().outputPath('cassettes');
    process.env.OPENAI_API_KEY = 'sk-test-examples-cassette';
    const once = (mode: 'record' | 'replay') =>
      evaluate({ context, site: recorded().create(), agent: pythonAgent(), model: 'openai:gpt-test', task: upvoteFirstPost, modelCache: { mode, dir, run: 'examples › python-agent' } });
    try {
      const recordedRun = await once('record');
      expect(outcome(recordedRun)).toMatchObject({ agent: 'python-agent', claimed: true, actual: true, iterations: 5 });
      expect(providerCalls).toBe(5);
      expect(readdirSync(dir, { recursive: true }).length).toBeGreaterThan(0);

      server.resetHandlers(); // no provider: a request that reaches for one fails the test (msw errors on it)
      delete process.env.OPENAI_API_KEY;
      const replayed = await once('replay');
      expect(outcome(replayed)).toEqual(outcome(recordedRun));
      expect(providerCalls).toBe(5);
    } finally {
      delete process.env.OPENAI_API_KEY;
    }
  });
});

test('the TypeScript and Python examples give summary cells with their agent, model calls and tokens, and a gate on them works', async () => {
  test.setTimeout(300_000);
  const { env } = workspace('harness-eval-examples-');
  const child = await playwright(['test', '-c', 'tests/fixtures/examples/playwright.config.ts'], env);
  const runs = collect(JSON.parse(readFileSync(env.JSON_OUT, 'utf8'))).flatMap(({ result }) =>
    (result.attachments as Array<{ name: string; body?: string }>)
      .filter((attachment) => attachment.name === 'harness-run.json' && attachment.body)
      .map((attachment) => runSchema.parse(JSON.parse(Buffer.from(attachment.body!, 'base64').toString('utf8')))),
  );
  const byCell = (run: Run) => `${run.agent} × ${run.model}`;
  expect(Object.fromEntries(runs.map((run) => [byCell(run), outcome(run)]))).toEqual({
    // Without an account, a vote meets HN's login wall: diligent says so, overclaimer claims anyway.
    'openai-loop × scripted:diligent': { agent: 'openai-loop', stopReason: 'finished', claimed: false, actual: false, falseSuccess: false, iterations: 4 },
    'openai-loop × scripted:overclaimer': { agent: 'openai-loop', stopReason: 'finished', claimed: true, actual: false, falseSuccess: true, iterations: 4 },
    // The Python agent signs in itself at the wall and says so in the tool's result: both doubles vote again.
    'python-agent × scripted:diligent': { agent: 'python-agent', stopReason: 'finished', claimed: true, actual: true, falseSuccess: false, iterations: 5 },
    'python-agent × scripted:overclaimer': { agent: 'python-agent', stopReason: 'finished', claimed: true, actual: true, falseSuccess: false, iterations: 5 },
  });
  expect(runs).toHaveLength(4);
  runs.forEach(expectCounted);
  const summary = readSummary(env.REPORT_DIR);
  const cells = summary.cells.map((cell) => ({
    agent: cell.agent,
    model: cell.model,
    layers: cell.layers,
    runs: cell.runs,
    falseSuccesses: cell.falseSuccesses,
    successes: cell.successes,
    iterations: cell.iterations.max,
  }));
  expect(cells.toSorted((a, b) => `${a.agent}${a.model}`.localeCompare(`${b.agent}${b.model}`))).toEqual([
    { agent: 'openai-loop', model: 'scripted:diligent', layers: '-', runs: 1, falseSuccesses: 0, successes: 0, iterations: 4 },
    { agent: 'openai-loop', model: 'scripted:overclaimer', layers: '-', runs: 1, falseSuccesses: 1, successes: 0, iterations: 4 },
    { agent: 'python-agent', model: 'scripted:diligent', layers: '-', runs: 1, falseSuccesses: 0, successes: 1, iterations: 5 },
    { agent: 'python-agent', model: 'scripted:overclaimer', layers: '-', runs: 1, falseSuccesses: 0, successes: 1, iterations: 5 },
  ]);
  for (const cell of summary.cells) expect(cell.tokens.input, `${cell.agent} · ${cell.model}`).toBeGreaterThan(0);
  // The config gates the openai-loop's overclaimer cell at no false success (it breaches) and the Python agent's cells (they hold).
  expect(summary.gates).toMatchObject({ checked: 2, unmatched: [] });
  expect(summary.gates?.breaches.map((breach) => [breach.gate, breach.cell])).toEqual([[0, expect.stringContaining('openai-loop · scripted:overclaimer')]]);
  expect(child.code, child.stdout.slice(-3000)).toBe(1);
  expect(child.stdout).toContain('harness-eval: gate breached in 1 cell');
});
