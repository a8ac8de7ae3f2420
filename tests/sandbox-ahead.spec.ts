import { spawnSync } from 'node:child_process';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { COMMAND_AGENT_STAGES, commandAgent, type CommandAgentStages } from '../src/agents/command.ts';
import { canariesAhead, closeSandboxAhead, sandboxBase, sandboxUnavailable } from '../src/agents/sandbox.ts';
import { ownFolder } from '../src/leftovers.ts';
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
