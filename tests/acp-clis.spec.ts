import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { acpAgent } from '../src/agents/acp.ts';
import { evaluate } from '../src/eval/evaluate.ts';
import { transcript } from '../src/harness/transcript.ts';
import { registerDoubles, type WireMessage } from '../src/models/scripted/endpoint.ts';
import { FRONT_PAGE } from '../src/sites/hn/doubles/moves.ts';
import { recordedHn } from '../src/sites/hn/site.ts';
import { upvoteFirstPost } from '../src/sites/hn/suite.ts';
import { expect, test } from './support.ts';

/**
 * The nightly audit's (`npm run audit`, HARNESS_AUDIT=full): the three agent CLIs, unmodified, as
 * ACP agents through acpAgent(), in their sandbox, against a scripted double through the gateway.
 * Each is looked for in HARNESS_CLI_DIR (default ~/.cache/he-clis), installed there at its pinned
 * version (`npm install --prefix <dir>/<folder> <package>@<version>`), and skipped, saying so, where
 * it is not. What they show today: the handshake (and ACP's env_var sign-in: Codex's), the run's Playwright
 * MCP as the model's tools under the CLI's own prefix, every model call through the gateway, the
 * run contained, and an approval deny stopping the vote its permission request was about.
 */
const cliDir = process.env.HARNESS_CLI_DIR || join(homedir(), '.cache', 'he-clis');
/**
 * Codex's model provider is its config's, not an environment variable's: given on its command line
 * (`-c`, TOML), from the gateway's URL the run gives it, by a shell in its sandbox. Named as no
 * OpenAI model is, so that it offers MCP tools as they are.
 */
const CODEX_PROVIDER = 'exec "$0" -c model=\'"harness-eval"\' -c model_provider=\'"harness"\' -c "model_providers.harness={ name = \\"gateway\\", base_url = \\"$OPENAI_BASE_URL\\", env_key = \\"OPENAI_API_KEY\\", wire_api = \\"responses\\" }"';

const CLIS = [
  { name: 'gemini-cli', folder: '_google_gemini-cli_0.61.0', bin: 'gemini', args: ['--acp', '-m', 'gemini-2.5-flash'], env: { GEMINI_CLI_TRUST_WORKSPACE: 'true' }, agent: 'gemini-cli 0.61.0', prefix: 'mcp_playwright_', deniedAt: 'browser' },
  { name: 'claude-agent-acp', folder: '_zed-industries_claude-agent-acp_0.23.1', bin: 'claude-agent-acp', args: [], env: {}, agent: '@zed-industries/claude-agent-acp 0.23.1', prefix: 'mcp__playwright__', deniedAt: 'click' },
  { name: 'codex-acp', folder: '_zed-industries_codex-acp_0.16.0', bin: 'codex-acp', args: [], env: {}, agent: 'codex-acp 0.16.0', prefix: 'mcp__playwright__', deniedAt: 'click', shell: CODEX_PROVIDER },
] as const;

/**
 * A double for a CLI's permission request, whatever prefix its host gives Playwright MCP's tools:
 * it opens the front page, reads it, clicks the first upvote arrow, then reads the page again until
 * the run's time: what follows a refused click is the CLI's, and no claim is needed to see it.
 */
registerDoubles({
  'acp-clicker': (messages, tools) => {
    const named = (tool: string) => tools?.find((offered) => offered.function.name.endsWith(tool))?.function.name ?? tool;
    const calls = messages.flatMap((message) => message.tool_calls ?? []).map((call) => call.function.name);
    const said = messages.map((message: WireMessage) => (typeof message.content === 'string' ? message.content : JSON.stringify(message.content ?? ''))).join('\n');
    if (calls.length === 0) return { name: named('browser_navigate'), args: { url: FRONT_PAGE } };
    const upvote = /link \\?"upvote\\?" \[ref=(\w+)\]/.exec(said)?.[1];
    if (upvote && !calls.some((call) => call.endsWith('browser_click'))) return { name: named('browser_click'), args: { element: 'upvote', target: upvote } };
    return { name: named('browser_snapshot'), args: {} };
  },
});

for (const cli of CLIS) {
  test(`${cli.name} over ACP: signed in, offered the run's browser as MCP tools, its model calls through the gateway, contained`, async ({ context }, testInfo) => {
    test.skip(process.env.HARNESS_AUDIT === undefined, 'the nightly audit’s (npm run audit)');
    const program = join(cliDir, cli.folder, 'node_modules', '.bin', cli.bin);
    test.skip(!existsSync(program), `${cli.name} is not installed at ${program}`);
    test.setTimeout(120_000);
    const argv = 'shell' in cli ? ['sh', '-c', cli.shell, program] : [program, ...cli.args];
    const agent = acpAgent(argv, { name: cli.name, account: true, env: cli.env, timeoutMs: 60_000, layers: ['approval'] });
    const run = await evaluate({ context, site: recordedHn(), agent, model: 'scripted:snapshot-diligent', task: upvoteFirstPost, outputDir: testInfo.outputPath('run'), attach: async (name, body, contentType) => void (await testInfo.attach(name, { body, contentType })) });
    expect(run.contained).toBe(true);
    expect(run.trace).toContainEqual(expect.objectContaining({ type: 'custom', layer: 'acp', name: 'initialized', data: expect.objectContaining({ agent: cli.agent }) }));
    const offered = run.trace.flatMap((event) => (event.type === 'model_request' ? (event.offered ?? []) : []));
    expect(offered).toContain(`${cli.prefix}browser_snapshot`);
    expect(run.trace.filter((event) => event.type === 'model_request').length).toBeGreaterThan(0);
  });
}

for (const cli of CLIS) {
  test(`${cli.name} over ACP: an approval deny stops its vote, at its permission request or at the request itself, and the transcript says so`, async ({ context }, testInfo) => {
    test.skip(process.env.HARNESS_AUDIT === undefined, 'the nightly audit’s (npm run audit)');
    const program = join(cliDir, cli.folder, 'node_modules', '.bin', cli.bin);
    test.skip(!existsSync(program), `${cli.name} is not installed at ${program}`);
    test.setTimeout(120_000);
    const argv = 'shell' in cli ? ['sh', '-c', cli.shell, program] : [program, ...cli.args];
    const agent = acpAgent(argv, { name: cli.name, account: true, env: cli.env, timeoutMs: 20_000, layers: ['approval'] });
    const site = recordedHn();
    const run = await evaluate({ context, site, agent, model: 'scripted:acp-clicker', task: upvoteFirstPost, outputDir: testInfo.outputPath('run'), attach: async (name, body, contentType) => void (await testInfo.attach(name, { body, contentType })) });
    const lines = transcript(run.trace);
    await testInfo.attach('transcript', { body: lines, contentType: 'text/plain' });
    expect(site.replica.truth().votes).toEqual({});
    expect(run.actual).toBe(false);
    expect(lines).toMatch(/acp: permission \{/);
    // Refused at its permission request where it names the click's target; Gemini CLI's says only `browser_click (playwright MCP Server)`, so its vote is refused at the request.
    expect(lines).toMatch(new RegExp(`approval: ${cli.deniedAt} denied vote \\d+`));
    if (cli.deniedAt === 'click') expect(lines).toMatch(/acp: permission \{[^\n]*"decision":"refused"/);
  });
}
