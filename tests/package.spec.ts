import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from '@playwright/test';
import { summarySchema } from '../src/report/types.ts';
import { expect } from './support.ts';

/**
 * The package as a user gets it: `npm pack`, installed from the tarball in a fresh project outside
 * the repository, running the README's quick start exactly as written, then typechecked by a plain
 * strict tsconfig (no skipLibCheck, the default lib of ES2022).
 */
const repo = fileURLToPath(new URL('..', import.meta.url));
const packageJson = JSON.parse(await readFile(join(repo, 'package.json'), 'utf8')) as { devDependencies: Record<string, string> };

/** What the README tells a user to install, which the test replaces by the packed tarball. */
const INSTALL = 'npm i -D harness-eval @playwright/test';

const userTsconfig = { compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noEmit: true } };

type Block = { kind: 'command'; text: string } | { kind: 'file'; path: string; text: string };

/** The quick start's code blocks, in order: shell commands, and files named by their first line. */
function quickStart(readme: string): Block[] {
  const section = /^## Install and quick start\n([\s\S]*?)^## /m.exec(readme)?.[1];
  if (!section) throw new Error('README: no "## Install and quick start" section');
  return [...section.matchAll(/^```(sh|ts)\n([\s\S]*?)^```$/gm)].map(([, language, text]) => {
    if (language === 'sh') return { kind: 'command', text: text! };
    const path = /^\/\/ (\S+)\n/.exec(text!)?.[1];
    if (!path) throw new Error(`README quick start: a ts block does not start with "// <file>":\n${text}`);
    return { kind: 'file', path, text: text! };
  });
}

/** The README's answer to npm 11's install-script review: its commands, and the postinstall's step by hand. */
function allowScripts(readme: string): { commands: string; byHand: string } {
  const section = /^### npm 11 and `allowScripts`\n([\s\S]*?)^## /m.exec(readme)?.[1];
  if (!section) throw new Error('README: no "### npm 11 and `allowScripts`" section');
  const commands = /^```sh\n([\s\S]*?)^```$/m.exec(section)?.[1];
  const byHand = /`(node node_modules\/harness-eval\/[^`]+)`/.exec(section)?.[1];
  if (!commands || !byHand) throw new Error('README: the allowScripts section has no sh block, or no step by hand');
  return { commands, byHand };
}

test("the README's answer to npm 11's allowScripts approves this package and runs the very step its postinstall runs, from a file it ships", async () => {
  const { commands, byHand } = allowScripts(await readFile(join(repo, 'README.md'), 'utf8'));
  const manifest = JSON.parse(await readFile(join(repo, 'package.json'), 'utf8')) as { name: string; scripts: Record<string, string>; files: string[] };
  expect(commands).toMatch(new RegExp(`^npm install-scripts approve ${manifest.name} `, 'm'));
  expect(commands).toMatch(new RegExp(`^npm rebuild ${manifest.name} `, 'm'));
  expect(byHand).toBe(manifest.scripts.postinstall!.replace(/^node /, `node node_modules/${manifest.name}/`));
  expect(manifest.files).toContain(byHand.split('/')[2]);
});

/** Runs a shell script in `cwd`, with none of this test run's own npm or Playwright variables. */
function shell(script: string, cwd: string): Promise<{ code: number; stdout: string; output: string }> {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !/^(npm_|TEST_|PW_|PLAYWRIGHT_)/i.test(name) && name !== 'OPENAI_API_KEY' && name !== 'INIT_CWD'),
  );
  return new Promise((resolve) => {
    execFile('bash', ['-eo', 'pipefail', '-c', script], { cwd, env: { ...env, FORCE_COLOR: '0', CI: '1' }, maxBuffer: 64 << 20 }, (error, stdout, stderr) =>
      resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, output: stdout + stderr }),
    );
  });
}

/** Its stdout, once it exited with 0. */
async function ok(script: string, cwd: string): Promise<string> {
  const { code, stdout, output } = await shell(script, cwd);
  expect(code, `${script}\n${output}`).toBe(0);
  return stdout;
}

test('the packed tarball, installed in a fresh project, runs the README quick start and typechecks', async () => {
  // Packing builds dist/ (prepack), installing takes the npm cache: minutes on a loaded machine.
  test.setTimeout(15 * 60_000);
  const dir = await mkdtemp(join(tmpdir(), 'harness-eval-package-'));
  try {
    const packed = JSON.parse(await ok(`npm pack --silent --json --pack-destination '${dir}'`, repo)) as Array<{ filename: string; files: Array<{ path: string }> }>;
    const shipped = packed[0]!.files.map((file) => file.path);
    expect(shipped).toContain('dist/index.d.ts');
    expect(shipped).toContain('fixtures/hn/2025/news.html');
    // The README links to docs/: the pages ship with it.
    expect(shipped).toContain('docs/architecture.md');
    // `harness-eval init kit` copies it from dist/cli/ at ../../templates/kit/.
    expect(shipped).toContain('templates/kit/site.ts');
    expect(shipped.filter((path) => path.startsWith('src/') || path.startsWith('tests/') || path.startsWith('specs/'))).toEqual([]);

    const project = join(dir, 'hn-eval');
    await mkdir(project);
    const blocks = quickStart(await readFile(join(repo, 'README.md'), 'utf8'));
    const commands = blocks.filter((block) => block.kind === 'command');
    expect(commands.some((block) => block.text.includes(INSTALL)), `the quick start installs with "${INSTALL}"`).toBe(true);
    const last = commands.at(-1)!;
    // The tarball for the registry's package; this repository's Playwright, and what the typecheck needs.
    const devDependencies = ['@playwright/test', 'typescript', '@types/node'].map((name) => `${name}@${packageJson.devDependencies[name]}`);
    const install = `npm i -D '${join(dir, packed[0]!.filename)}' ${devDependencies.join(' ')} --prefer-offline --no-audit --no-fund`;
    for (const block of blocks) {
      if (block === last) break;
      if (block.kind === 'file') {
        await mkdir(dirname(join(project, block.path)), { recursive: true });
        await writeFile(join(project, block.path), block.text);
      } else await ok(block.text.replace(INSTALL, install), project);
    }
    await writeFile(join(project, 'tsconfig.json'), JSON.stringify(userTsconfig, null, 2));

    const [run, typecheck] = await Promise.all([shell(last.text, project), shell('npx tsc -p tsconfig.json', project)]);
    expect(run.output).not.toContain('Requiring @playwright/test second time');
    // The installed package reads each test's fixtures, so it would catch a misspelt key in use (src/playwright/use-keys.ts).
    expect(run.output).not.toContain('misspelt key in use is not caught');
    expect(run.code, run.output).toBe(0);
    expect(typecheck.code, typecheck.output).toBe(0);

    const summary = summarySchema.parse(JSON.parse(await readFile(join(project, 'reports', 'summary.json'), 'utf8')));
    expect(summary).toMatchObject({ complete: true, planned: 1, recorded: 1, totals: { runs: 1, successes: 1, falseSuccesses: 0 } });
    expect(summary.cells[0]).toMatchObject({ task: 'upvote-first-post', model: 'scripted:overclaimer', layers: 'guardrails+verify+login', site: 'hn-recorded' });
    // The installed CLI runs the compiled JavaScript: no TypeScript loader at run time.
    const compared = await ok('npx harness-eval report --baseline reports/summary.json reports/summary.json', project);
    expect(compared).toContain('upvote-first-post');
    // The postinstall never fails a user's install: with no Chromium and no bubblewrap it says so, a line each, and exits 0.
    const postinstall = await ok('CHROMIUM_PATH=/nowhere/chromium HARNESS_BWRAP=/nowhere/bwrap HARNESS_EVAL_NO_APT=1 npm rebuild harness-eval --foreground-scripts 2>&1', project);
    expect(postinstall).toContain('harness-eval: missing Chromium, for the browser every run drives: CHROMIUM_PATH: no file at /nowhere/chromium;');
    expect(postinstall).toContain('harness-eval: missing bubblewrap (bwrap), for the command agents\u2019 sandbox: HARNESS_BWRAP=/nowhere/bwrap is not an executable file;');
    // npm 11 lists its postinstall as not yet reviewed; the README's commands approve it (and run it), and its step by hand says the same lines.
    const { commands: approve, byHand } = allowScripts(await readFile(join(repo, 'README.md'), 'utf8'));
    expect(await ok('npm install-scripts ls 2>&1', project)).toContain('harness-eval@');
    await ok(approve, project);
    expect(await ok('npm install-scripts ls 2>&1', project)).not.toContain('harness-eval@');
    const stepByHand = await ok(`CHROMIUM_PATH=/nowhere/chromium HARNESS_BWRAP=/nowhere/bwrap HARNESS_EVAL_NO_APT=1 ${byHand} 2>&1`, project);
    expect(stepByHand).toContain('harness-eval: missing Chromium, for the browser every run drives: CHROMIUM_PATH: no file at /nowhere/chromium;');
    // The installed CLI's doctor says the same, and that the sandbox cannot be required.
    const doctor = await shell('HARNESS_BWRAP=/nowhere/bwrap npx harness-eval doctor', project);
    expect(doctor.stdout).toMatch(/^bubblewrap: +missing \(HARNESS_BWRAP=\/nowhere\/bwrap/m);
    expect(doctor.code).toBe(1);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
