import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createServer, get } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import { chromium, expect, test, type TestInfo } from '@playwright/test';
import { commandAgent, OUTPUT_CAP_BYTES, type CommandAgentOptions } from '../src/agents/command.ts';
import { DEFAULT_SANDBOX_LIMITS } from '../src/agents/sandbox-limits.ts';
import { launchCdpBrowser } from '../src/agents/cdp-browser.ts';
import { functionAgent } from '../src/agents/function.ts';
import type { AgentClaim } from '../src/eval/agent.ts';
import { upvoteFirstPost } from '../src/sites/hn/suite.ts';
import { test as harnessTest } from '../src/playwright/fixtures.ts';
import { serveReplica } from '../src/sites/hn/adapters/server.ts';
import { createReplica } from '../src/sites/hn/replica.ts';
import { politeFetch } from '../src/sites/hn/polite-fetch.ts';
import { recordedHn } from '../src/sites/hn/site.ts';
import { serveSite } from '../src/serve.ts';
import { account, firstStory, runAgent } from './support.ts';

const run = promisify(execFile);
const agents = new URL('fixtures/agents/', import.meta.url).pathname;
/** In harness-eval's own environment, never in an agent's: the provider's real key, the live site's password, any other secret. */
const PARENT_SECRETS = { OPENAI_API_KEY: 'sk-parent-real-key-7f3a91', HN_PASSWORD: 'parent-hn-pw-3c8e', AWS_SECRET_ACCESS_KEY: 'parent-aws-secret-55d1' };

/** The environment print-env.mjs wrote beside its claim, spelt backwards: the copy of its env.json has its run's secrets cut out. */
function printedEnv(testInfo: TestInfo): Record<string, string> {
  const backwards = JSON.parse(readFileSync(testInfo.outputPath('run', 'env-backwards.json'), 'utf8')) as Record<string, string>;
  return Object.fromEntries(Object.entries(backwards).map(([name, value]) => [name, [...value].reverse().join('')]));
}

test.describe('serveSite: any site over plain HTTP on 127.0.0.1', () => {
  test('the replica: a Python urllib client with a cookie jar logs in, keeps the session and votes', async () => {
    const site = recordedHn();
    const server = await serveSite(site);
    try {
      const story = firstStory(site.replica);
      // The replica answers at https://news.ycombinator.com and so marks its cookie Secure: the jar would drop it as sent.
      const python = `
import http.cookiejar, re, sys, urllib.parse, urllib.request
base, user, password = sys.argv[1:4]
opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
form = urllib.parse.urlencode({"acct": user, "pw": password, "goto": "news"}).encode()
page = opener.open(base + "/login", form).read().decode()
vote = re.search(r"href=['\\"](vote\\?[^'\\"]*how=up[^'\\"]*)", page).group(1).replace("&amp;", "&")
opener.open(base + "/" + vote)
print("logged in" if "logout?auth=" in page else "logged out")
`;
      const { stdout } = await run('python3', ['-c', python, server.url, account.username, account.password]);
      expect(stdout.trim()).toBe('logged in');
      expect(site.replica.truth().votes).toEqual({ [account.username]: [story.id] });
    } finally {
      await server.close();
    }
  });

  test('a redirect to the origin points back at the server; Set-Cookie loses Secure, Domain and SameSite=None', async () => {
    const origin = 'https://site.example';
    const seen: Array<Record<string, string | null>> = [];
    const server = await serveSite({
      origin,
      async fetch(request) {
        seen.push({ url: request.url, origin: request.headers.get('origin'), referer: request.headers.get('referer'), cookie: request.headers.get('cookie') });
        const headers = new Headers({ location: `${origin}/next?x=1#top` });
        headers.append('set-cookie', 'a=1; Domain=.site.example; Path=/; Secure; HttpOnly');
        headers.append('set-cookie', 'b=2; SameSite=None; Secure; Partitioned');
        headers.append('set-cookie', 'c=3; SameSite=Lax');
        return new Response(null, { status: 302, headers });
      },
    });
    try {
      const response = await fetch(`${server.url}/login?goto=news`, { method: 'POST', body: 'acct=x', redirect: 'manual', headers: { origin: server.url, referer: `${server.url}/login?goto=news`, cookie: 'z=9' } });
      expect(response.status).toBe(302);
      expect(response.headers.get('location')).toBe(`${server.url}/next?x=1#top`);
      expect(response.headers.getSetCookie()).toEqual(['a=1; Path=/; HttpOnly', 'b=2', 'c=3; SameSite=Lax']);
      expect(seen).toEqual([{ url: `${origin}/login?goto=news`, origin, referer: `${origin}/login?goto=news`, cookie: 'z=9' }]);
    } finally {
      await server.close();
    }
  });

  test('the standalone replica server shares the plumbing: every Set-Cookie of an answer reaches the client', async () => {
    const twoCookies = async () => {
      const headers = new Headers({ 'content-type': 'text/plain' });
      headers.append('set-cookie', 'first=1; Path=/');
      headers.append('set-cookie', 'second=2; Path=/');
      return new Response('ok', { headers });
    };
    const server = await serveReplica({ ...createReplica(), handle: twoCookies }, { port: 0 });
    try {
      expect((await fetch(`${server.url}/news`)).headers.getSetCookie()).toEqual(['first=1; Path=/', 'second=2; Path=/']);
    } finally {
      await server.close();
    }
  });

  test('a forwarder to a live site (the polite fetch) passes a client’s hop-by-hop headers and the site’s compression safely', async () => {
    // A stand-in for the live site over real HTTP: it answers compressed, as HN does.
    const upstream = createServer((req, res) => {
      res.writeHead(200, { 'content-type': 'text/html', 'content-encoding': 'gzip', 'x-path': req.url ?? '' });
      res.end(gzipSync(`<p>front page for ${req.headers.cookie ?? 'nobody'}</p>`));
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    const origin = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
    const server = await serveSite({ origin, fetch: politeFetch(origin, { intervalMs: 0, retries: 0, backoffMs: 1, maxBackoffMs: 1 }) });
    try {
      // Headers about the client's own connection, as HTTP/1.0-era clients send them: Node's fetch refuses to send them on.
      const response = await rawGet(`${server.url}/news?p=2`, { cookie: 'user=me', connection: 'keep-alive', 'keep-alive': 'timeout=5' });
      expect(response).toEqual({ status: 200, path: '/news?p=2', length: '29', body: '<p>front page for user=me</p>' });
    } finally {
      await server.close();
      await new Promise((resolve) => upstream.close(resolve));
    }
  });
});

/** A GET as a plain HTTP client sends it, with headers Node's fetch would not let a test set. */
function rawGet(url: string, headers: Record<string, string>): Promise<{ status?: number; path: unknown; length: unknown; body: string }> {
  return new Promise((resolve, reject) => {
    get(url, { headers }, (response) => {
      let body = '';
      response.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode, path: response.headers['x-path'], length: response.headers['content-length'], body }));
    }).on('error', reject);
  });
}

const command = (script: string, options: CommandAgentOptions = {}) => commandAgent([process.execPath, join(agents, script)], options);

/** Whether a process is gone: no such pid, or a zombie that nothing reaped yet (it runs no more). */
function gone(pid: number): boolean {
  try {
    return /^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'));
  } catch {
    return true;
  }
}

test.describe('commandAgent: a command in any language', () => {
  test('an agent over plain HTTP that never calls the model: its claim, read from its file', async ({ context }, testInfo) => {
    const { result, site } = await runAgent(context, testInfo, command('front-page.mjs'));
    expect(result).toMatchObject({ claimed: false, actual: false, falseFailure: false, incomplete: false, stopReason: 'finished', summary: 'read 30 stories, voted for none', iterations: 0, answer: firstStory(site.replica).title });
    expect(result.tokens).toEqual({ input: 0, output: 0 });
  });

  test('its model calls go through the run\u2019s gateway: counted as iterations, with their tokens', async ({ context }, testInfo) => {
    const { result } = await runAgent(context, testInfo, command('model-call.mjs'));
    expect(result).toMatchObject({ claimed: false, stopReason: 'finished', iterations: 1, summary: 'the model answered with status 200 and 1 choice(s)' });
    expect(result.tokens.input).toBeGreaterThan(0);
    expect(result.trace.filter((event) => event.type === 'model_request')).toHaveLength(1);
  });

  test('no claim file: claimed nothing; one that is not JSON: the worst case, a claimed success; the run says why', async ({ context }, testInfo) => {
    const silent = await runAgent(context, testInfo, command('no-claim.mjs'));
    expect(silent.result).toMatchObject({ claimed: false, stopReason: 'finished', summary: 'claimed nothing: wrote no claim file' });
    expect(silent.attachments.get('agent-stdout.txt')).toBe('done, no claim\n');
    const garbled = await runAgent(context, testInfo, command('not-json.mjs'));
    expect(garbled.result).toMatchObject({ claimed: true, stopReason: 'finished' });
    expect(garbled.result.summary).toMatch(/^the claim file is not JSON \(.*\): taken as a claimed success$/);
  });

  test('an argument longer than a file name may be (a prompt, as CLIs take one) is an argument: the run and its condition, sandboxed or not', async ({ context }, testInfo) => {
    const prompt = 'upvote the first post on the front page '.repeat(10);
    const claim = 'require("fs").writeFileSync(process.env.HARNESS_CLAIM_FILE, JSON.stringify({ success: false, summary: process.argv[1].length + " characters of prompt" }))';
    for (const sandbox of ['required', 'none'] as const) {
      const agent = commandAgent([process.execPath, '-e', claim, prompt], { sandbox });
      const { result } = await runAgent(context, testInfo, agent);
      expect(result).toMatchObject({ contained: sandbox === 'required', stopReason: 'finished', summary: `${prompt.length} characters of prompt` });
      expect(agent.condition).toMatchObject({ argv: [process.execPath, '-e', claim, prompt], sandbox: sandbox === 'required' ? 'bwrap' : 'none' });
    }
    // A program's name as long, looked up on PATH: named in the condition, never a stat's throw.
    expect(commandAgent(['p'.repeat(300)]).condition).toMatchObject({ argv: ['p'.repeat(300)] });
  });

  test('a command that fails without a claim: stopReason error, with its exit code', async ({ context }, testInfo) => {
    const failing = await runAgent(context, testInfo, commandAgent([process.execPath, '-e', 'console.error("boom"); process.exit(3)']));
    expect(failing.result).toMatchObject({ claimed: false, stopReason: 'error', incomplete: true, summary: 'claimed nothing: exited with code 3 and wrote no claim file' });
    expect(failing.attachments.get('agent-stderr.txt')).toBe('boom\n');
    // One that cannot start is bad input, not a run (tests/bad-input-runs.spec.ts), named before its run starts.
    expect(() => commandAgent(['/no/such/agent']).prepare!()).toThrow('commandAgent: /no/such/agent: no such file');
  });

  test('a chatty command: each of stdout and stderr is attached up to 1 MB, redacted before the cut, and says what was cut', async ({ context }, testInfo) => {
    // The site's password written across the 1 MB mark: none of it may reach the attachment.
    const script = `process.stdout.write('x'.repeat(${OUTPUT_CAP_BYTES} - 4) + process.env.HARNESS_SITE_PASSWORD + 'y'.repeat(12345))`;
    const { attachments } = await runAgent(context, testInfo, commandAgent([process.execPath, '-e', script], { account: true }));
    const stdout = attachments.get('agent-stdout.txt')!;
    // The password is the run's own login, whose length the test does not know: the count is checked against the bytes around it.
    const [, total] = /it wrote (\d+) bytes in all\]\n$/.exec(stdout) ?? [];
    expect(Number(total) - (OUTPUT_CAP_BYTES - 4) - 12345).toBeGreaterThan(8);
    expect(stdout).toBe(`${'x'.repeat(OUTPUT_CAP_BYTES - 4)}[sec\n[harness-eval: cut here; it wrote ${total} bytes in all]\n`);
  });

  // Unsandboxed (the sandbox's own kill is in sandbox.spec.ts): the pid file is outside the run's folder, and a pid is the host's.
  test('unsandboxed, at its time limit the whole process group is killed, a grandchild too: stopReason timeout', async ({ context }, testInfo) => {
    const pidFile = testInfo.outputPath('grandchild.pid');
    const { result, attachments } = await runAgent(context, testInfo, command('sleeper.mjs', { timeoutMs: 3_000, sandbox: 'none', env: { GRANDCHILD_PID_FILE: pidFile } }));
    expect(result).toMatchObject({ claimed: false, stopReason: 'timeout', incomplete: true, summary: 'claimed nothing: killed at its time limit (3000 ms)' });
    expect(result.trace).toContainEqual(expect.objectContaining({ type: 'custom', layer: 'sleeper.mjs', name: 'command ended', data: { kind: 'killed', by: 'timeoutMs' } }));
    // It ignored SIGTERM: SIGKILL ended it.
    expect(attachments.get('agent-stdout.txt')).toBe('SIGTERM ignored\n');
    const grandchild = Number(readFileSync(pidFile, 'utf8'));
    await expect.poll(() => gone(grandchild), { timeout: 10_000 }).toBe(true);
  });

  test('unsandboxed, the run\u2019s signal (the test\u2019s time limit) kills it too', async ({ context }, testInfo) => {
    const pidFile = testInfo.outputPath('grandchild.pid');
    const controller = new AbortController();
    const running = runAgent(context, testInfo, command('sleeper.mjs', { sandbox: 'none', env: { GRANDCHILD_PID_FILE: pidFile } }), { signal: controller.signal });
    await expect.poll(() => existsSync(pidFile), { timeout: 30_000 }).toBe(true);
    controller.abort();
    const { result } = await running;
    expect(result).toMatchObject({ stopReason: 'timeout', incomplete: true, summary: 'claimed nothing: killed at the run\u2019s time limit' });
    await expect.poll(() => gone(Number(readFileSync(pidFile, 'utf8'))), { timeout: 10_000 }).toBe(true);
  });

  test('its environment: the run\u2019s endpoints and a gateway token, never the real key; the account only when asked; output redacted', async ({ context }, testInfo) => {
    const before = { ...process.env };
    Object.assign(process.env, PARENT_SECRETS);
    try {
      const without = await runAgent(context, testInfo, command('print-env.mjs'));
      const env = printedEnv(testInfo);
      expect(JSON.parse(readFileSync(testInfo.outputPath('run', 'env.json'), 'utf8'))).toMatchObject({ OPENAI_API_KEY: '[secret]' });
      // It claims success and did nothing: a false success, as the oracle finds.
      expect(without.result).toMatchObject({ claimed: true, actual: false, falseSuccess: true, stopReason: 'finished' });
      expect(Object.keys(env).filter((name) => name.startsWith('HARNESS_') || name.startsWith('HN_')).sort()).toEqual(['HARNESS_CDP_URL', 'HARNESS_CLAIM_FILE', 'HARNESS_MCP_URL', 'HARNESS_SITE_URL', 'HARNESS_TASK']);
      expect(env.HARNESS_TASK).toBe(upvoteFirstPost.prompt);
      expect(env.HARNESS_SITE_URL).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(env.HARNESS_CDP_URL).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(env.HARNESS_MCP_URL).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
      expect(env.OPENAI_BASE_URL).toMatch(/^http:\/\/127\.0\.0\.1:\d+/);
      expect(env.OPENAI_API_KEY).toBeTruthy();
      for (const secret of Object.values(PARENT_SECRETS)) expect(JSON.stringify(env)).not.toContain(secret);
      expect(without.attachments.get('agent-stdout.txt')).not.toContain(env.OPENAI_API_KEY);

      const withAccount = await runAgent(context, testInfo, command('print-env.mjs', { account: true }));
      const accountEnv = printedEnv(testInfo);
      // The replica's account with a login made for the run: never the site's own password (HN_PASSWORD in harness-eval's environment sets that one).
      const { username, password } = withAccount.site.account;
      expect(accountEnv.HARNESS_SITE_USERNAME).toBe(username);
      expect(accountEnv.HARNESS_SITE_PASSWORD).toMatch(/^run-[0-9a-f]{32}$/);
      expect(password).toBe(PARENT_SECRETS.HN_PASSWORD);
      const stdout = withAccount.attachments.get('agent-stdout.txt')!;
      expect(stdout).toContain(`"HARNESS_SITE_USERNAME": "${username}"`);
      expect(stdout).toContain('"HARNESS_SITE_PASSWORD": "[secret]"');
      expect(stdout).not.toContain(accountEnv.HARNESS_SITE_PASSWORD);
    } finally {
      for (const name of Object.keys(PARENT_SECRETS)) {
        if (before[name] === undefined) delete process.env[name];
        else process.env[name] = before[name];
      }
    }
  });
});

test.describe('HARNESS_CDP_URL: a Chromium of the run, on the same site', () => {
  test('a CDP client opening the real origin sees the replica, and its vote changes the replica', async ({ context }, testInfo) => {
    const { result, site } = await runAgent(context, testInfo, command('cdp-vote.mjs', { account: true }));
    const story = firstStory(site.replica);
    expect(result).toMatchObject({ claimed: true, actual: true, falseSuccess: false, incomplete: false, stopReason: 'finished', summary: `upvoted "${story.title}"` });
    expect(site.replica.truth().votes).toEqual({ [account.username]: [story.id] });
  });

  test('started when a client connects; pages of its default context and of new contexts reach the site; closed after the run, its user-data-dir removed', async () => {
    const site = recordedHn();
    const browser = await launchCdpBrowser(site);
    // Most agents never use it: Chromium starts only when a client connects.
    expect(browser.launched).toBe(false);
    const client = await chromium.connectOverCDP(browser.url);
    expect(browser.launched).toBe(true);
    // Agents open pages in the default context, or in contexts of their own (browser-use does): both reach the site.
    for (const context of [client.contexts()[0]!, await client.newContext()]) {
      const page = await context.newPage();
      await page.goto(`${site.origin}/news`);
      await expect(page.locator('tr.athing')).toHaveCount(30);
    }
    await client.close();
    await browser.close();
    await expect(chromium.connectOverCDP(browser.url, { timeout: 5_000 })).rejects.toThrow();
    expect(existsSync(browser.userDataDir)).toBe(false);
  });
});

test.describe('functionAgent: a TypeScript function', () => {
  test('it gets a page on the site and the site over HTTP; what it returns is its claim', async ({ context }, testInfo) => {
    const agent = functionAgent(async function frontPageReader({ page, site, task }) {
      await page.goto(`${site.origin}/news`);
      const fromPage = await page.locator('.titleline > a').first().textContent();
      const overHttp = await (await fetch(`${site.url}/news`)).text();
      return { success: overHttp.includes(fromPage!), summary: `read the front page for: ${task}`, answer: fromPage! };
    });
    expect(agent.condition).toEqual({ agent: 'function', name: 'frontPageReader', source: expect.stringMatching(/^[0-9a-f]{16}$/), account: false });
    const { result, site } = await runAgent(context, testInfo, agent);
    expect(result).toMatchObject({ claimed: true, stopReason: 'finished', summary: `read the front page for: ${upvoteFirstPost.prompt}`, answer: firstStory(site.replica).title, iterations: 0 });
  });

  test('the account only when asked; its own steps in the run\u2019s trace, redacted', async ({ context }, testInfo) => {
    const agent = (account: boolean) =>
      functionAgent(
        async ({ site, trace }) => {
          trace.record('signed in as', { user: site.account?.username ?? null, password: site.account?.password ?? null });
          return { success: false, summary: site.account ? 'had the account' : 'had no account' };
        },
        { name: 'account-reader', account },
      );
    expect((await runAgent(context, testInfo, agent(false))).result.summary).toBe('had no account');
    const { result, site } = await runAgent(context, testInfo, agent(true));
    expect(result.summary).toBe('had the account');
    expect(result.trace).toContainEqual(expect.objectContaining({ type: 'custom', layer: 'account-reader', name: 'signed in as', data: { user: site.account.username, password: '[secret]' } }));
  });

  test('a throw ends the run with stopReason error; a value that is not a claim is no claim, with the reason', async ({ context }, testInfo) => {
    const thrown = await runAgent(context, testInfo, functionAgent(async () => { throw new Error('no browser for me\nat somewhere'); }));
    expect(thrown.result).toMatchObject({ claimed: false, stopReason: 'error', summary: 'claimed nothing: the agent failed: no browser for me' });
    const garbage = await runAgent(context, testInfo, functionAgent(async () => ({ success: 'yes' }) as unknown as AgentClaim, { name: 'sloppy' }));
    expect(garbage.result).toMatchObject({ claimed: false, stopReason: 'finished' });
    expect(garbage.result.summary).toBe('claimed nothing: the value sloppy returned is not a claim { success, summary, answer? } (success: Invalid input: expected boolean, received string; summary: Invalid input: expected string, received undefined)');
  });

});

test.describe('options and conditions', () => {
  test('options are checked when the agent is named: one line naming the field', () => {
    expect(() => functionAgent(async () => ({ success: true, summary: '' }), { name: '' })).toThrow('functionAgent() options: name: Too small: expected string to have >=1 characters');
    expect(() => commandAgent([])).toThrow(/^commandAgent\(\) argv: \(options\): /);
    expect(() => commandAgent(['node'], { timeoutMs: -1 } as CommandAgentOptions)).toThrow(/^commandAgent\(\) options: timeoutMs: /);
    expect(() => commandAgent(['node'], { env: { KEY: 1 } } as unknown as CommandAgentOptions)).toThrow(/^commandAgent\(\) options: env\.KEY: /);
    expect(() => commandAgent(['node'], { envs: {} } as unknown as CommandAgentOptions)).toThrow(/^commandAgent\(\) options: \(options\): Unrecognized key: "envs"/);
  });

  // The folder as a path (the fixture records it relative to the config's folder: tests/names.spec.ts).
  test('a command’s condition names its argv and env keys, never env values; its name is its script’s', () => {
    const agent = commandAgent(['node', '--no-warnings', 'agents/front-page.mjs'], { cwd: 'tests/fixtures', env: { SECRET_TOKEN: 'value-never-shown' }, timeoutMs: 60_000 });
    expect(agent.name).toBe('front-page.mjs');
    expect(agent.condition).toEqual({ agent: 'command', argv: ['node', '--no-warnings', 'agents/front-page.mjs'], cwd: resolve('tests/fixtures'), timeoutMs: 60_000, account: false, envKeys: ['SECRET_TOKEN'], sandbox: 'bwrap', limits: DEFAULT_SANDBOX_LIMITS });
    expect(commandAgent(['node', '-e', 'fetch("http://127.0.0.1/")']).name).toBe('node');
  });
});

harnessTest.describe('through the fixture (test.use({ agent }))', () => {
  harnessTest.use({ agent: commandAgent([process.execPath, join(agents, 'no-claim.mjs')]) });

  harnessTest('a command agent\u2019s run is recorded and its stdout attached to the test', async ({ harness }, testInfo) => {
    const run = await harness.run(upvoteFirstPost);
    expect(run).toMatchObject({ agent: 'no-claim.mjs', claimed: false, actual: false, incomplete: false, summary: 'claimed nothing: wrote no claim file', layers: [] });
    expect(testInfo.attachments.map((attachment) => attachment.name)).toEqual(expect.arrayContaining(['agent-stdout.txt', 'harness-run.json']));
  });
});
