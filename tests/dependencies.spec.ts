import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, posix, relative, sep } from 'node:path';
import { expect, test } from '@playwright/test';
import ts from 'typescript';

/**
 * The shape of src/, as Playwright's DEPS.list / check_deps: every folder of src/ with a DEPS.list
 * says which folders its files may import (runtime and type imports alike), src/core/ imports
 * nothing of src/, and no file reaches itself through its imports. Imports are read with the
 * TypeScript compiler's own pre-processor, not with regexes.
 */

/** A graph of files (paths relative to src/, `/`-separated) and the src/ files each one imports. */
export type ImportGraph = Map<string, { spec: string; target: string }[]>;

/**
 * Each folder's DEPS.list, by section: what the files of the folder may import, as folders of
 * src/ (`core`, `sites/hn`; a folder's own files are always allowed) or single files of src/
 * (`input.ts`, `report/caps.ts`). Lines before any `[file.ts]` header are the folder's (`*`);
 * a `[file.ts]` section gives that file its own list instead.
 */
export type DepsRules = Map<string, Map<string, Set<string>>>;

/**
 * Circles that are known and left for a later step, each with why: the check fails on any other
 * circle, and on a listed one that no longer exists, so the list can only shrink.
 */
const KNOWN_CIRCLES: { files: string[]; reason: string }[] = [];

const SRC = join(import.meta.dirname, '..', 'src');

const toPosix = (path: string) => path.split(sep).join('/');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.(ts|mts|tsx)$/.test(entry.name) && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

/** Every import of every file of src/ that names another file of src/: `import`, `import type`, `export … from`, `import()`. */
export function readGraph(src = SRC): ImportGraph {
  const files = sourceFiles(src).map((file) => toPosix(relative(src, file)));
  const known = new Set(files);
  const resolve = (from: string, spec: string): string | undefined => {
    if (!spec.startsWith('.')) return undefined;
    const base = posix.normalize(posix.join(posix.dirname(from), spec)).replace(/\.(js|mjs)$/, '');
    const found = [base, `${base}.ts`, `${base}.mts`, `${base}.tsx`, `${base}/index.ts`].find((candidate) => known.has(candidate));
    if (found) return found;
    // A relative import that leaves src/ (or names a file that is not there) is still an import: keep it so the rules see it.
    return base;
  };
  const graph: ImportGraph = new Map();
  for (const file of files) {
    const info = ts.preProcessFile(readFileSync(join(src, file), 'utf8'), true, true);
    const edges = info.importedFiles.flatMap(({ fileName }) => {
      const target = resolve(file, fileName);
      return target === undefined ? [] : [{ spec: fileName, target }];
    });
    graph.set(file, edges);
  }
  return graph;
}

/** The DEPS.list of every folder of src/ that has one: one folder a line, `#` starts a comment. */
export function readRules(src = SRC): DepsRules {
  const rules: DepsRules = new Map();
  const walk = (dir: string) => {
    const list = join(dir, 'DEPS.list');
    if (existsSync(list)) {
      const folder = toPosix(relative(src, dir)) || '.';
      rules.set(folder, parseDepsList(readFileSync(list, 'utf8')));
    }
    for (const entry of readdirSync(dir, { withFileTypes: true })) if (entry.isDirectory()) walk(join(dir, entry.name));
  };
  walk(src);
  return rules;
}

export function parseDepsList(text: string): Map<string, Set<string>> {
  const sections = new Map<string, Set<string>>([['*', new Set()]]);
  let section = sections.get('*')!;
  for (const raw of text.split('\n')) {
    const line = raw.replace(/#.*$/, '').trim();
    if (!line) continue;
    const header = /^\[(.+)\]$/.exec(line);
    if (header) sections.set(header[1]!, (section = sections.get(header[1]!) ?? new Set()));
    else section.add(line.replace(/\/+$/, '') || '.');
  }
  return sections;
}

/** The list that rules a file: its own section of its folder's DEPS.list, else the folder's. */
export function allowedFor(file: string, folder: string, rules: DepsRules): { section: string; allowed: Set<string> } {
  const sections = rules.get(folder)!;
  const name = posix.relative(folder, file);
  return sections.has(name) ? { section: name, allowed: sections.get(name)! } : { section: '*', allowed: sections.get('*')! };
}

/** Whether a DEPS.list entry (a folder or a file of src/) covers an imported file in folder `to`. */
const covers = (entry: string, target: string, to: string) => entry === to || entry === target;
const shown = (folder: string) => `src/${folder === '.' ? '' : `${folder}/`}`;

/** The folder whose DEPS.list rules a file: the nearest one up from it that has a DEPS.list (src/ itself is `.`). */
export function folderOf(file: string, rules: DepsRules): string | undefined {
  let dir = posix.dirname(file);
  for (;;) {
    if (rules.has(dir)) return dir;
    if (dir === '.' || dir === '' || dir.startsWith('..')) return undefined;
    dir = posix.dirname(dir);
  }
}

/** Imports a folder's DEPS.list does not allow, one line each: the file, the import, the rule. */
export function forbiddenImports(graph: ImportGraph, rules: DepsRules): string[] {
  const problems: string[] = [];
  for (const [file, edges] of graph) {
    const from = folderOf(file, rules);
    if (from === undefined) {
      problems.push(`${file}: no DEPS.list rules its folder (add src/${posix.dirname(file)}/DEPS.list)`);
      continue;
    }
    const { section, allowed } = allowedFor(file, from, rules);
    for (const { spec, target } of edges) {
      const to = graph.has(target) ? folderOf(target, rules) : undefined;
      if (to === undefined) {
        problems.push(`${file}: imports '${spec}', outside src/ or no file there`);
        continue;
      }
      if (from === 'core' && target !== file && to !== 'core') {
        problems.push(`${file}: imports '${spec}' (${shown(to)}): src/core/ imports nothing else of src/`);
        continue;
      }
      if (to === from || [...allowed].some((entry) => covers(entry, target, to))) continue;
      const rule = `${shown(from)}DEPS.list${section === '*' ? '' : ` [${section}]`}`;
      problems.push(`${file}: imports '${spec}' (${shown(to)}), which ${rule} does not allow (it allows: ${[...allowed].sort().join(', ') || 'nothing'})`);
    }
  }
  return problems;
}

/** Every circle of imports (a strongly connected component of two or more files, or a file that imports itself), Tarjan's. */
export function importCircles(graph: ImportGraph): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const circles: string[][] = [];
  const strongConnect = (file: string) => {
    index.set(file, next);
    low.set(file, next);
    next += 1;
    stack.push(file);
    onStack.add(file);
    for (const { target } of graph.get(file) ?? []) {
      if (!graph.has(target)) continue;
      if (!index.has(target)) {
        strongConnect(target);
        low.set(file, Math.min(low.get(file)!, low.get(target)!));
      } else if (onStack.has(target)) {
        low.set(file, Math.min(low.get(file)!, index.get(target)!));
      }
    }
    if (low.get(file) !== index.get(file)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== file);
    const selfImport = (graph.get(file) ?? []).some(({ target }) => target === file);
    if (component.length > 1 || selfImport) circles.push(component.sort());
  };
  for (const file of graph.keys()) if (!index.has(file)) strongConnect(file);
  return circles;
}

/** Circles not in the known list, and known circles that are gone: both are failures. */
export function circleProblems(circles: string[][], known: readonly { files: readonly string[] }[]): string[] {
  const key = (files: readonly string[]) => [...files].sort().join(' → ');
  const found = new Set(circles.map(key));
  const listed = new Set(known.map(({ files }) => key(files)));
  return [
    ...[...found].filter((circle) => !listed.has(circle)).map((circle) => `import circle: ${circle}`),
    ...[...listed].filter((circle) => !found.has(circle)).map((circle) => `known circle no longer exists, take it off KNOWN_CIRCLES: ${circle}`),
  ];
}

test('every import of src/ is one its folder\'s DEPS.list allows, and src/core/ imports nothing of src/', () => {
  const graph = readGraph();
  const rules = readRules();
  expect(graph.size).toBeGreaterThan(100);
  for (const folder of ['.', 'core', 'harness', 'layers', 'tools', 'models', 'agents', 'eval', 'sites', 'sites/hn', 'report', 'playwright', 'cli']) {
    expect(rules.has(folder), `src/${folder === '.' ? '' : `${folder}/`}DEPS.list`).toBe(true);
  }
  expect(rules.get('core')).toEqual(new Map([['*', new Set()]]));
  expect(forbiddenImports(graph, rules)).toEqual([]);
});

test('no import circle among the files of src/ (type imports included) beyond the known ones', () => {
  expect(circleProblems(importCircles(readGraph()), KNOWN_CIRCLES)).toEqual([]);
});

test('every DEPS.list rule is used: the sets are the tightest true ones', () => {
  const graph = readGraph();
  const rules = readRules();
  const used = new Set<string>();
  for (const [file, edges] of graph) {
    const from = folderOf(file, rules)!;
    const { section, allowed } = allowedFor(file, from, rules);
    for (const { target } of edges) {
      const to = folderOf(target, rules);
      for (const entry of allowed) if (to !== undefined && to !== from && covers(entry, target, to)) used.add(`${from} ${section} ${entry}`);
    }
  }
  const unused = [...rules].flatMap(([folder, sections]) =>
    [...sections].flatMap(([section, allowed]) =>
      [...allowed].filter((entry) => !used.has(`${folder} ${section} ${entry}`)).map((entry) => `${shown(folder)}DEPS.list${section === '*' ? '' : ` [${section}]`} allows ${entry}, which nothing there imports`),
    ),
  );
  expect(unused).toEqual([]);
});

test('the checker reports a forbidden edge, an import out of core, a circle, and a known circle that is gone', () => {
  const edge = (target: string) => ({ spec: `./${target}`, target });
  const graph: ImportGraph = new Map([
    ['core/task.ts', [edge('eval/run.ts')]],
    ['eval/run.ts', [edge('eval/oracle.ts'), edge('report/summary.ts')]],
    ['eval/oracle.ts', [edge('eval/run.ts'), edge('core/task.ts')]],
    ['report/summary.ts', [edge('core/task.ts')]],
  ]);
  const rules: DepsRules = new Map([
    ['core', new Map([['*', new Set<string>()]])],
    ['eval', new Map([['*', new Set(['core'])]])],
    ['report', new Map([['*', new Set(['core'])]])],
  ]);
  const forbidden = forbiddenImports(graph, rules);
  expect(forbidden).toEqual([
    expect.stringMatching(/^core\/task\.ts: imports '\.\/eval\/run\.ts' .*src\/core\/ imports nothing else of src\//),
    expect.stringMatching(/^eval\/run\.ts: imports '\.\/report\/summary\.ts' \(src\/report\/\), which src\/eval\/DEPS\.list does not allow \(it allows: core\)/),
  ]);
  const circles = importCircles(graph);
  expect(circles).toEqual([['core/task.ts', 'eval/oracle.ts', 'eval/run.ts', 'report/summary.ts']]);
  expect(circleProblems(circles, [])).toEqual(['import circle: core/task.ts → eval/oracle.ts → eval/run.ts → report/summary.ts']);
  expect(circleProblems([], [{ files: ['eval/run.ts', 'eval/oracle.ts'] }])).toEqual([expect.stringMatching(/^known circle no longer exists.*eval\/oracle\.ts → eval\/run\.ts$/)]);
  expect(circleProblems(circles, [{ files: ['report/summary.ts', 'eval/run.ts', 'eval/oracle.ts', 'core/task.ts'] }])).toEqual([]);
  expect(parseDepsList('# a comment\ncore/\n\nmodels  # why\n[main.ts]\ninput.ts\n')).toEqual(
    new Map([
      ['*', new Set(['core', 'models'])],
      ['main.ts', new Set(['input.ts'])],
    ]),
  );
  expect(folderOf('models/scripted/doubles.ts', new Map([['models', new Map()]]))).toBe('models');
  // A file entry allows that file alone, and a file's own section replaces its folder's list.
  const sectioned: DepsRules = new Map([
    ['.', new Map([['*', new Set<string>()], ['index.ts', new Set(['eval'])]])],
    ['eval', new Map([['*', new Set(['text.ts'])]])],
  ]);
  const utilities: ImportGraph = new Map([
    ['index.ts', [edge('eval/run.ts')]],
    ['text.ts', [edge('eval/run.ts')]],
    ['eval/run.ts', [edge('text.ts'), edge('index.ts')]],
  ]);
  expect(forbiddenImports(utilities, sectioned)).toEqual([
    expect.stringMatching(/^text\.ts: imports '\.\/eval\/run\.ts' \(src\/eval\/\), which src\/DEPS\.list does not allow \(it allows: nothing\)$/),
    expect.stringMatching(/^eval\/run\.ts: imports '\.\/index\.ts' \(src\/\), which src\/eval\/DEPS\.list does not allow \(it allows: text\.ts\)$/),
  ]);
});

test.describe('for a person changing the shape', () => {
  test('prints the circles and, per folder, the tightest DEPS.list that is true today (DEBUG_DEPS=1)', () => {
    test.skip(!process.env.DEBUG_DEPS, 'set DEBUG_DEPS=1 to print');
    console.log(JSON.stringify(importCircles(readGraph()), null, 1));
    const rules = readRules();
    const tightest = new Map<string, Set<string>>();
    for (const [file, edges] of readGraph()) {
      const from = folderOf(file, rules)!;
      const key = from === '.' ? file : from;
      for (const { target } of edges) {
        const to = folderOf(target, rules)!;
        if (to === from) continue;
        tightest.set(key, (tightest.get(key) ?? new Set()).add(to === '.' ? target : to));
      }
    }
    for (const [key, targets] of [...tightest].sort()) console.log(`${key}: ${[...targets].sort().join(' ')}`);
  });
});

