import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { z } from 'zod';
import { redact } from '../harness/trace.ts';
import { InputError, parseInput, readJsonFile } from '../input.ts';
import { canonicalJson, parseJsonObject, writeFileAtomic } from '../text.ts';
import { handlersFetch } from './handlers-fetch.ts';

/**
 * Cassettes: a run's real model traffic (openai:, ollama:) recorded once, say nightly, and
 * replayed by msw later, so CI measures the same runs again for free and deterministically. A
 * replayed request that was not recorded fails the run, naming the cassette and the first message
 * that differs; it never reaches the network. A cassette holds request and response bodies with
 * secrets redacted, and never a header or a host: no API key or password can be in one.
 */

const jsonObject = z.record(z.string(), z.unknown());

const interactionSchema = z
  .object({
    /** sha256 of the request body (model, messages, tools, sampling options) as canonical JSON. */
    key: z.string().regex(/^[0-9a-f]{64}$/, 'must be a sha256 in hex'),
    request: z.object({ path: z.string(), body: jsonObject }).strict(),
    /** A JSON object, or the text of a body that was not one. */
    response: z.object({ status: z.int().min(100).max(599), body: z.union([jsonObject, z.string()]) }).strict(),
  })
  .strict();

const cassetteSchema = z
  .object({
    version: z.literal(1),
    model: z.string().min(1),
    /** The test that recorded it, for readers; its hash is in the file name. */
    run: z.string().optional(),
    interactions: z.array(interactionSchema),
  })
  .strict();

export type CassetteFile = z.infer<typeof cassetteSchema>;
type Interaction = CassetteFile['interactions'][number];
type RecordedRequest = Omit<Interaction, 'response'>;
type Body = Interaction['request']['body'];

export const modelCacheModes = ['record', 'replay', 'off'] as const;
export type ModelCacheMode = (typeof modelCacheModes)[number];
export const DEFAULT_CASSETTE_DIR = 'fixtures/cassettes';

const modelCacheOptionsSchema = z.object({ mode: z.enum(modelCacheModes).optional(), dir: z.string().min(1).optional() }).strict();
/** The `modelCache` option: whether to record or replay, and where cassettes live (relative to the config file's folder). */
export type ModelCacheOptions = z.input<typeof modelCacheOptionsSchema>;

/** The cache a run uses: the mode settled, the folder absolute. */
export interface ModelCache {
  mode: ModelCacheMode;
  dir: string;
}

/** The `modelCache` option with HARNESS_MODEL_CACHE over its mode, so one config can record nightly and replay in CI. */
export function resolveModelCache(options: ModelCacheOptions | undefined, baseDir: string, env: NodeJS.ProcessEnv = process.env): ModelCache {
  const { mode = 'off', dir = DEFAULT_CASSETTE_DIR } = parseInput(modelCacheOptionsSchema, options ?? {}, 'modelCache');
  const fromEnv = env.HARNESS_MODEL_CACHE || undefined;
  if (fromEnv !== undefined && !modelCacheModes.includes(fromEnv as ModelCacheMode)) {
    throw new InputError(`HARNESS_MODEL_CACHE: "${fromEnv}" is not a cache mode (accepted: ${modelCacheModes.join(', ')})`);
  }
  return { mode: (fromEnv as ModelCacheMode | undefined) ?? mode, dir: resolve(baseDir, dir) };
}

export interface CassetteOptions extends ModelCache {
  /** The model's id: `openai:gpt-4o-mini`. */
  model: string;
  /** What tells this run from others with the same first request (the fixture gives project › file › title). */
  run?: string;
  /** Playwright's repeatEachIndex: `--repeat-each 5` records five cassettes, and replays them. */
  repeatIndex?: number;
  /** Values never written to a cassette: API keys, the site password. */
  secrets?: readonly string[];
}

/** One run's cassette for one model: the fetch its provider uses, and why replay failed, if it did. */
export interface Cassette {
  readonly mode: 'record' | 'replay';
  readonly fetch: typeof fetch;
  /** The first request replay could not answer (a ReplayMissError), or the corrupt cassette it met: the run's caller throws it. */
  readonly failure: InputError | undefined;
}

/** A replayed request the cassette does not hold: the cassette is stale, which fails the test rather than the model. */
export class ReplayMissError extends InputError {
  override name = 'ReplayMissError';
}

/**
 * The run's cassette, or undefined when the cache is off. The file is
 * `<dir>/<model>/<first request's key, 16 hex>-<run's hash, 8 hex>-<repeat index>.json`
 * (no run part when the run has no name), so runs of different tests or repeats never share one.
 */
export function openCassette(options: CassetteOptions): Cassette | undefined {
  if (options.mode === 'off') return undefined;
  return options.mode === 'record' ? new CassetteRecorder(options) : new CassettePlayer(options);
}

/** Reads and checks a cassette: a corrupt one is one line naming the file and the field. */
export function readCassette(file: string): CassetteFile {
  return readJsonFile(file, cassetteSchema, 'cassette', { label: shown(file), remedy: 'delete it and re-record' });
}

/** Passes each request to the real endpoint and writes the cassette after every answer, so an interrupted run keeps what it got. */
class CassetteRecorder implements Cassette {
  readonly mode = 'record';
  readonly failure = undefined;
  private file: string | undefined;
  private readonly interactions: Interaction[] = [];

  constructor(private readonly options: CassetteOptions) {}

  readonly fetch: typeof fetch = async (input, init) => {
    const secrets = this.options.secrets ?? [];
    const request = new Request(input, init);
    const recorded = await readRequest(request.clone(), secrets);
    // Looked up per request, not captured, so a fetch patched later (msw in tests) is still seen.
    const response = await globalThis.fetch(request);
    const text = await response.clone().text();
    this.interactions.push({ ...recorded, response: { status: response.status, body: redact(parseJsonObject(text) ?? text, secrets) } });
    this.file ??= cassetteFile(this.options, recorded.key);
    const cassette: CassetteFile = { version: 1, model: this.options.model, run: this.options.run, interactions: this.interactions };
    mkdirSync(dirname(this.file), { recursive: true });
    writeFileAtomic(this.file, `${JSON.stringify(cassette, null, 2)}\n`);
    return response;
  };
}

/** Answers from the cassette the run's first request names, in recorded order; anything else is a miss. */
class CassettePlayer implements Cassette {
  readonly mode = 'replay';
  readonly fetch: typeof fetch;
  failure: InputError | undefined;
  private file: string | undefined;
  private recorded: Interaction[] | undefined;
  private position = 0;

  constructor(private readonly options: CassetteOptions) {
    // Each API's own error body, so its SDK reports the reason in its words.
    this.fetch = handlersFetch(
      ({ http }) => [
        http.post('*/chat/completions', ({ request }) => this.answer(request, (message) => ({ error: { message } }))),
        http.post('*/api/chat', ({ request }) => this.answer(request, (message) => ({ error: message }))),
      ],
      `recorded ${options.model} endpoint`,
    );
  }

  private async answer(request: Request, errorBody: (message: string) => object): Promise<Response> {
    try {
      return await this.replay(request);
    } catch (error) {
      if (!(error instanceof InputError)) throw error;
      this.failure ??= error;
      // A 400, which neither SDK retries: the run stops at once, with the reason in its trace.
      return Response.json(errorBody(error.message), { status: 400 });
    }
  }

  private async replay(request: Request): Promise<Response> {
    const now = await readRequest(request, this.options.secrets ?? []);
    if (this.file === undefined) {
      const file = cassetteFile(this.options, now.key);
      this.recorded = existsSync(file) ? readCassette(file).interactions : undefined;
      this.file = file;
    }
    const expected = this.recorded?.[this.position];
    if (expected?.key !== now.key) {
      throw new ReplayMissError(`replay miss for ${this.options.model}: ${this.explainMiss(now.request.body)} (re-record with HARNESS_MODEL_CACHE=record)`);
    }
    this.position += 1;
    const { status, body } = expected.response;
    return typeof body === 'string' ? new Response(body, { status }) : Response.json(body, { status });
  }

  private explainMiss(now: Body): string {
    const file = this.file!;
    if (!this.recorded) return `no cassette ${shown(file)}; ${this.closest(now)}`;
    const expected = this.recorded[this.position];
    if (!expected) return `${shown(file)} ends after ${this.recorded.length} requests, and the run made another`;
    return `${shown(file)}, interactions[${this.position}]: ${difference(expected.request.body, now) ?? 'its recorded key does not match its request'}`;
  }

  /** The model's cassette whose first request shares the most messages with this one, and where they part. */
  private closest(now: Body): string {
    const dir = modelDir(this.options);
    const files = existsSync(dir) ? readdirSync(dir).filter((name) => name.endsWith('.json')).sort() : [];
    let best: { file: string; body: Body; shared: number } | undefined;
    for (const name of files) {
      const file = join(dir, name);
      const first = readCassette(file).interactions[0];
      if (!first) continue;
      const shared = commonPrefix(messagesOf(first.request.body), messagesOf(now));
      if (!best || shared > best.shared) best = { file, body: first.request.body, shared };
    }
    if (!best) return `there are no cassettes for ${this.options.model} in ${shown(dir)}`;
    const parted = difference(best.body, now);
    return parted
      ? `the closest is ${shown(best.file)}, where ${parted}`
      : `the closest is ${shown(best.file)}, which starts with the same request (recorded by another test or repeat index)`;
  }
}

/** The request as a cassette holds it: the path only (a host can carry credentials), the body redacted, and its key. */
async function readRequest(request: Request, secrets: readonly string[]): Promise<RecordedRequest> {
  const body = redact(parseJsonObject(await request.text()) ?? {}, secrets);
  return { key: sha256(canonicalJson(body)), request: { path: new URL(request.url).pathname, body } };
}

function cassetteFile(options: CassetteOptions, firstKey: string): string {
  const runPart = options.run ? [sha256(options.run).slice(0, 8)] : [];
  return join(modelDir(options), `${[firstKey.slice(0, 16), ...runPart, options.repeatIndex ?? 0].join('-')}.json`);
}

function modelDir(options: CassetteOptions): string {
  return join(options.dir, options.model.replace(/[^\w.-]+/g, '-'));
}

/** Where two request bodies part: the first message that differs, else the first other field; undefined when they don't. */
function difference(recorded: Body, now: Body): string | undefined {
  const [before, after] = [messagesOf(recorded), messagesOf(now)];
  const at = commonPrefix(before, after);
  if (at < Math.max(before.length, after.length)) {
    const message = after[at] ?? before[at];
    const role = typeof message === 'object' && message !== null && 'role' in message ? String(message.role) : '?';
    return `messages[${at}] (${role}) differs: ${contrast(before[at], after[at])}`;
  }
  const fields = [...new Set([...Object.keys(recorded), ...Object.keys(now)])].sort();
  const field = fields.find((key) => canonicalJson(recorded[key]) !== canonicalJson(now[key]));
  return field && `${field} differs: ${contrast(recorded[field], now[field])}`;
}

/** Both sides from just before where they part, quoted on one line: `recorded "…", now "…"`. */
function contrast(recorded: unknown, now: unknown): string {
  const [textBefore, textAfter] = [contentOf(recorded), contentOf(now)];
  // Messages whose text differs are shown by their text, anything else as JSON.
  const [a, b] =
    textBefore !== undefined && textAfter !== undefined && textBefore !== textAfter
      ? [textBefore, textAfter]
      : [recorded === undefined ? undefined : canonicalJson(recorded), now === undefined ? undefined : canonicalJson(now)];
  let at = 0;
  while (a !== undefined && b !== undefined && at < a.length && a[at] === b[at]) at += 1;
  const from = Math.max(0, at - 30);
  const excerpt = (text: string | undefined) =>
    text === undefined ? '(none)' : JSON.stringify(`${from > 0 ? '…' : ''}${text.slice(from, from + 80)}${text.length > from + 80 ? '…' : ''}`);
  return `recorded ${excerpt(a)}, now ${excerpt(b)}`;
}

function contentOf(message: unknown): string | undefined {
  const content = typeof message === 'object' && message !== null && 'content' in message ? message.content : undefined;
  return typeof content === 'string' ? content : undefined;
}

function messagesOf(body: Body): unknown[] {
  return Array.isArray(body.messages) ? body.messages : [];
}

function commonPrefix(a: readonly unknown[], b: readonly unknown[]): number {
  let shared = 0;
  while (shared < Math.min(a.length, b.length) && canonicalJson(a[shared]) === canonicalJson(b[shared])) shared += 1;
  return shared;
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** A path as an error shows it: relative to the working folder when inside it. */
function shown(path: string): string {
  const inside = relative(process.cwd(), path);
  return inside && !inside.startsWith('..') ? inside : path;
}
