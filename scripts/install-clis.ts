// The agent CLIs harness-eval measures as command agents (examples/clis/, docs/third-party.md), each
// installed at its pinned version into a cache folder of its own, outside the project and never one
// of its dependencies: HARNESS_CLI_DIR (default ~/.cache/harness-eval/clis)/<package>@<version>.
// An install already there is kept. `npm run clis` installs all three; `npm run clis codex` one.
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Each CLI by the name of its program: its package, pinned. */
export const CLIS = {
  claude: { pkg: '@anthropic-ai/claude-code', version: '2.1.332' },
  codex: { pkg: '@openai/codex', version: '0.171.0' },
  gemini: { pkg: '@google/gemini-cli', version: '0.61.0' },
} as const;
export type CliName = keyof typeof CLIS;

/** The cache folder the CLIs are installed under. */
export function cliDir(): string {
  return resolve(process.env.HARNESS_CLI_DIR || join(homedir(), '.cache', 'harness-eval', 'clis'));
}

/** Where `name` is installed (a prefix of its own), and its program's link, npm's `.bin` one. */
export function cliInstall(name: string) {
  const cli = CLIS[name as CliName];
  if (!cli) throw new Error(`install-clis: unknown CLI "${name}" (accepted: ${Object.keys(CLIS).join(', ')})`);
  const prefix = join(cliDir(), `${cli.pkg}@${cli.version}`);
  return { ...cli, prefix, link: join(prefix, 'node_modules', '.bin', name) };
}

/** The program's link if `name` is installed, else undefined. */
export function installedCli(name: CliName): string | undefined {
  const { link } = cliInstall(name);
  return existsSync(link) ? link : undefined;
}

/**
 * Installs `name` from the registry unless it is there, and answers its link. Its install scripts
 * run (Claude Code's puts its native program in place), the package pinned exactly. It is
 * installed in a folder of its own, then renamed into place: installs at once (two test workers)
 * never write the same folder, and a half-done one is never taken for an install.
 */
export function installCli(name: CliName, { quiet = false } = {}): string {
  const { pkg, version, prefix, link } = cliInstall(name);
  if (existsSync(link)) return link;
  const started = Date.now();
  mkdirSync(dirname(prefix), { recursive: true });
  const staging = mkdtempSync(`${prefix}.installing-`);
  try {
    // mkdtemp's folder is its owner's alone; an install is read by every user (a sandbox's uid among them).
    chmodSync(staging, 0o755);
    try {
      execFileSync('npm', ['install', '--prefix', staging, '--no-audit', '--no-fund', '--save-exact', `${pkg}@${version}`], { stdio: ['ignore', quiet ? 'ignore' : 'inherit', quiet ? 'pipe' : 'inherit'] });
    } catch (error) {
      // One line: npm's first error lines (its code, then why), where they were kept.
      const lines = String((error as { stderr?: Buffer }).stderr ?? '').split('\n');
      const said = lines.filter((line) => line.startsWith('npm error') && !line.includes('complete log')).slice(0, 2).join('; ');
      throw new Error(`install-clis: npm install ${pkg}@${version} failed${said ? `: ${said}` : ''}`);
    }
    if (!existsSync(join(staging, relative(prefix, link)))) throw new Error(`install-clis: ${pkg}@${version} installed, but no program at ${link}`);
    try {
      renameSync(staging, prefix);
    } catch (error) {
      // Another install got there first: its folder stands.
      if (!existsSync(link)) throw error;
    }
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  if (!quiet) console.log(`${pkg}@${version}: installed in ${prefix} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
  return link;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const names = process.argv.slice(2);
  try {
    for (const name of names.length > 0 ? names : Object.keys(CLIS)) {
      const { pkg, version, prefix } = cliInstall(name);
      if (installedCli(name as CliName)) console.log(`${pkg}@${version}: already in ${prefix}`);
      else installCli(name as CliName);
    }
  } catch (error) {
    console.error(error instanceof Error ? error.message : String(error));
    process.exit(1);
  }
}
