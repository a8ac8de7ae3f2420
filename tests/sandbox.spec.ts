import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect, createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import type { Readable } from 'node:stream';
import { dirname, join } from 'node:path';
import { expect, test } from '@playwright/test';
import { COMMAND_AGENT_STAGES, commandAgent, type CommandAgentOptions, type CommandAgentStages } from '../src/agents/command.ts';
import { evaluate } from '../src/eval/evaluate.ts';
import { createModel } from '../src/models/registry.ts';
import { HARNESS_RUN_ATTACHMENT, HARNESS_RUN_START_ATTACHMENT, test as harnessTest } from '../src/playwright/fixtures.ts';
import { renderHtml, renderMarkdown } from '../src/report/files.ts';
import { summarize } from '../src/report/summarize.ts';
import { runRecordSchema } from '../src/report/types.ts';
import { live } from '../src/sites/hn/live.ts';
import { recordedHn } from '../src/sites/hn/site.ts';
import { upvoteFirstPost } from '../src/sites/hn/suite.ts';
import { playwright, workspace } from './playwright-child.ts';
import { runAgent } from './support.ts';
import { CONTAINMENT_SWITCH } from '../src/reach.ts';

/**
 * The command agent's sandbox against agents that try to get out, each in bash or Python
 * (tests/fixtures/agents/escape/). Each test asserts the property (no secret is readable, no
 * signal reaches the worker, nothing outlives the run…), not the one exploit its agent tries.
 */

/** An escape agent, sandboxed or refused: unsandboxed, signal.sh would signal every process of the user on the machine. */
const escape = (script: string, options: CommandAgentOptions = {}) => {
  const path = join(new URL('fixtures/agents/escape/', import.meta.url).pathname, script);
  return commandAgent([script.endsWith('.py') ? 'python3' : 'bash', path], { sandbox: 'required', ...options });
};
/** Processes whose command line holds `marker`, from outside every sandbox. */
const withMarker = (marker: string): number[] => {
  try {
    return execFileSync('pgrep', ['-f', marker], { encoding: 'utf8' }).trim().split('\n').map(Number);
  } catch {
    return []; // pgrep exits 1 when it finds none
  }
};
const marker = () => `he-escape-${randomBytes(6).toString('hex')}`;
/** This worker's bwraps: the sandboxes of its runs. */
/** This worker's run sandboxes: its bwrap children, but for its test browser's (which says how it is contained on its command line). */
const sandboxes = (): number[] => {
  let pids: number[];
  try {
    pids = execFileSync('pgrep', ['-P', String(process.pid), '-x', 'bwrap'], { encoding: 'utf8' }).trim().split('\n').map(Number);
  } catch {
    return [];
  }
  const commandLine = (pid: number) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    } catch {
      return undefined; // ended since pgrep saw it
    }
  };
  return pids.filter((pid) => commandLine(pid)?.includes(CONTAINMENT_SWITCH) === false);
};
const readJson = (path: string) => JSON.parse(readFileSync(path, 'utf8')) as Record<string, any>;

test.describe('a sandboxed command agent', () => {
  test('reads every /proc/*/environ and cmdline it can see: no secret of the worker, no process outside its run', async ({ context }, testInfo) => {
    const secrets = { OPENAI_API_KEY: `sk-marker-${randomBytes(8).toString('hex')}`, HN_PASSWORD: `pw-marker-${randomBytes(8).toString('hex')}` };
    const before = { ...process.env };
    Object.assign(process.env, secrets);
    try {
      const { result } = await runAgent(context, testInfo, escape('snoop.py'));
      expect(result).toMatchObject({ contained: true, claimed: true });
      const found = readJson(testInfo.outputPath('run', 'found.json'));
      const everything = JSON.stringify(found);
      for (const secret of Object.values(secrets)) expect(everything).not.toContain(secret);
      // Its own namespace only: bwrap's init, the relay (sh), its socats (one a port: the site, the CDP endpoint, the MCP endpoint, the gateway), and itself (after the pyenv shim's execs).
      const commands = Object.keys(found).sort((a, b) => Number(a) - Number(b)).map((pid) => `${pid} ${found[pid]!.cmdline.split(' ')[0]}`);
      const socat = expect.stringMatching(/^\d+ \S*\/socat$/);
      expect(commands).toEqual(['1 bwrap', '2 /bin/sh', socat, socat, socat, socat, expect.stringMatching(/^\d+ \S*python3$/)]);
      expect(everything).not.toContain('playwright');
    } finally {
      for (const name of Object.keys(secrets)) {
        if (before[name] === undefined) delete process.env[name];
        else process.env[name] = before[name];
      }
    }
  });

  test('signals its parent, pid 1 and every pid it sees: none reaches the worker, whose inspector never opens', async ({ context }, testInfo) => {
    const { result } = await runAgent(context, testInfo, escape('signal.sh'));
    expect(result).toMatchObject({ contained: true, claimed: true, stopReason: 'finished' });
    // SIGUSR1 would open Node's inspector on 127.0.0.1:9229 in the worker.
    const reached = await new Promise<boolean>((resolve) => {
      const socket = connect(9229, '127.0.0.1', () => (socket.destroy(), resolve(true)));
      socket.on('error', () => resolve(false));
    });
    expect(reached).toBe(false);
  });

  test('daemons it leaves (setsid, double fork) are gone when the run ends, and counted as escapes', async ({ context }, testInfo) => {
    const tag = marker();
    const { result } = await runAgent(context, testInfo, escape('daemon.sh', { env: { ESCAPE_MARKER: tag } }));
    expect(result).toMatchObject({ contained: true, claimed: true, stopReason: 'finished' });
    expect(result.escapes?.processesLeft).toBeGreaterThanOrEqual(2);
    expect(withMarker(tag)).toEqual([]);
  });

  test('at its time limit, or the test\u2019s, everything in its sandbox is killed: stopReason timeout, nothing left', async ({ context }, testInfo) => {
    const tag = marker();
    const timed = await runAgent(context, testInfo, escape('linger.sh', { timeoutMs: 3_000, env: { ESCAPE_MARKER: tag } }));
    expect(timed.result).toMatchObject({ contained: true, claimed: false, stopReason: 'timeout', incomplete: true, summary: 'claimed nothing: killed at its time limit (3000 ms)' });
    expect(withMarker(tag)).toEqual([]);
    const controller = new AbortController();
    const running = runAgent(context, testInfo, escape('linger.sh', { env: { ESCAPE_MARKER: tag } }), { signal: controller.signal });
    await expect.poll(() => withMarker(tag).length, { timeout: 30_000 }).toBeGreaterThan(0);
    controller.abort();
    expect((await running).result).toMatchObject({ stopReason: 'timeout', summary: 'claimed nothing: killed at the run\u2019s time limit' });
    expect(withMarker(tag)).toEqual([]);
  });

  test('writes outside its work folder fail (the project, the host\u2019s /tmp, the test\u2019s folder); its HOME takes them', async ({ context }, testInfo) => {
    const tag = marker();
    const outside = [join(process.cwd(), `${tag}.txt`), `/tmp/${tag}.txt`, testInfo.outputPath(`${tag}.txt`)];
    const { result } = await runAgent(context, testInfo, escape('write.sh', { env: { ESCAPE_PATHS: outside.join(' ') } }));
    expect(result).toMatchObject({ contained: true, claimed: true });
    for (const path of outside) expect(existsSync(path), path).toBe(false);
    // Its /tmp is its own (what it wrote there is gone with it); its HOME is its run's folder, the one place it writes that outlives it.
    const [project, tmp, testFolder] = outside;
    expect(readFileSync(testInfo.outputPath('run', 'wrote.txt'), 'utf8')).toBe(`refused ${project}\nwrote ${tmp}\nrefused ${testFolder}\n`);
  });

  test('a claim file that is a link (to the reader\u2019s own environ) or a pipe is refused, never followed or waited on: the worst case, a claimed success, named', async ({ context }, testInfo) => {
    const secret = `sk-marker-${randomBytes(8).toString('hex')}`;
    const before = process.env.OPENAI_API_KEY;
    process.env.OPENAI_API_KEY = secret;
    try {
      for (const how of ['link', 'pipe']) {
        const { result } = await runAgent(context, testInfo, escape('claim-link.sh', { env: { CLAIM_AS: how } }));
        const detail = `the claim file is ${how === 'link' ? 'a symbolic link' : 'a named pipe'}: not read, taken as a claimed success`;
        expect(result, how).toMatchObject({ contained: true, claimed: true, summary: detail });
        expect(result.escapes?.attempts).toContainEqual({ kind: 'claim', detail });
        expect(JSON.stringify(result)).not.toContain(secret);
      }
    } finally {
      if (before === undefined) delete process.env.OPENAI_API_KEY;
      else process.env.OPENAI_API_KEY = before;
    }
  });

  test('a loopback port or a Unix socket in the temporary folder it was not handed is out of reach; the site it was handed is not', async ({ context }, testInfo) => {
    let connections = 0;
    const server = createServer((socket) => (connections++, socket.destroy()));
    const unixServer = createServer((socket) => (connections++, socket.destroy()));
    // Where another run's relay would listen.
    const socketPath = join(mkdtempSync(join(tmpdir(), 'he-sbx-')), 's1');
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    await new Promise<void>((resolve) => unixServer.listen(socketPath, resolve));
    try {
      const port = (server.address() as AddressInfo).port;
      const { result } = await runAgent(context, testInfo, escape('connect.py', { env: { PROBE_PORT: String(port), PROBE_SOCKET: socketPath } }));
      expect(result).toMatchObject({ contained: true, claimed: true });
      expect(readJson(testInfo.outputPath('run', 'reached.json'))).toEqual({ probe: false, socket: false, site: true });
      expect(connections).toBe(0);
    } finally {
      await new Promise((resolve) => server.close(resolve));
      await new Promise((resolve) => unixServer.close(resolve));
      rmSync(dirname(socketPath), { recursive: true, force: true });
    }
  });

  test('its Chromium (HARNESS_CDP_URL) shows no key at file:///proc/…/environ and reaches no loopback port it was not handed', async ({ context }, testInfo) => {
    const secret = `sk-marker-${randomBytes(8).toString('hex')}`;
    const before = process.env.OPENAI_API_KEY;
    process.env.OPENAI_API_KEY = secret;
    let connections = 0;
    const server = createServer((socket) => {
      connections++;
      socket.on('error', () => {}).end('HTTP/1.1 200 OK\r\ncontent-length: 7\r\n\r\nreached');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const port = (server.address() as AddressInfo).port;
      const agent = commandAgent([process.execPath, join(new URL('fixtures/agents/escape/', import.meta.url).pathname, 'cdp-snoop.mjs')], { sandbox: 'required', env: { PROBE_PORT: String(port) } });
      const { result } = await runAgent(context, testInfo, agent);
      expect(result).toMatchObject({ contained: true, claimed: true, stopReason: 'finished' });
      const found = readJson(testInfo.outputPath('run', 'found.json'));
      expect(Object.keys(found)).toHaveLength(3);
      expect(JSON.stringify(found)).not.toContain(secret);
      expect(JSON.stringify(found)).not.toContain('reached');
      expect(connections).toBe(0);
    } finally {
      if (before === undefined) delete process.env.OPENAI_API_KEY;
      else process.env.OPENAI_API_KEY = before;
      await new Promise((resolve) => server.close(resolve));
    }
  });

  test('the site\u2019s own password does not log in during its run; with account: true the login it was handed does', async ({ context }, testInfo) => {
    const site = () => recordedHn({ account: { username: 'harness', password: 'battery-staple-42' } });
    await runAgent(context, testInfo, escape('login.py'), { site: site() });
    expect(readJson(testInfo.outputPath('run', 'logins.json'))).toEqual({ default: false });
    const { result } = await runAgent(context, testInfo, escape('login.py', { account: true }), { site: site() });
    expect(readJson(testInfo.outputPath('run', 'logins.json'))).toEqual({ default: false, handed: true });
    expect(JSON.stringify(result)).not.toMatch(/run-[0-9a-f]{32}/);
  });
});

test('a sandbox starts with its run, while the session opens; a run whose session fails closes it: no bwrap, no socket folder left', async ({ context }, testInfo) => {
  const site = recordedHn();
  await site.attach(context);
  const failure = new Error('the session did not open');
  let socketDir: string | undefined;
  const running = escape('login.py').run({
    task: upvoteFirstPost,
    site,
    postconditions: upvoteFirstPost.postconditions,
    context,
    model: createModel('scripted:diligent'),
    secrets: [],
    outputDir: testInfo.outputPath('run'),
    carried: { save: () => undefined, restore: () => {} },
    attach: async () => {},
    async openSession() {
      // Only a sandbox started before the session is open is seen here.
      await expect.poll(sandboxes, { timeout: 10_000 }).toHaveLength(1);
      // bwrap binds the relay's socket folder.
      socketDir = readFileSync(`/proc/${sandboxes()[0]}/cmdline`, 'utf8').split('\0').find((arg) => arg.includes('he-sbx-'));
      throw failure;
    },
  });
  await expect(running).rejects.toBe(failure);
  expect(socketDir).toMatch(/he-sbx-/);
  expect(existsSync(socketDir!)).toBe(false);
  await expect.poll(sandboxes).toEqual([]);
});

test('the agent cannot speak for its relay: a false exit it writes to every fd of the relay it can open does not end its run', async ({ context }, testInfo) => {
  // It opens every fd of the relay (pid 2) and of bwrap's init (pid 1) it can, says it exited, and writes its claim a moment later.
  const script = `
const fs = require('node:fs');
const lie = 'exited 0\\n' + JSON.stringify({ code: 0, signal: null }) + '\\n';
const reached = [];
for (const pid of [1, 2]) {
  for (const fd of fs.readdirSync('/proc/' + pid + '/fd')) {
    try {
      fs.writeSync(fs.openSync('/proc/' + pid + '/fd/' + fd, 'w'), lie);
      reached.push(fs.readlinkSync('/proc/' + pid + '/fd/' + fd));
    } catch {}
  }
}
setTimeout(() => fs.writeFileSync(process.env.HARNESS_CLAIM_FILE, JSON.stringify({ success: true, summary: 'claimed after its false exits to ' + reached.join(' ') })), 1_000);
`;
  const { result } = await runAgent(context, testInfo, commandAgent([process.execPath, '-e', script], { sandbox: 'required' }));
  expect(result).toMatchObject({ contained: true, claimed: true });
  // It reached no socket (the control channel is a socket pair: no path, and /proc cannot open it), only what it could write anyway (/dev/null).
  expect(result.summary).toMatch(/^claimed after its false exits to/);
  expect(result.summary).not.toContain('socket:');
});

test('descriptors the worker inherited open across exec are /dev/null in the sandbox: the agent can neither see nor write to them', async () => {
  // Its fds 9 and 251 are socket pairs with this test, left open across exec, as a CI runner's pipe may be.
  const stdio = Array.from({ length: 252 }, (_, fd) => (fd === 1 || fd === 9 || fd === 251 ? 'pipe' : 'ignore') as 'pipe' | 'ignore');
  const child = spawn(process.execPath, ['--import', 'tsx', 'tests/fixtures/sandbox/inherited-fds.ts'], { stdio });
  const read = (fd: number) => new Promise<string>((resolve) => {
    let text = '';
    (child.stdio[fd] as Readable).setEncoding('utf8').on('data', (chunk: string) => void (text += chunk)).on('close', () => resolve(text));
  });
  const [listing, nine, last] = await Promise.all([read(1), read(9), read(251)]);
  expect(nine + last, 'what the agent wrote into the runner\u2019s descriptors').toBe('');
  // The agent saw 251 as /dev/null (9 is closed on the way, and reused), and no socket: Node's own descriptors are event ones.
  const held = new Map(listing.trim().split('\n').map((line) => line.split(' ') as [string, string]));
  expect(held.get('251')).toBe('/dev/null');
  expect([...held.values()].filter((target) => target.startsWith('socket:'))).toEqual([]);
});

test('a sandboxed agent\u2019s end is reported as it was: its exit code, or the signal that killed it', async ({ context }, testInfo) => {
  const exited = await runAgent(context, testInfo, commandAgent(['/bin/sh', '-c', 'exit 3'], { sandbox: 'required' }));
  expect(exited.result).toMatchObject({ contained: true, stopReason: 'error', summary: 'claimed nothing: exited with code 3 and wrote no claim file' });
  const killed = await runAgent(context, testInfo, commandAgent(['/bin/sh', '-c', 'kill -SEGV $$'], { sandbox: 'required' }));
  expect(killed.result).toMatchObject({ contained: true, stopReason: 'error', summary: 'claimed nothing: was killed by SIGSEGV and wrote no claim file' });
});

test('each run publishes its stages on COMMAND_AGENT_STAGES in the order they happen: the sandbox up and its ports handed over before the agent starts, its processes killed before its output ends', async ({ context }, testInfo) => {
  const published: CommandAgentStages[] = [];
  const listener = (message: unknown) => void published.push(message as CommandAgentStages);
  subscribe(COMMAND_AGENT_STAGES, listener);
  try {
    for (const sandbox of ['required', 'none'] as const) await runAgent(context, testInfo, commandAgent(['/bin/sh', '-c', 'exit 0'], { sandbox }));
  } finally {
    unsubscribe(COMMAND_AGENT_STAGES, listener);
  }
  expect(published.map((run) => run.sandboxed)).toEqual([true, false]);
  const [sandboxed, plain] = published.map((run) => run.stages);
  /** Each stage reached, none before the one it follows. */
  const inOrder = (stages: Partial<Record<string, number>>, chain: string[]) => {
    for (const stage of chain) expect(stages[stage], stage).toEqual(expect.any(Number));
    for (let i = 1; i < chain.length; i++) expect(stages[chain[i]!], `${chain[i - 1]} before ${chain[i]}`).toBeGreaterThanOrEqual(stages[chain[i - 1]!]!);
  };
  inOrder(sandboxed!, ['setUp', 'forwarded', 'launched', 'starting', 'agentExited', 'exited', 'killed', 'drained', 'closed']);
  // The relay's first word races the ports being handed over; either way it comes before the agent starts. A sandbox started ahead (an earlier run's) was spawned before its run's setUp.
  inOrder(sandboxed!, ['spawned', 'relayUp', 'starting']);
  inOrder(sandboxed!, ['spawned', 'forwarded']);
  expect(Object.keys(plain!).sort()).toEqual(['closed', 'drained', 'exited', 'killed', 'launched', 'setUp']);
  inOrder(plain!, ['setUp', 'launched', 'exited', 'killed', 'drained', 'closed']);
});

test('the live site cannot make a login for one run: account: true for a command agent there fails in one line, before the run', async ({ context }) => {
  let started = false;
  const site = live({ account: { username: 'someone', password: 'their-real-password' } }).create();
  const running = evaluate({ context, site, agent: escape('login.py', { account: true }), model: 'scripted:diligent', task: upvoteFirstPost, onStart: async () => void (started = true) });
  await expect(running).rejects.toThrow(/^commandAgent\(\) account: hn-live cannot make a login for one run, and a command agent is never given the site's own password/);
  expect(started).toBe(false);
});

test('kill -9 of the worker leaves no process of the agent', async () => {
  test.setTimeout(120_000);
  const tag = marker();
  const { dir, env } = workspace('harness-eval-sandbox-');
  const workerPidFile = join(dir, 'worker.pid');
  const child = playwright(['test', '-c', 'tests/fixtures/sandbox/playwright.config.ts'], { ...env, ESCAPE_MARKER: tag, WORKER_PID_FILE: workerPidFile });
  try {
    await expect.poll(() => withMarker(tag).length, { timeout: 60_000 }).toBeGreaterThan(0);
    process.kill(Number(readFileSync(workerPidFile, 'utf8')), 'SIGKILL');
    await expect.poll(() => withMarker(tag), { timeout: 10_000 }).toEqual([]);
  } finally {
    await child;
  }
});

test.describe('without a sandbox', () => {
  /** Each tool the sandbox needs, pointed at a missing path, and what the run then says. */
  const missing = [
    { variable: 'HARNESS_BWRAP', why: 'no usable bubblewrap (/nonexistent/bwrap: ENOENT)' },
    { variable: 'HARNESS_SOCAT', why: 'no usable socat (/nonexistent/socat: ENOENT)' },
  ];
  const without = async (variable: string, body: () => Promise<void>) => {
    const before = process.env[variable];
    process.env[variable] = `/nonexistent/${variable.slice('HARNESS_'.length).toLowerCase()}`;
    try {
      await body();
    } finally {
      if (before === undefined) delete process.env[variable];
      else process.env[variable] = before;
    }
  };

  for (const { variable, why } of missing) {
    test(`sandbox: required with ${variable} missing fails in one line before the run starts: no run is recorded`, async ({ context }) => {
      await without(variable, async () => {
        let started = false;
        const running = evaluate({ context, site: recordedHn(), agent: escape('snoop.py', { sandbox: 'required' }), model: 'scripted:diligent', task: upvoteFirstPost, onStart: async () => void (started = true) });
        expect(await running.then(() => undefined, (error: Error) => error.message)).toBe(`commandAgent() sandbox 'required': ${why}`);
        expect(started).toBe(false);
      });
    });

    test(`auto with ${variable} missing runs, and says it was not contained`, async ({ context }, testInfo) => {
      await without(variable, async () => {
        const { result } = await runAgent(context, testInfo, escape('login.py', { sandbox: 'auto' }));
        expect(result).toMatchObject({ contained: false, containment: `not contained: ${why}` });
        expect(result.escapes).toBeUndefined();
      });
    });
  }
});

harnessTest.describe('sandbox: none, through the fixture', () => {
  harnessTest.use({ agent: escape('login.py', { sandbox: 'none' }) });

  harnessTest('the run and its cell say contained: false', async ({ harness }, testInfo) => {
    const run = await harness.run(upvoteFirstPost);
    expect(run).toMatchObject({ contained: false, containment: "not contained: commandAgent's sandbox is 'none'" });
    const attached = testInfo.attachments.find((attachment) => attachment.name === HARNESS_RUN_ATTACHMENT)!;
    const reported = runRecordSchema.parse(JSON.parse(attached.body!.toString()));
    expect(reported.condition.agent).toMatchObject({ sandbox: 'none' });
    // The start attachment says it too: a run whose worker dies is still known uncontained.
    const start = testInfo.attachments.find((attachment) => attachment.name === HARNESS_RUN_START_ATTACHMENT)!;
    expect(JSON.parse(start.body!.toString())).toMatchObject({ contained: false });

    // The report says it beside the rate, and lists the cell; a run that left processes in its sandbox is an escape attempt.
    const escaped = { ...reported, contained: true, test: { ...reported.test, id: 'escaped' }, condition: { ...reported.condition, agent: { sandbox: 'bwrap' } }, escapes: { processesLeft: 2 } };
    // A run that left nothing but hit a limit and sent a decoy key is an escape attempt too, each named.
    const attempts = [{ kind: 'limit', detail: 'processes (256)' }, { kind: 'canary', detail: 'the decoy API key reached the gateway (authorization header)' }] as const;
    const limited = { ...escaped, test: { ...reported.test, id: 'limited' }, condition: { ...reported.condition, agent: { sandbox: 'bwrap', limits: 'small' } }, escapes: { processesLeft: 0, attempts: [...attempts] } };
    const summary = summarize([reported, escaped, limited], { complete: true });
    expect(summary.cells.map(({ contained, escapes }) => ({ contained, escapes }))).toEqual(
      expect.arrayContaining([
        { contained: false, escapes: undefined },
        { contained: true, escapes: { runs: 1, processesLeft: 2 } },
        { contained: true, escapes: { runs: 1, processesLeft: 0, attempts: attempts.map((attempt) => ({ ...attempt, runs: 1 })) } },
      ]),
    );
    expect(renderMarkdown(summary)).toMatch(/: 1 run: limit: processes \(256\), in 1 run; canary: the decoy API key reached the gateway \(authorization header\), in 1 run/);
    const markdown = renderMarkdown(summary);
    expect(markdown).toMatch(/\| \d+% \(\d+–\d+%\) · not contained \|/);
    expect(markdown).toMatch(/\| \d+% \(\d+–\d+%\) · 1 escape attempt \|/);
    expect(markdown).toContain('- not contained: upvote-first-post · login.py');
    expect(markdown).toMatch(/- escape attempts: upvote-first-post · login\.py#\w+ · .*: 1 run: left 2 processes running/);
    const html = renderHtml(summary, [reported, escaped]);
    expect(html).toContain('<small class="contain">⚠ not contained</small>');
    expect(html).toContain('<small class="contain">⚠ 1 escape attempt</small>');
  });
});
