import type { FullConfig } from '@playwright/test/reporter';
import { selectedCells } from './matrix.ts';

/**
 * The part of the suite a run selected, in words: `shard 1/2`, `grep upvote`, `grep-invert slow`,
 * `project a, b`, `cells a · bare, b · bare` (HARNESS_CELLS), `test filter tests/x.spec.ts:12`,
 * `last failed`, `only changed`, `test list x.txt`; none for the whole suite. A summary of a part is never a baseline for the whole.
 * Playwright's config says the shard and the projects; the other filters it keeps to itself, so
 * they are read from the command line it ran (`config.argv`), as its own parser reads them.
 */
export function selectionOf(config: FullConfig, env: NodeJS.ProcessEnv = process.env): string[] {
  const reasons: string[] = [];
  if (config.shard && config.shard.total > 1) reasons.push(`shard ${config.shard.current}/${config.shard.total}`);
  // Absent in merge-reports, whose config comes from the shards' blobs.
  const filtered = config.filteredProjects ?? [];
  if (filtered.length > 0 && filtered.length < config.projects.length) reasons.push(`project ${filtered.map((project) => project.name).join(', ')}`);
  const cells = selectedCells(env);
  if (cells.length > 0) reasons.push(`cells ${cells.join(', ')}`);
  return [...reasons, ...commandLineFilters(config.argv ?? [])];
}

/** `playwright test`'s options that take a value (Playwright 1.65); `[optional]` values are taken when the next word is no option. */
const VALUE = new Set(['add-reporter', 'browser', 'config', 'global-timeout', 'grep', 'grep-invert', 'last-failed-file', 'max-failures', 'output', 'project', 'repeat-each', 'reporter', 'retries', 'run-agents', 'shard', 'test-list', 'test-list-invert', 'timeout', 'trace', 'tsconfig', 'ui-host', 'ui-port', 'update-source-method', 'workers']);
const OPTIONAL_VALUE = new Set(['debug', 'only-changed', 'shuffle', 'update-snapshots']);
const SHORT: Record<string, string> = { c: 'config', g: 'grep', G: 'grep-invert', j: 'workers', u: 'update-snapshots', x: 'x' };

/** What the `test` command's filters select, from the runner's argv (`node cli.js test …`); nothing for another command. */
function commandLineFilters(argv: readonly string[]): string[] {
  const args = argv.slice(2);
  if (args[0] !== 'test') return [];
  const options = new Map<string, string | true>();
  const filters: string[] = [];
  for (let i = 1; i < args.length && args[i] !== '--'; i++) {
    const word = args[i]!;
    if (!word.startsWith('-') || word === '-') {
      filters.push(word);
      continue;
    }
    const long = /^--([^=]+)(?:=(.*))?$/s.exec(word);
    const name = long ? long[1]! : SHORT[word[1]!] ?? word.slice(1);
    let value: string | true | undefined = long ? long[2] : word.length > 2 ? word.slice(2) : undefined;
    const next = args[i + 1];
    const nextIsValue = next !== undefined && next !== '--' && !next.startsWith('-');
    if (value === undefined && (VALUE.has(name) || (OPTIONAL_VALUE.has(name) && nextIsValue)) && next !== undefined) value = args[++i]!;
    // `--project a b`: a list, up to the next option.
    if (name === 'project') while (args[i + 1] !== undefined && args[i + 1] !== '--' && !args[i + 1]!.startsWith('-')) i++;
    options.set(name, value ?? true);
  }
  const said = (name: string, words: (value: string | true) => string) => (options.has(name) ? [words(options.get(name)!)] : []);
  return [
    ...said('grep', (value) => `grep ${value}`),
    ...said('grep-invert', (value) => `grep-invert ${value}`),
    ...said('last-failed', () => 'last failed'),
    ...said('only-changed', (value) => (value === true ? 'only changed' : `only changed since ${value}`)),
    ...said('test-list', (value) => `test list ${value}`),
    ...said('test-list-invert', (value) => `test list inverted ${value}`),
    ...(filters.length > 0 ? [`test filter ${filters.join(' ')}`] : []),
  ];
}
