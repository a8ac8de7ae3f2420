import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { expect, test } from '@playwright/test';
import { commandAgent } from '../src/agents/command.ts';
import { runAgent } from './support.ts';

/**
 * A CLI installed outside the project (issue 41): run by its link, contained, it finds its own
 * package and its dependencies wherever npm put them, and reads what `show` gives it.
 */

const asRoot = process.getuid?.() === 0;
const readJson = (path: string) => JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;

/**
 * A package as npm installs one under `prefix`, and a link to its program in `binDir`: `global`,
 * lib/node_modules/fake-cli with its dependency in its own node_modules; `local`,
 * node_modules/fake-cli with its dependency hoisted beside it (as Codex's platform package is).
 * Its program reads $DATA (if set), and claims.
 */
function installCli(prefix: string, binDir: string, layout: 'global' | 'local'): string {
  const root = join(prefix, ...(layout === 'global' ? ['lib', 'node_modules', 'fake-cli'] : ['node_modules', 'fake-cli']));
  const dep = join(layout === 'global' ? join(root, 'node_modules') : dirname(root), 'fake-dep');
  mkdirSync(join(root, 'bin'), { recursive: true });
  mkdirSync(dep, { recursive: true });
  writeFileSync(join(root, 'package.json'), '{"name": "fake-cli", "version": "1.2.3", "bin": {"fake-cli": "bin/cli.js"}}\n');
  writeFileSync(join(dep, 'package.json'), '{"name": "fake-dep", "main": "index.js"}\n');
  writeFileSync(join(dep, 'index.js'), "module.exports = 'from its dependency';\n");
  const cli = [
    '#!/usr/bin/env node',
    "const fs = require('node:fs');",
    "const said = require('fake-dep');",
    "let data = 'unset';",
    "if (process.env.DATA) { try { data = fs.readFileSync(process.env.DATA, 'utf8').trim(); } catch (error) { data = error.code; } }",
    "fs.writeFileSync(process.env.HOME + '/seen.json', JSON.stringify({ said, data }));",
    "fs.writeFileSync(process.env.HARNESS_CLAIM_FILE, JSON.stringify({ success: true, summary: said }));",
  ];
  writeFileSync(join(root, 'bin', 'cli.js'), `${cli.join('\n')}\n`, { mode: 0o755 });
  mkdirSync(binDir, { recursive: true });
  const link = join(binDir, 'fake-cli');
  symlinkSync(relative(binDir, join(root, 'bin', 'cli.js')), link);
  return link;
}

test.describe('a CLI installed outside the project, run by its link', () => {
  test.skip(!asRoot, 'these layouts are CI\u2019s: the tests run as root');

  test('a global install under a 0700 folder in /tmp, its link on PATH, its node in another (as nvm\u2019s): runs contained and loads its own dependency', async ({ context }, testInfo) => {
    const prefix = mkdtempSync('/tmp/he-prefix-');
    const nodeHome = mkdtempSync('/tmp/he-node-');
    try {
      installCli(prefix, join(prefix, 'bin'), 'global');
      // Its `#!/usr/bin/env node` finds node on PATH only here.
      mkdirSync(join(nodeHome, 'bin'));
      symlinkSync(process.execPath, join(nodeHome, 'bin', 'node'));
      const agent = commandAgent(['fake-cli'], { sandbox: 'required', env: { PATH: `${join(prefix, 'bin')}:${join(nodeHome, 'bin')}` } });
      const { result } = await runAgent(context, testInfo, agent);
      expect(result).toMatchObject({ contained: true, claimed: true, stopReason: 'finished' });
      expect(readJson(testInfo.outputPath('run', 'seen.json'))).toEqual({ said: 'from its dependency', data: 'unset' });
    } finally {
      rmSync(prefix, { recursive: true, force: true });
      rmSync(nodeHome, { recursive: true, force: true });
    }
  });

  test('a local install elsewhere, its dependency hoisted beside it, its link in another folder given to node as the script: runs contained; `show` makes a data folder readable', async ({ context }, testInfo) => {
    const prefix = mkdtempSync('/tmp/he-install-');
    const data = mkdtempSync('/tmp/he-data-');
    try {
      const link = installCli(prefix, testInfo.outputPath('bin'), 'local');
      writeFileSync(join(data, 'data.txt'), 'shown\n', { mode: 0o644 });
      const env = { DATA: join(data, 'data.txt') };
      const hidden = await runAgent(context, testInfo, commandAgent(['node', link], { sandbox: 'required', env }));
      expect(hidden.result).toMatchObject({ contained: true, claimed: true, stopReason: 'finished' });
      expect(readJson(testInfo.outputPath('run', 'seen.json'))).toEqual({ said: 'from its dependency', data: 'ENOENT' });
      const agent = commandAgent(['node', link], { sandbox: 'required', env, show: [data] });
      expect(agent.condition).toMatchObject({ sandbox: 'bwrap', show: [data] });
      const shown = await runAgent(context, testInfo, agent);
      expect(shown.result).toMatchObject({ contained: true, claimed: true, stopReason: 'finished' });
      expect(readJson(testInfo.outputPath('run', 'seen.json'))).toEqual({ said: 'from its dependency', data: 'shown' });
    } finally {
      rmSync(prefix, { recursive: true, force: true });
      rmSync(data, { recursive: true, force: true });
    }
  });

  test('a package.json in a folder only its owner may enter does not show that folder: only the program\u2019s own', async ({ context }, testInfo) => {
    const closed = mkdtempSync('/tmp/he-owner-');
    try {
      writeFileSync(join(closed, 'package.json'), '{"name": "owner"}\n');
      writeFileSync(join(closed, 'private.txt'), 'the owner\u2019s\n', { mode: 0o644 });
      mkdirSync(join(closed, 'tools'));
      const look = ['const fs = require("node:fs");', 'let read; try { read = fs.readFileSync(process.env.PRIVATE, "utf8"); } catch (error) { read = error.code; }', 'fs.writeFileSync(process.env.HOME + "/seen.json", JSON.stringify({ read }));', 'fs.writeFileSync(process.env.HARNESS_CLAIM_FILE, JSON.stringify({ success: true, summary: "looked" }));'];
      writeFileSync(join(closed, 'tools', 'cli.js'), `${look.join('\n')}\n`);
      const { result } = await runAgent(context, testInfo, commandAgent(['node', join(closed, 'tools', 'cli.js')], { sandbox: 'required', env: { PRIVATE: join(closed, 'private.txt') } }));
      expect(result).toMatchObject({ contained: true, claimed: true, stopReason: 'finished' });
      expect(readJson(testInfo.outputPath('run', 'seen.json'))).toEqual({ read: 'ENOENT' });
    } finally {
      rmSync(closed, { recursive: true, force: true });
    }
  });
});

test('show: each path must exist, absolute or relative to cwd; one line naming show[i] otherwise', () => {
  const cwd = dirname(new URL(import.meta.url).pathname);
  expect(() => commandAgent(['node'], { cwd, show: ['fixtures', '/no/such/data'] }).prepare!()).toThrow(/^commandAgent\(\) options: show\[1\]: nothing at \/no\/such\/data$/);
  expect(() => commandAgent(['node'], { cwd, show: ['fixtures'] }).prepare!()).not.toThrow();
  expect(() => commandAgent(['node'], { show: [''] })).toThrow(/^commandAgent\(\) options: show\.0: /);
});

test('the condition names the installed packages a command runs by its links (a CLI\u2019s own version), whoever runs them, and none for a script of its own', () => {
  const prefix = mkdtempSync('/tmp/he-versions-');
  try {
    const link = installCli(prefix, join(prefix, 'bin'), 'global');
    const local = installCli(join(prefix, 'local'), join(prefix, 'local-bin'), 'local');
    expect(commandAgent(['fake-cli'], { sandbox: 'none', env: { PATH: join(prefix, 'bin') } }).condition).toMatchObject({ packages: ['fake-cli@1.2.3'] });
    // A wrapper that is handed the link (examples/clis/): the package is the link's, not the wrapper's project.
    expect(commandAgent(['sh', 'examples/clis/claude.sh', local], { sandbox: 'none' }).condition).toMatchObject({ packages: ['fake-cli@1.2.3'] });
    expect(commandAgent(['node', link, local], { sandbox: 'none' }).condition).toMatchObject({ packages: ['fake-cli@1.2.3'] });
    expect(commandAgent(['node', 'examples/openai-agents/agent.mjs'], { sandbox: 'none' }).condition).not.toHaveProperty('packages');
  } finally {
    rmSync(prefix, { recursive: true, force: true });
  }
});
