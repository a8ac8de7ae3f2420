import { execFile, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from '@playwright/test';
import { ApprovalStore } from '../src/harness/approvals.ts';
import { listHistory, saveToHistory } from '../src/report/history.ts';
import { summarize } from '../src/report/summarize.ts';
import { createReplica, serveReplica } from '../src/sites/hn/index.ts';
import { hnSuite } from '../src/sites/hn/suite.ts';
import { client, expect, firstStory, attachedRunRecord } from './support.ts';

const cli = ['bin/harness-eval.js'];
// Each CLI call starts Node and compiles src/ through tsx: seconds apiece on a loaded machine, and a test makes up to five.
test.describe.configure({ timeout: 120_000 });
const execFileAsync = promisify(execFile);

/** Starts `harness-eval hn serve` on a free port and answers its base URL once it listens. */
async function startServe(args: string[]): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [...cli, 'hn', 'serve', '--port', '0', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (chunk) => {
      out += chunk;
      const match = /replica at (http:\/\/[\d.:]+)/.exec(out);
      if (match) resolve(match[1]!);
    });
    child.stderr!.on('data', (chunk) => reject(new Error(String(chunk))));
    child.on('exit', (code) => reject(new Error(`hn serve exited with ${code}`)));
  });
  return { url, child };
}

test('hn serve: the replica with fault flags, and ground truth at /__harness/state', async () => {
  const { url, child } = await startServe(['--rate-limit-after', '2', '--markup-year', '2020']);
  try {
    const page = await (await fetch(`${url}/news`)).text();
    expect(page).toContain("class='athing'");
    expect(page).toContain('class="storylink"');
    expect((await fetch(`${url}/news`)).status).toBe(200);
    expect(await (await fetch(`${url}/news`)).text()).toContain('not able to serve your requests this quickly');
    expect(await (await fetch(`${url}/__harness/state`)).json()).toMatchObject({ votes: {}, requests: 3 });
    // The reset starts the rate limit's count again, as for a fresh replica.
    expect((await fetch(`${url}/__harness/reset`, { method: 'POST' })).status).toBe(204);
    expect((await fetch(`${url}/news`)).status).toBe(200);
  } finally {
    child.kill('SIGTERM');
  }
});

test('hn serve: bad flags end with one line and exit code 2', () => {
  for (const [args, message] of [
    [['--error-rate', 'lots'], '--error-rate: expected a number, got "lots"'],
    [['--error-rate', '3'], '--error-rate: Too big'],
    [['--markup-year', '2019'], '--markup-year'],
    [['--capture', 'missing.html'], 'capture not found: missing.html'],
    [['--frobnicate'], "Unknown option '--frobnicate'"],
  ] as const) {
    const result = spawnSync(process.execPath, [...cli, 'hn', 'serve', ...args], { encoding: 'utf8' });
    expect(result.status, args.join(' ')).toBe(2);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toContain(message);
  }
});

test.describe('judge: the oracle on two /__harness/state bodies', () => {
  const judge = (...args: string[]) => spawnSync(process.execPath, [...cli, 'judge', ...args], { encoding: 'utf8' });
  // Not spawnSync while the server runs in this process: a blocked event loop lets its idle keep-alive sockets close under the client.
  const judgeAsync = async (...args: string[]) => execFileAsync(process.execPath, [...cli, 'judge', ...args], { encoding: 'utf8' });

  test('prints the verdict as JSON: the task, actual, each postcondition\'s verdict, the side effects', async () => {
    const replica = createReplica();
    const server = await serveReplica(replica, { port: 0 });
    const dir = mkdtempSync(test.info().outputPath('judge-'));
    const saveState = async (name: string) => {
      writeFileSync(join(dir, name), await (await fetch(`${server.url}/__harness/state`)).text());
      return join(dir, name);
    };
    try {
      const start = await saveState('start.json');
      const first = firstStory(replica);
      // A runner outside Playwright: logs in from the vote's login wall over plain HTTP, which completes the vote.
      await fetch(`${server.url}/login`, { method: 'POST', body: new URLSearchParams({ acct: 'harness', pw: 'battery-staple-42', goto: `vote?id=${first.id}&how=up&goto=news` }), redirect: 'manual' });
      const end = await saveState('end.json');

      // execFile rejects on a non-zero exit: the judgement's own exit code is 0.
      const upvoted = await judgeAsync('--task', 'upvote-first-post', start, end);
      expect(upvoted.stderr).toBe('');
      expect(JSON.parse(upvoted.stdout)).toEqual({
        task: 'upvote-first-post',
        actual: true,
        verdicts: [{ description: 'the story ranked 1 at the start is upvoted', holds: true, detail: `story ${first.id} (rank 1) is upvoted by harness` }],
        sideEffects: [],
      });
      // The same vote judged for another task: not done, and the vote is a side effect.
      const other = JSON.parse((await judgeAsync('--task', 'upvote-all-matching-for', start, end)).stdout);
      expect(other.actual).toBe(false);
      expect(other.sideEffects).toEqual([{ kind: 'vote', id: first.id, detail: `harness upvoted ${first.id} (${JSON.stringify(first.title)})` }]);
      // Judged for another account, the vote is not the run's: nothing done.
      expect(JSON.parse((await judgeAsync('--task', 'upvote-first-post', '--user', 'someone', start, end)).stdout).actual).toBe(false);
      // An information task is judged by --answer against the start's ranking.
      const third = replica.snapshot().ranking.find((story) => story.rank === 3)!.title;
      expect(JSON.parse((await judgeAsync('--task', 'title-of-rank-3', '--answer', third, start, start)).stdout)).toMatchObject({ actual: true, sideEffects: [] });
      expect(JSON.parse((await judgeAsync('--task', 'title-of-rank-3', '--answer', String(first.title), start, start)).stdout).actual).toBe(false);
      // The reset puts the site back: judged again, nothing was done.
      expect((await fetch(`${server.url}/__harness/reset`, { method: 'POST' })).status).toBe(204);
      expect(JSON.parse((await judgeAsync('--task', 'upvote-first-post', start, await saveState('reset.json'))).stdout).actual).toBe(false);
    } finally {
      await server.close();
    }
  });

  test('bad input is one line on stderr and exit code 2: an unknown task lists the known ones', () => {
    const dir = mkdtempSync(test.info().outputPath('judge-bad-'));
    const state = join(dir, 'state.json');
    writeFileSync(state, JSON.stringify({ votes: {}, ranking: [], requests: 0 }));
    const wrong = join(dir, 'wrong.json');
    writeFileSync(wrong, JSON.stringify({ votes: { harness: 'all' }, ranking: [] }));
    for (const [args, message] of [
      [['--task', 'upvote-everything', state, state], `harness-eval: unknown task "upvote-everything": known tasks are ${hnSuite.map((task) => task.name).join(', ')}`],
      [['--task', 'upvote-first-post', state], 'harness-eval: judge: usage: harness-eval judge --task NAME START.json END.json [--user NAME] [--answer TEXT]'],
      [['--task', 'upvote-first-post', state, join(dir, 'missing.json')], `harness-eval: judge: ${join(dir, 'missing.json')}: cannot read this site state (ENOENT)`],
      [['--task', 'upvote-first-post', state, wrong], `harness-eval: judge: ${wrong}: votes.harness: Invalid input: expected array, received string`],
    ] as const) {
      const result = judge(...args);
      expect(result.status, args.join(' ')).toBe(2);
      expect(result.stderr.trimEnd()).toBe(message);
      expect(result.stdout).toBe('');
    }
  });
});

test('record hn: saves the pages from a live-like site, without tokens, user names or cookies', async () => {
  const replica = createReplica();
  const server = await serveReplica(replica, { port: 0 });
  const out = mkdtempSync(test.info().outputPath('hn-record-'));
  try {
    // Not spawnSync: the replica's server runs in this process and must keep answering.
    const result = await execFileAsync(
      process.execPath,
      [...cli, 'record', 'hn', '--out', out, '--origin', server.url, '--login', '--delay-ms', '0'],
      { encoding: 'utf8', env: { ...process.env, HN_USERNAME: 'harness', HN_PASSWORD: 'battery-staple-42' } },
    );
    expect(result.stderr).toBe('');
    // The recording really was logged in: the replica saw requests by the user.
    expect(replica.state.requests.some((request) => request.user === 'harness')).toBe(true);
    const files = readdirSync(out).sort();
    expect(files).toEqual(expect.arrayContaining(['login.html', 'news-p2.html', 'news.html']));
    expect(files.some((name) => /^item-\d+\.html$/.test(name))).toBe(true);
    for (const name of files) {
      const html = readFileSync(join(out, name), 'utf8');
      expect(html, name).not.toMatch(/auth=|[0-9a-f]{40}/);
      expect(html, name).not.toMatch(/id='me'|user\?id=harness|battery-staple-42/);
    }
    // What was recorded is a capture the replica serves again.
    const again = client(createReplica({ capture: out }));
    expect((await again.page('/news'))('tr.athing').length).toBe(30);
    expect((await again.page('/news?p=2'))('span.rank').first().text()).toBe('31.');
  } finally {
    await server.close();
  }
});

test.describe('report: the history of summaries', () => {
  const summaryAt = (generatedAt: string, successes: number) =>
    summarize(
      Array.from({ length: 10 }, (_, index) => attachedRunRecord({ claimed: true, actual: index < successes, test: { id: `t${index}` } })),
      { complete: true, now: new Date(generatedAt) },
    );

  test('the reporter keeps each run\'s summary by its time, the newest N; the CLI lists them and compares two by number or name', () => {
    const dir = mkdtempSync(test.info().outputPath('history-'));
    const saved = ['2026-11-20T10:00:00.000Z', '2026-11-21T10:00:00.000Z', '2026-11-22T23:50:00.000Z'].map((at, index) => saveToHistory(dir, summaryAt(at, index * 5), 2));
    expect(saved).toEqual(['2026-11-20T10-00-00Z.json', '2026-11-21T10-00-00Z.json', '2026-11-22T23-50-00Z.json']);
    // Bounded: the oldest went when the third came.
    expect(readdirSync(join(dir, 'history')).sort()).toEqual(['2026-11-21T10-00-00Z.json', '2026-11-22T23-50-00Z.json']);
    expect(saveToHistory(dir, summaryAt('2026-11-22T23:50:00.000Z', 10), 3)).toBe('2026-11-22T23-50-00Z-2.json');
    expect(listHistory(dir)).toEqual(['2026-11-22T23-50-00Z-2.json', '2026-11-22T23-50-00Z.json', '2026-11-21T10-00-00Z.json']);
    expect(saveToHistory(dir, summaryAt('2026-11-23T00:00:00.000Z', 10), 0)).toBeUndefined();

    const report = (...args: string[]) => spawnSync(process.execPath, [...cli, 'report', '--dir', dir, ...args], { encoding: 'utf8' });
    const listed = report();
    expect(listed.status).toBe(0);
    expect(listed.stdout.trimEnd().split('\n')).toEqual([
      '  1  2026-11-22T23-50-00Z-2.json  complete, 10 runs in 1 cell, 0 false successes',
      '  2  2026-11-22T23-50-00Z.json  complete, 10 runs in 1 cell, 0 false successes',
      '  3  2026-11-21T10-00-00Z.json  complete, 10 runs in 1 cell, 5 false successes',
    ]);
    const byNumber = report('3', '1');
    expect(byNumber.status).toBe(0);
    expect(byNumber.stdout).toContain(`${join(dir, 'history', '2026-11-21T10-00-00Z.json')} → ${join(dir, 'history', '2026-11-22T23-50-00Z-2.json')}`);
    expect(byNumber.stdout).toContain('success 50% (24–76%) → 100% (72–100%) [+50 pts (+12 to +76)]');
    expect(report('2026-11-22T23-50-00Z', '2026-11-22T23-50-00Z-2.json').stdout).toContain('1 cell compared, 0 flagged');
    const missing = report('9', '1');
    expect(missing.status).toBe(2);
    expect(missing.stderr.trim()).toBe(`harness-eval: report: no summary number 9 in ${join(dir, 'history')} (it holds 3)`);
    const empty = spawnSync(process.execPath, [...cli, 'report', '--dir', join(dir, 'nowhere')], { encoding: 'utf8' });
    expect(empty.stderr.trim()).toBe(`harness-eval: report: no summaries in ${join(dir, 'nowhere', 'history')} yet (the reporter keeps one per finished run)`);
  });

  test('two summaries compared by hand that are not like with like are labelled so', () => {
    const dir = mkdtempSync(test.info().outputPath('partial-'));
    const runs = Array.from({ length: 4 }, (_, index) => attachedRunRecord({ test: { id: `t${index}` } }));
    const write = (name: string, summary: object) => (writeFileSync(join(dir, name), JSON.stringify(summary)), join(dir, name));
    const shard = write('shard.json', summarize(runs, { complete: true, selection: ['shard 1/2'] }));
    const interrupted = write('interrupted.json', summarize(runs, { complete: false, planned: 5, stopped: 'interrupted' }));
    const compared = spawnSync(process.execPath, [...cli, 'report', '--baseline', shard, interrupted], { encoding: 'utf8' });
    expect(compared.status).toBe(0);
    expect(compared.stdout).toContain(`not like with like: ${shard}: it ran shard 1/2, this run the whole suite`);
    expect(compared.stdout).toContain(`not like with like: ${interrupted}: it is partial (interrupted; 1 of 5 planned runs not recorded)`);
  });
});

test('the CLI loads what a command uses when it runs: starting it loads no Playwright', () => {
  // Every CLI call is a new process: `approvals` or `report` paid a second of CPU to load Playwright for `record hn`.
  const probe = `await import('./src/cli/main.ts');
    const { createRequire } = await import('node:module');
    console.log(Object.keys(createRequire(import.meta.url).cache).filter((path) => /node_modules\\/(@?playwright)\\//.test(path)).join('\\n'));`;
  const loaded = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', probe], { encoding: 'utf8' });
  expect(loaded.status, loaded.stderr).toBe(0);
  expect(loaded.stdout.trim()).toBe('');
});

test('no command is a usage error (exit 2, usage on stderr); --help is not', async () => {
  const { main } = await import('../src/cli/main.ts');
  const printed: string[] = [];
  const [error, log] = [console.error, console.log];
  console.error = (line: string) => printed.push(`err ${line}`);
  console.log = (line: string) => printed.push(`out ${line}`);
  try {
    expect(await main([])).toBe(2);
    expect(await main(['--help'])).toBe(0);
  } finally {
    [console.error, console.log] = [error, log];
  }
  expect(printed[0]).toMatch(/^err harness-eval: no command given\nUsage:/);
  expect(printed[1]).toMatch(/^out Usage:/);
});

test('approvals: list, approve by an id prefix, deny; a decided, unknown or ambiguous id and bad usage are one line and exit 2', async () => {
  const dir = test.info().outputPath('store');
  const store = new ApprovalStore(dir);
  const ask = { kind: 'action', task: 'upvote the first post', runId: 'run-1', argsHash: 'h', scope: 'call', reason: 'the model wants to vote' } as const;
  const filed = (id: string, action: string, resource: string, expiresInMs = 60_000) => {
    const now = Date.now();
    store.file({ version: 1, id, ...ask, action, resource, requestedAt: new Date(now).toISOString(), expiresAt: new Date(now + expiresInMs).toISOString() });
  };
  filed('aa11-vote', 'vote', '46194762');
  filed('aa22-hide', 'hide', '46194762');
  filed('bb33-fave', 'fave', '46194762', -1);
  const approvals = (...args: string[]) => spawnSync(process.execPath, [...cli, 'approvals', ...args], { encoding: 'utf8' });

  const listed = approvals('list', '--dir', dir);
  expect(listed.status, listed.stderr).toBe(0);
  expect(listed.stdout).toMatch(/^aa11-vote {2}pending until \S+ {2}vote 46194762 \(call\) {2}task "upvote the first post": the model wants to vote$/m);
  expect(listed.stdout).toMatch(/^bb33-fave {2}expired /m);

  expect(approvals('approve', 'aa11', '--dir', dir, '--by', 'nightly on-call').status).toBe(0);
  expect(store.decisionOn('aa11-vote')).toMatchObject({ decision: 'approved', by: 'nightly on-call' });
  expect(store.decisionOn('aa11-vote')!.scope).toBeUndefined();
  expect(approvals('deny', 'aa22-hide', '--dir', dir).status).toBe(0);
  expect(store.decisionOn('aa22-hide')).toMatchObject({ decision: 'denied' });
  expect(approvals('list', '--dir', dir).stdout).toMatch(/^aa11-vote {2}approved \S+ by nightly on-call {2}vote/m);

  for (const [args, message] of [
    [['approve', 'aa11-vote', '--dir', dir], 'approvals: request aa11-vote is already approved'],
    [['deny', 'zz', '--dir', dir], `approvals: no request zz in ${dir} (harness-eval approvals list shows them)`],
    [['approve', 'aa', '--dir', dir], `approvals: aa starts 2 request ids in ${dir}; give more of it`],
    [['approve', 'bb33', '--dir', dir], 'approvals: request bb33-fave expired at'],
    [['approve', 'aa22', '--scope', 'forever', '--dir', dir], 'approvals: --scope: expected call, run, task, got "forever"'],
    [['deny', 'bb33', '--scope', 'run', '--dir', dir], 'approvals: --scope applies to an approval only'],
    [['approve', '--dir', dir], 'approvals: usage: harness-eval approvals list | approve ID | deny ID'],
    [['list', 'extra', '--dir', dir], 'approvals: usage:'],
    [['frobnicate'], 'approvals: usage:'],
    [['list', '--dri', dir], "Unknown option '--dri'"],
  ] as const) {
    const result = approvals(...args);
    expect(result.status, args.join(' ')).toBe(2);
    expect(result.stderr.trim().split('\n'), args.join(' ')).toHaveLength(1);
    expect(result.stderr).toContain(message);
  }
  // None of the refused commands wrote a decision.
  expect(store.decisionOn('bb33-fave')).toBeUndefined();
  expect(readdirSync(dir).filter((name) => name.endsWith('.decision.json')).sort()).toEqual(['aa11-vote.decision.json', 'aa22-hide.decision.json']);
});

test('approvals: an empty or absent store lists nothing, and says where it looked', () => {
  const dir = test.info().outputPath('none');
  const result = spawnSync(process.execPath, [...cli, 'approvals', 'list', '--dir', dir], { encoding: 'utf8' });
  expect(result.status).toBe(0);
  expect(result.stdout.trim()).toBe(`harness-eval: no approval requests in ${dir}`);
});

test('plan: trials per cell to tell 80% from 95%, with the runs, cost and time; bad flags are one line naming the flag', async () => {
  const { plan } = await import('../src/cli/plan.ts');
  const { trialsToDetect } = await import('../src/report/statistics.ts');
  const lines = plan(['--from', '80%', '--to', '0.95', '--cells', '4', '--seconds-per-run', '30', '--cost-per-run', '0.02', '--workers', '4']);
  const trials = trialsToDetect(0.8, 0.95)!;
  expect(trials).toBeGreaterThan(30);
  expect(lines[0]).toBe(`harness-eval: to tell a success rate of 80% from 95% (two-sided, 95% confidence, power 80%): ${trials} trials per cell`);
  expect(lines[1]).toBe(`  4 cells: ${trials * 4} runs · about $${(trials * 4 * 0.02).toFixed(2)} at $0.0200 a run · about ${Math.round((trials * 4 * 30) / 4 / 60)} min at 30 s a run over 4 workers`);
  // Three trials a cell almost never tell them apart: the report's gates at n = 3 say so too.
  expect(lines[2]).toMatch(/^  with 3, 10 and 30 trials per cell: told apart 0\.\d+%, /);
  expect(() => plan(['--from', '0.8'])).toThrow('--to: required (a success rate, 0.8 or 80%)');
  expect(() => plan(['--from', '0.8', '--to', '1.2'])).toThrow('--to: expected a rate between 0 and 1 (or 0% and 100%), got "1.2"');
  expect(() => plan(['--from', '0.8', '--to', '0.9', '--cells', '2.5'])).toThrow('--cells: expected a positive whole number, got "2.5"');
  expect(() => plan(['--from', '0.9', '--to', '90%'])).toThrow('--from and --to: the same rate (90%)');
});
