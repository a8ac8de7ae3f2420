import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join, relative, resolve } from 'node:path';
import { test } from '@playwright/test';
import type { Summary } from '../src/report/types.ts';
import { collect, playwright, readSummary } from './playwright-child.ts';
import { blobWorkers, expect, serveScriptedOpenAI, unzipText } from './support.ts';

/**
 * The nightly path end to end, as a user runs it: playwright.nightly.config.ts against a real
 * OpenAI-compatible endpoint (a local server answering with the scripted doubles) in record mode,
 * then replayed sharded with no endpoint at all, merged and compared with the recorded baseline.
 * Then the secrets audit: every artifact those runs (and every project of the main job) left,
 * searched for the marker values they were given as the API key and the site password.
 */
test.describe.configure({ mode: 'serial', timeout: 300_000 });

// .ci/run gives the main job the same markers (it reads them from this file).
const { apiKey: API_KEY, password: PASSWORD } = JSON.parse(readFileSync(new URL('./fixtures/audit-markers.json', import.meta.url), 'utf8')) as { apiKey: string; password: string };
const MARKERS = [API_KEY, PASSWORD];
const MODELS = 'openai:overclaimer';

// Shared by the serial tests below, so not one test's output folder: a folder in the tests' output root.
const outputRoot = fileURLToPath(new URL('../test-results/tests/', import.meta.url));
mkdirSync(outputRoot, { recursive: true });
const workspace = mkdtempSync(join(outputRoot, 'nightly-'));
const paths = {
  cassettes: join(workspace, 'cassettes'),
  recorded: join(workspace, 'reports-recorded'),
  replayed: join(workspace, 'reports-replayed'),
  blobs: join(workspace, 'blobs'),
  testResults: join(workspace, 'test-results'),
  // The child's temporary folder, in the workspace, so the secrets audit searches whatever lands there.
  tmp: join(workspace, 'tmp'),
};
mkdirSync(paths.tmp);
const outputs: string[] = [];

/** A child Playwright with the markers as its key and password; its output is kept for the audit. */
async function run(args: string[], env: Record<string, string>) {
  const child = await playwright(args, { TMPDIR: paths.tmp, HN_PASSWORD: PASSWORD, HARNESS_MODELS: MODELS, HARNESS_CASSETTES: paths.cassettes, ...env });
  outputs.push(child.stdout);
  return child;
}

// One worker: CPU-bound offline runs gain nothing from a second on this lane, which has one core's share.
const nightly = (args: string[], env: Record<string, string>) => run(['test', '-c', 'playwright.nightly.config.ts', '--workers', '1', ...args], env);
/** Every file under `dir`; a browser's temporary file may go between the listing and the look. */
const files = (dir: string): string[] =>
  readdirSync(dir, { recursive: true, encoding: 'utf8' }).map((name) => join(dir, name)).filter((path) => statSync(path, { throwIfNoEntry: false })?.isFile());
/** A marker as an adversary could write it: plain, URL- and form-encoded, base64 (standard and url-safe, at each alignment in a longer stream) and hex. */
function encodedForms(marker: string): string[] {
  const bytes = Buffer.from(marker);
  const base64 = [0, 1, 2].flatMap((offset) => {
    const padded = Buffer.concat([Buffer.alloc(offset), bytes]);
    const middle = (encoded: string) => encoded.slice(Math.ceil((offset * 8) / 6), Math.floor(((offset + bytes.length) * 8) / 6));
    return [middle(padded.toString('base64')), middle(padded.toString('base64url'))];
  });
  return [...new Set([marker, encodeURIComponent(marker), new URLSearchParams({ v: marker }).toString().slice(2), bytes.toString('hex'), bytes.toString('hex').toUpperCase(), ...base64])];
}

/** The values of cookie headers and cookies in a trace entry's JSON lines that are not the redaction mark. */
function cookieValues(text: string): string[] {
  const values: string[] = [];
  const walk = (value: unknown): void => {
    if (Array.isArray(value)) return value.forEach(walk);
    if (value === null || typeof value !== 'object') return;
    const record = value as Record<string, unknown>;
    if (typeof record.name === 'string' && /^(cookie|set-cookie|authorization)$/i.test(record.name) && typeof record.value === 'string') values.push(record.value);
    if (Array.isArray(record.cookies)) for (const cookie of record.cookies) if (typeof (cookie as { value?: unknown })?.value === 'string') values.push((cookie as { value: string }).value);
    Object.values(record).forEach(walk);
  };
  for (const line of text.split('\n')) {
    try {
      walk(JSON.parse(line));
    } catch {
      // Not a JSON line (a resource): searched for the markers above.
    }
  }
  return values.filter((value) => value !== '[secret]' && value !== '');
}

/** What a cell's runs came to, without the timings a replay cannot reproduce. */
const outcomes = (summary: Summary) =>
  summary.cells.map(({ model, layers, runs, successes, claimed, falseSuccesses, iterations }) => ({ model, layers, runs, successes, claimed, falseSuccesses, iterations: iterations.mean }));

test('record: the nightly matrix against a real endpoint writes a cassette per run and the summary', async () => {
  const endpoint = await serveScriptedOpenAI();
  try {
    const result = await nightly(['--repeat-each', '2', '--trace', 'on', '--output', paths.testResults], {
      OPENAI_API_KEY: API_KEY,
      OPENAI_BASE_URL: endpoint.baseURL,
      HARNESS_MODEL_CACHE: 'record',
      HARNESS_REPORT_DIR: paths.recorded,
    });
    expect(result.code, result.stdout).toBe(0);
    // The key was sent, as a real provider needs it.
    expect(endpoint.authorizations.length).toBeGreaterThan(8);
    expect(new Set(endpoint.authorizations)).toEqual(new Set([`Bearer ${API_KEY}`]));
  } finally {
    await endpoint.close();
  }
  const summary = readSummary(paths.recorded);
  expect(summary.totals.runs).toBe(8);
  expect(summary.cells).toHaveLength(4);
  const cell = (model: string, layers: string) => summary.cells.find((entry) => entry.model === model && entry.layers === layers)!;
  // Both sides of the demonstration, with a real provider in the loop.
  expect(cell('openai:overclaimer', 'bare')).toMatchObject({ runs: 2, falseSuccesses: 2 });
  expect(cell('openai:overclaimer', 'verified+login')).toMatchObject({ runs: 2, successes: 2, falseSuccesses: 0 });
  expect(files(paths.cassettes).filter((path) => path.endsWith('.json'))).toHaveLength(8);
  // A worker (and its browser) serves any cell: one per repeat index, where a project per cell
  // started one for each cell and repeat, 8 here. The blob report's test events name their worker.
  const workers = blobWorkers(join(paths.recorded, 'blob'));
  expect(workers).toHaveLength(8);
  expect(new Set(workers).size).toBe(2);
});

test('replay: sharded with no endpoint and no key, merged, the same outcomes as recorded and no cell flagged', async () => {
  for (const shard of ['1/2', '2/2']) {
    const result = await nightly(['--repeat-each', '2', `--shard=${shard}`, '--output', paths.testResults], {
      HARNESS_MODEL_CACHE: 'replay',
      HARNESS_REPORT_DIR: join(workspace, `reports-shard-${shard[0]}`),
      PLAYWRIGHT_BLOB_OUTPUT_FILE: join(paths.blobs, `report-${shard[0]}.zip`),
    });
    expect(result.code, result.stdout).toBe(0);
    expect(result.stdout).not.toMatch(/skipped/);
  }
  const merged = await run(['merge-reports', '-c', 'playwright.nightly.config.ts', paths.blobs], {
    HARNESS_REPORT_DIR: paths.replayed,
    HARNESS_BASELINE: join(paths.recorded, 'summary.json'),
  });
  expect(merged.code, merged.stdout).toBe(0);
  expect(outcomes(readSummary(paths.replayed))).toEqual(outcomes(readSummary(paths.recorded)));
  expect(merged.stdout).toContain('4 cells compared, 0 flagged');
});

test('audit: neither the API key nor the site password is in any artifact or output, of every project of the main job', async () => {
  test.setTimeout(900_000);
  // The main job, every project of it (the matrix, the classic experiment, the layers' specs with
  // their checkpoints, durable files and login handler, the by-hand baseline), with both secrets
  // set. It writes its reports where it always does: the checkout's reports/, searched with the rest.
  // CI runs the main job once, with the markers, --trace on and its temporary folder in the folder
  // HARNESS_AUDIT_MAIN_JOB (report.json, output.log, tmp/): those very artifacts are searched.
  const ciMainJob = process.env.HARNESS_AUDIT_MAIN_JOB;
  const mainResults = ciMainJob ? join(ciMainJob, 'report.json') : join(workspace, 'main-results.json');
  if (ciMainJob) outputs.push(readFileSync(join(ciMainJob, 'output.log'), 'utf8'));
  else {
    const main = await run(['test', '--workers', '2', '--trace', 'on', '--output', paths.testResults], { OPENAI_API_KEY: API_KEY, PLAYWRIGHT_JSON_OUTPUT_NAME: mainResults });
    expect(main.code, main.stdout).toBe(0);
  }
  const report = JSON.parse(readFileSync(mainResults, 'utf8')) as { suites: unknown[] };
  const results = collect(report).filter(({ result }) => result.status !== 'skipped');
  // The main job is one project; each folder of specs/ is a part of it (the matrix's cells, the
  // classic experiment, the layers' specs, …): every folder the config runs ran.
  const ran = new Set(results.map(({ file }) => file.split('/')[0]));
  const folders = readdirSync('specs', { withFileTypes: true }).filter((entry) => entry.isDirectory() && entry.name !== 'matrix').map((entry) => entry.name);
  expect(folders.filter((folder) => !ran.has(folder))).toEqual([]);
  expect(results.length).toBeGreaterThan(20);

  const mainReports = resolve('reports');
  const artifacts = [...files(workspace), ...files(mainReports), ...(ciMainJob ? [...files(ciMainJob), ...files(resolve('test-results/specs'))] : [])];
  const kinds = {
    'trace.zip': artifacts.filter((path) => path.endsWith('trace.zip')).length,
    'blob reports': readdirSync(paths.blobs).length,
    cassettes: files(paths.cassettes).length,
    checkpoints: artifacts.filter((path) => /checkpoint-\d+-\d+\.json$/.test(path)).length,
    'allure results': files(join(paths.recorded, 'allure-results')).length,
    'summaries and html reports': artifacts.filter((path) => /summary\.(json|md)$|\.html$/.test(path)).length,
    "the main job's reports": files(mainReports).length,
  };
  // Every kind of artifact is there to search: a search of nothing finds nothing.
  for (const [kind, count] of Object.entries(kinds)) expect(count, kind).toBeGreaterThan(0);

  const texts = new Map<string, string>(outputs.map((output, index) => [`child output ${index + 1}`, output]));
  for (const path of artifacts) {
    const name = path.startsWith(mainReports) ? relative(process.cwd(), path) : relative(workspace, path);
    if (path.endsWith('.zip')) for (const [entry, text] of unzipText(readFileSync(path))) texts.set(`${name}:${entry}`, text);
    else if (existsSync(path)) texts.set(name, readFileSync(path, 'latin1'));
  }
  const forms = MARKERS.flatMap(encodedForms);
  const found = [...texts].flatMap(([name, text]) => forms.filter((form) => text.includes(form)).map((form) => `${name}: ${form}`));
  // A session cookie's value is made during a run, so no marker can name it: every cookie header and
  // cookie a trace.zip's network log or events kept must hold the redaction mark, never a value.
  const cookies = [...texts].filter(([name]) => /\.zip:.*\.(network|trace)$/.test(name)).flatMap(([name, text]) => cookieValues(text).map((value) => `${name}: a cookie ${value.slice(0, 6)}…`));
  console.log(`secrets audit: ${texts.size} files and outputs searched (${Object.entries(kinds).map(([kind, count]) => `${count} ${kind}`).join(', ')}); secrets found: ${found.length}; cookie values in traces: ${cookies.length}`);
  expect(found).toEqual([]);
  expect(cookies).toEqual([]);
});
