import { spawnSync } from 'node:child_process';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { COMMAND_AGENT_STAGES, commandAgent, type CommandAgentStages } from '../src/agents/command.ts';
import { canariesAhead, closeSandboxAhead, sandboxBase, sandboxUnavailable } from '../src/agents/sandbox.ts';
import { ownFolder } from '../src/leftovers.ts';
import { listenLocal, portsAhead, takePortsAhead } from '../src/loopback.ts';
import { runAgent } from './support.ts';

/**
 * The sandbox a run starts ahead for the next (sandbox.ts `ahead`): taken only by a run whose
 * sandbox would be the same, with canaries of that run alone, and never outliving its worker.
 */

test.skip(sandboxUnavailable() !== undefined, 'needs bubblewrap');

/** The stages the run `run` makes published. */
async function stagesOf(run: () => Promise<unknown>): Promise<Record<string, number>> {
  let published: CommandAgentStages | undefined;
  const listener = (message: unknown) => void (published = message as CommandAgentStages);
  subscribe(COMMAND_AGENT_STAGES, listener);
  try {
    await run();
  } finally {
    unsubscribe(COMMAND_AGENT_STAGES, listener);
  }
  return published!.stages as Record<string, number>;
}

const REAL_KEY = 'sk-the-real-one-0123456789';
const printedDecoy = { kind: 'canary', detail: 'the decoy OpenAI key reached an artifact (agent-stdout.txt)' };
/** A project of the test's own; an agent that prints its .env (a decoy, sandboxed) and fails. */
function project(testInfo: { outputPath(...parts: string[]): string }, env?: string) {
  const cwd = testInfo.outputPath('project');
  mkdirSync(cwd, { recursive: true });
  if (env) writeFileSync(join(cwd, '.env'), env);
  return { cwd, agent: commandAgent(['/bin/sh', '-c', 'cat .env 2>/dev/null || echo no .env'], { sandbox: 'required', cwd }) };
}

test.afterEach(() => closeSandboxAhead());

test('a second run takes the sandbox its first started ahead: spawned before the run began, its decoys hold canaries of that run alone, caught and redacted as any run\u2019s', async ({ context }, testInfo) => {
  const { agent } = project(testInfo, `OPENAI_API_KEY=${REAL_KEY}\n`);
  await closeSandboxAhead();
  for (const turn of ['fresh', 'ahead'] as const) {
    let outcome: Awaited<ReturnType<typeof runAgent>> | undefined;
    const stages = await stagesOf(async () => (outcome = await runAgent(context, testInfo, agent)));
    if (turn === 'fresh') expect(stages.spawned).toBeGreaterThan(stages.setUp!);
    else expect(stages.spawned).toBeLessThan(stages.setUp!);
    expect(outcome!.result.escapes?.attempts).toContainEqual(printedDecoy);
    expect(outcome!.attachments.get('agent-stdout.txt')).toMatch(/^OPENAI_API_KEY=\[secret\]/);
    expect(outcome!.attachments.get('agent-stdout.txt')).not.toContain(REAL_KEY);
  }
  // The canaries of the one started ahead go to one run: another run at once gets its own (and makes its own sandbox).
  const [first, second] = [canariesAhead(), canariesAhead()];
  expect(first.openai).not.toEqual(second.openai);
});

/** An agent that prints the TCP ports listening in its network (its sandbox's socats), then the ports of its four URLs: each line sorted. */
const PORTS_SCRIPT = `
awk 'NR > 1 && $4 == "0A" { split($2, a, ":"); print a[2] }' /proc/net/tcp | while read -r hex; do printf '%d\\n' "0x$hex"; done | sort -n | tr '\\n' ' '; echo
for url in "$HARNESS_SITE_URL" "$HARNESS_CDP_URL" "$HARNESS_MCP_URL" "$OPENAI_BASE_URL"; do rest=\${url#http://127.0.0.1:}; echo "\${rest%%/*}"; done | sort -nu | tr '\\n' ' '; echo
`;
const STALE_PORT_AGENT = new URL('fixtures/agents/stale-port.mjs', import.meta.url).pathname;
const portLines = (stdout: string | undefined) => (stdout ?? '').trim().split('\n').map((line) => line.trim());

test('the sandbox started ahead pipes the next run\u2019s ports before that run begins: its socats listen ahead on the ports the run\u2019s four servers then take, and on no other', async ({ context }, testInfo) => {
  const agent = commandAgent(['/bin/sh', '-c', PORTS_SCRIPT], { sandbox: 'required', cwd: project(testInfo).cwd });
  await closeSandboxAhead();
  for (const turn of ['fresh', 'ahead'] as const) {
    let outcome: Awaited<ReturnType<typeof runAgent>> | undefined;
    const stages = await stagesOf(async () => (outcome = await runAgent(context, testInfo, agent)));
    if (turn === 'fresh') expect(stages.socatsAsked).toBeGreaterThan(stages.setUp!);
    else expect(stages.socatsAsked).toBeLessThan(stages.setUp!);
    const [listening, urls] = portLines(outcome!.attachments.get('agent-stdout.txt'));
    expect(urls!.split(' ')).toHaveLength(4);
    expect(listening).toBe(urls);
  }
});

test('a run whose servers did not all take the ports piped ahead is piped the others as it starts: its agent reaches each of its servers, and the port another server took leads nowhere', async ({ context }, testInfo) => {
  await closeSandboxAhead();
  const agent = (stalePort = 0) => commandAgent(['/bin/sh', '-c', `${PORTS_SCRIPT} exec node ${STALE_PORT_AGENT}`], { sandbox: 'required', cwd: project(testInfo).cwd, env: { STALE_PORT: String(stalePort) } });
  // The sandbox started ahead is taken by a run of the same command line: the same STALE_PORT, the first port listening ahead.
  const [taken] = await portsAhead(1);
  await runAgent(context, testInfo, agent(taken));
  // A server of the worker's own takes that port before the run does.
  takePortsAhead(1);
  const other = createServer((_request, response) => response.end('another server of the worker'));
  expect(await listenLocal(other)).toBe(taken);
  try {
    let outcome: Awaited<ReturnType<typeof runAgent>> | undefined;
    const stages = await stagesOf(async () => (outcome = await runAgent(context, testInfo, agent(taken))));
    expect(stages.socatsAsked).toBeLessThan(stages.setUp!);
    const [listening, urls, site, stale] = portLines(outcome!.attachments.get('agent-stdout.txt'));
    expect(urls!.split(' ')).not.toContain(String(taken));
    expect(listening!.split(' ')).toEqual(expect.arrayContaining([...urls!.split(' '), String(taken)]));
    expect(site).toBe('site 200');
    expect(stale).toBe('stale nothing');
  } finally {
    other.close();
  }
});

test('a run whose sandbox would differ does not take the one started ahead: a .env made since is masked by the run\u2019s own decoy, and the one ahead is closed', async ({ context }, testInfo) => {
  const { cwd, agent } = project(testInfo);
  const before = await stagesOf(() => runAgent(context, testInfo, agent));
  expect(before.starting).toEqual(expect.any(Number));
  const ahead = () => readdirSync(sandboxBase()).filter((name) => name.startsWith(ownFolder('sbx')));
  const started = ahead();
  expect(started).toHaveLength(1);
  writeFileSync(join(cwd, '.env'), `OPENAI_API_KEY=${REAL_KEY}\n`);
  let outcome: Awaited<ReturnType<typeof runAgent>> | undefined;
  const stages = await stagesOf(async () => (outcome = await runAgent(context, testInfo, agent)));
  expect(stages.spawned).toBeGreaterThan(stages.setUp!);
  expect(outcome!.attachments.get('agent-stdout.txt')).toMatch(/^OPENAI_API_KEY=\[secret\]/);
  expect(outcome!.attachments.get('agent-stdout.txt')).not.toContain(REAL_KEY);
  expect(outcome!.result.escapes?.attempts).toContainEqual(printedDecoy);
  await expect.poll(() => existsSync(join(sandboxBase(), started[0]!))).toBe(false);
});

test('a sandbox started ahead and never taken keeps no process alive: its worker exits by itself, and its folder goes with it', () => {
  const worker = spawnSync(process.execPath, ['--import', 'tsx', 'tests/fixtures/sandbox/ahead-exit.ts'], { encoding: 'utf8', timeout: 20_000 });
  expect(worker.error).toBeUndefined();
  expect(worker.status).toBe(0);
  const [folder] = JSON.parse(worker.stdout) as string[];
  expect(folder).toMatch(new RegExp(`^he-sbx-${worker.pid}-`));
  expect(existsSync(join(sandboxBase(), folder!))).toBe(false);
});
