import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from '@playwright/test';
import { commandAgent } from '../src/agents/command.ts';
import { modelNameInUse, portablePaths } from '../src/playwright/condition.ts';
import { playwright, readSummary, workspace } from './playwright-child.ts';
import { expect } from './support.ts';

/**
 * Cells are named by what the user calls them (tests/fixtures/names/): command agents by the
 * matrix's keys, a capture by its file. Conditions record paths relative to the config's folder,
 * and no absolute path of this machine reaches summary.json, summary.md or index.html.
 */
test.describe.configure({ timeout: 300_000 });

test('matrix keys name command agents, a capture is named by its file, and no report holds an absolute path of this machine', async () => {
  const { dir, env } = workspace('harness-eval-names-');
  const captures = mkdtempSync(join(tmpdir(), 'harness-eval-capture-'));
  try {
    const capture = join(captures, 'front-2020.html');
    copyFileSync('fixtures/hn/2020/news.html', capture);
    const child = await playwright(['test', '-c', 'tests/fixtures/names/playwright.config.ts'], { ...env, CAPTURE: capture });
    expect(child.code, child.stdout).toBe(0);
    const summary = readSummary(env.REPORT_DIR);
    // Neither agent calls its model (diligent-t0 by the matrix's key): the cells name none.
    expect(summary.cells.map((cell) => [cell.agent, cell.model, cell.site])).toEqual([
      ['py', null, 'front-2020'],
      ['ts', null, 'front-2020'],
    ]);
    const [py, ts] = summary.cells.map((cell) => cell.condition as { agent: { cwd?: string; argv: string[] }; site: { capture: string } });
    expect(py!.agent.cwd).toBe('../agents');
    expect(ts!.agent.argv[1]).toBe('../agents/front-page.mjs');
    expect(py!.site.capture).toMatch(/^\$TMPDIR\/harness-eval-capture-\w+\/front-2020\.html$/);
    const roots = [process.cwd(), homedir(), tmpdir(), dir, captures].filter((root) => root !== '/');
    for (const file of ['summary.json', 'summary.md', 'index.html']) {
      const text = readFileSync(join(env.REPORT_DIR, file), 'utf8');
      for (const root of roots) expect(text.includes(`${root}/`) || text.includes(JSON.stringify(root)), `${file} names ${root}`).toBe(false);
    }
  } finally {
    rmSync(captures, { recursive: true, force: true });
  }
});

test('paths in a condition read alike from two clones in different folders', () => {
  const condition = (root: string) => ({ agent: { argv: ['/usr/bin/python3', `${root}/agents/agent.py`], cwd: `${root}/agents` }, site: { capture: `${root}/captures/front.html`, stateFile: null } });
  const here = join(process.cwd(), 'clone-a');
  const there = join(homedir(), 'elsewhere', 'clone-b');
  expect(portablePaths(condition(here), here)).toEqual(portablePaths(condition(there), there));
  expect(portablePaths(condition(here), here)).toEqual({ agent: { argv: ['/usr/bin/python3', 'agents/agent.py'], cwd: 'agents' }, site: { capture: 'captures/front.html', stateFile: null } });
  // Outside the project: the home and temporary folders by their names, not their paths.
  expect(portablePaths({ a: join(tmpdir(), 'he-elsewhere', 'f.html'), b: here }, join(here, 'sub'))).toEqual({ a: '$TMPDIR/he-elsewhere/f.html', b: '..' });
});

test("a models record's key names the project's model only: a spec's own model is named by its id", () => {
  const project = { model: { id: 'openai:gpt-4o-mini', temperature: 0 }, modelName: 'mini-t0' };
  expect(modelNameInUse({ temperature: 0, id: 'openai:gpt-4o-mini' }, 'mini-t0', project)).toBe('mini-t0');
  expect(modelNameInUse('openai:gpt-4o', 'mini-t0', project)).toBe('openai:gpt-4o');
  // Named beside the model, in the spec: that name stands.
  expect(modelNameInUse('openai:gpt-4o', 'big', project)).toBe('big');
  expect(modelNameInUse('openai:gpt-4o', undefined, {})).toBe('openai:gpt-4o');
});

test('an unnamed command agent is named by one rule: its script when an interpreter runs it, else its program; never by what is on this disk', () => {
  const named = (argv: string[], cwd?: string) => commandAgent(argv, { ...(cwd && { cwd }) }).name;
  const cases: Array<[string[], string]> = [
    // A script that is not there (or not there from this folder) names the agent as one that is.
    [['python3', 'my_agent.py'], 'my_agent.py'],
    [['python3', 'agents/nothere.py'], 'nothere.py'],
    [['python3', '-u', 'examples/python-agent/agent.py'], 'agent.py'],
    [['/usr/bin/python3.12', 'agent.py'], 'agent.py'],
    [['python', '-m', 'my_agent'], 'my_agent'],
    [[process.execPath, 'front-page.mjs'], 'front-page.mjs'],
    [['node', '--import', 'tsx', 'examples/openai-loop/agent.ts'], 'agent.ts'],
    [['node', '-r', 'ts-node/register', 'src/agent.ts'], 'agent.ts'],
    [['npx', 'tsx', 'agent.ts'], 'agent.ts'],
    [['npx', 'my-agent-cli', '--fast'], 'my-agent-cli'],
    [['uv', 'run', '--with', 'openai', 'agent.py'], 'agent.py'],
    [['deno', 'run', '-A', 'agent.ts'], 'agent.ts'],
    [['bun', 'run', 'agent.ts'], 'agent.ts'],
    [['bash', '-c', 'echo hi'], 'bash'],
    [['./bin/my-agent', '--task', 'x.py'], 'my-agent'],
    [['/opt/agents/claude', '-p'], 'claude'],
  ];
  expect(cases.map(([argv]) => named(argv))).toEqual(cases.map(([, name]) => name));
  // The same argv names the same agent from any folder.
  expect(named(['python3', 'agents/front-page.mjs'], 'tests/fixtures')).toBe(named(['python3', 'agents/front-page.mjs'], '/'));
  expect(commandAgent(['python3', 'agent.py'], { name: 'py' }).name).toBe('py');
});
