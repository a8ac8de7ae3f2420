import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { expect, test } from '@playwright/test';
import { http, HttpResponse } from 'msw';
import { upvoteFirstPost } from '../src/sites/hn/suite.ts';
import { InputError } from '../src/input.ts';
import { openCassette, readCassette, ReplayMissError, resolveModelCache, type Cassette, type ModelCacheMode } from '../src/models/cassette.ts';
import { createModel, modelUnavailable } from '../src/models/registry.ts';
import { SCRIPTED_BASE_URL, scriptedFetch } from '../src/models/scripted/endpoint.ts';
import type { ChatMessage, Model } from '../src/models/types.ts';
import { evaluate } from '../src/eval/evaluate.ts';
import { test as harnessTest } from '../src/playwright/fixtures.ts';
import { recorded, recordedHn } from '../src/sites/hn/site.ts';
import { mswServer } from './support.ts';

const API_KEY = 'sk-test-MARKER-cassette-123';
const PASSWORD = 'site-password-MARKER-42';
const OPENAI_URL = 'https://api.openai.com/v1/chat/completions';
const OLLAMA_HOST = 'http://ollama.example.test:11434';
const RUN = 'cassettes.spec.ts › a run';

const server = mswServer();

type WireMessage = { role: string; content: string };
const reply = (body: { messages: WireMessage[] }) => `heard ${body.messages.length}: ${body.messages.at(-1)!.content}`;

/** The real endpoints' stand-ins: each answers with what it heard, and keeps the authorization header it got. */
function standIns(): (string | null)[] {
  const authorizations: (string | null)[] = [];
  server.use(
    http.post(OPENAI_URL, async ({ request }) => {
      authorizations.push(request.headers.get('authorization'));
      const body = (await request.json()) as { messages: WireMessage[] };
      return HttpResponse.json({
        id: 'chatcmpl-test',
        object: 'chat.completion',
        created: 1_700_000_000,
        model: 'gpt-test',
        choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: reply(body) } }],
        usage: { prompt_tokens: 10, completion_tokens: 3, total_tokens: 13 },
      });
    }),
    http.post(`${OLLAMA_HOST}/api/chat`, async ({ request }) => {
      authorizations.push(request.headers.get('authorization'));
      const body = (await request.json()) as { messages: WireMessage[] };
      return HttpResponse.json({ model: 'llama-test', created_at: '2025-01-01T00:00:00Z', message: { role: 'assistant', content: reply(body) }, done: true, done_reason: 'stop', prompt_eval_count: 10, eval_count: 3 });
    }),
  );
  return authorizations;
}

const providers = [
  { id: 'openai:gpt-test', slug: 'openai-gpt-test', path: '/v1/chat/completions' },
  { id: 'ollama:llama-test', slug: 'ollama-llama-test', path: '/api/chat' },
];
const env = { OPENAI_API_KEY: API_KEY, OLLAMA_HOST };

const cassette = (mode: ModelCacheMode, dir: string, model: string, repeatIndex = 0): Cassette =>
  openCassette({ mode, dir, model, run: RUN, repeatIndex, secrets: [API_KEY, PASSWORD] })!;

const question: ChatMessage[] = [
  { role: 'system', content: 'You browse Hacker News.' },
  { role: 'user', content: `Upvote the first post. The site password is ${PASSWORD}.` },
];
const followUp = (observation: string): ChatMessage[] => [
  ...question,
  { role: 'assistant', content: null, toolCalls: [{ id: 'call_1', name: 'get_stories', arguments: '{}' }] },
  { role: 'tool', toolCallId: 'call_1', name: 'get_stories', content: observation },
];
const OBSERVATION = '{"stories":[{"rank":1,"id":"46194762","title":"A story"}]}';

/** Two model calls, as a run makes them: the answers' texts. */
async function talk(model: Model, observation = OBSERVATION): Promise<(string | null)[]> {
  const first = await model.chat({ messages: question, tools: [] });
  const second = await model.chat({ messages: followUp(observation), tools: [] });
  return [first.message.content, second.message.content];
}

function cassetteFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.json'))
    .sort();
}

async function rejection(answer: Promise<unknown>): Promise<Error> {
  const error = await answer.then(() => undefined, (error: unknown) => error);
  expect(error).toBeInstanceOf(Error);
  return error as Error;
}

const shown = (path: string) => relative(process.cwd(), path);
const RERECORD = '(re-record with HARNESS_MODEL_CACHE=record)';

for (const provider of providers) {
  test.describe(provider.id, () => {
    test('record passes through and writes one file per run, named by its first request, with no key, header or password', async ({}, testInfo) => {
      const dir = testInfo.outputPath('cassettes');
      const authorizations = standIns();
      const runs = [cassette('record', dir, provider.id, 0), cassette('record', dir, provider.id, 1)];
      for (const run of runs) {
        expect(await talk(createModel(provider.id, env, run))).toEqual(['heard 2: ' + question[1]!.content, `heard 4: ${OBSERVATION}`]);
        expect(run.failure).toBeUndefined();
      }
      if (provider.id.startsWith('openai:')) expect(authorizations).toContain(`Bearer ${API_KEY}`);

      const runHash = createHash('sha256').update(RUN).digest('hex').slice(0, 8);
      const files = cassetteFiles(dir);
      expect(files).toHaveLength(2);
      for (const [index, name] of files.entries()) {
        expect(name).toMatch(new RegExp(`^${provider.slug}/[0-9a-f]{16}-${runHash}-${index}\\.json$`));
        const text = readFileSync(join(dir, name), 'utf8');
        for (const secret of [API_KEY, PASSWORD, 'authorization', 'Bearer', 'example.test']) expect(text.toLowerCase()).not.toContain(secret.toLowerCase());
        const recording = readCassette(join(dir, name));
        expect(name).toContain(recording.interactions[0]!.key.slice(0, 16));
        expect(recording).toMatchObject({ version: 1, model: provider.id, run: RUN });
        expect(recording.interactions.map((interaction) => interaction.request.path)).toEqual([provider.path, provider.path]);
        expect(recording.interactions.map((interaction) => interaction.response.status)).toEqual([200, 200]);
        const messages = recording.interactions[1]!.request.body.messages as WireMessage[];
        expect(messages[1]!.content).toBe('Upvote the first post. The site password is [secret].');
        expect(messages[3]!.content).toBe(OBSERVATION);
        expect(JSON.stringify(recording.interactions[1]!.response.body)).toContain(`heard 4: ${JSON.stringify(OBSERVATION).slice(1, -1)}`);
      }
    });

    test('replay answers the same with no endpoint, no network and no key or host', async ({}, testInfo) => {
      const dir = testInfo.outputPath('cassettes');
      standIns();
      const recordedAnswers = await talk(createModel(provider.id, env, cassette('record', dir, provider.id)));
      server.resetHandlers(); // no stand-ins left: a request that left the process would fail (onUnhandledRequest: 'error')

      const replay = cassette('replay', dir, provider.id);
      // The same answers, except a secret the endpoint echoed: it was never written down.
      expect(await talk(createModel(provider.id, {}, replay))).toEqual(recordedAnswers.map((answer) => answer!.replaceAll(PASSWORD, '[secret]')));
      expect(replay.failure).toBeUndefined();
    });

    test('a changed message is a miss naming the cassette and the first message that differs', async ({}, testInfo) => {
      const dir = testInfo.outputPath('cassettes');
      standIns();
      await talk(createModel(provider.id, env, cassette('record', dir, provider.id)));
      server.resetHandlers();
      const [file] = cassetteFiles(dir);

      const replay = cassette('replay', dir, provider.id);
      const changed = OBSERVATION.replace('A story', 'Another story');
      const error = await rejection(talk(createModel(provider.id, {}, replay), changed));
      const expected =
        `replay miss for ${provider.id}: ${shown(join(dir, file!))}, interactions[1]: messages[3] (tool) differs: ` +
        // Each side from 30 characters before where they part.
        `recorded "…\\":1,\\"id\\":\\"46194762\\",\\"title\\":\\"A story\\"}]}", ` +
        `now "…\\":1,\\"id\\":\\"46194762\\",\\"title\\":\\"Another story\\"}]}" ${RERECORD}`;
      expect(replay.failure).toBeInstanceOf(ReplayMissError);
      expect(replay.failure!.message).toBe(expected);
      // The model sees the miss as an error the SDK does not retry, with the same words.
      expect(error.message).toContain(expected);

      // A run that goes on past the recording misses too.
      const longer = cassette('replay', dir, provider.id);
      const model = createModel(provider.id, {}, longer);
      await talk(model);
      await rejection(model.chat({ messages: followUp(OBSERVATION), tools: [] }));
      expect(longer.failure!.message).toBe(`replay miss for ${provider.id}: ${shown(join(dir, file!))} ends after 2 requests, and the run made another ${RERECORD}`);
    });

    test('a run with no cassette names the one it looked for and the closest, or says there is none', async ({}, testInfo) => {
      const dir = testInfo.outputPath('cassettes');
      const none = cassette('replay', dir, provider.id);
      await rejection(talk(createModel(provider.id, {}, none)));
      expect(none.failure!.message).toMatch(
        new RegExp(`^replay miss for ${provider.id}: no cassette ${shown(dir)}/${provider.slug}/[0-9a-f]{16}-[0-9a-f]{8}-0\\.json; there are no cassettes for ${provider.id} in ${shown(dir)}/${provider.slug} \\(re-record with HARNESS_MODEL_CACHE=record\\)$`),
      );

      standIns();
      await talk(createModel(provider.id, env, cassette('record', dir, provider.id)));
      server.resetHandlers();
      const [file] = cassetteFiles(dir);
      const otherTask = cassette('replay', dir, provider.id);
      await rejection(createModel(provider.id, {}, otherTask).chat({ messages: [question[0]!, { role: 'user', content: 'Upvote the second post.' }], tools: [] }));
      expect(otherTask.failure!.message).toContain(
        `; the closest is ${shown(join(dir, file!))}, where messages[1] (user) differs: recorded "Upvote the first post. The site password is [secret].", now "Upvote the second post." ${RERECORD}`,
      );
    });

    test('a corrupt cassette is one line naming the file and the field', async ({}, testInfo) => {
      const dir = testInfo.outputPath('cassettes');
      standIns();
      await talk(createModel(provider.id, env, cassette('record', dir, provider.id)));
      server.resetHandlers();
      const file = join(dir, cassetteFiles(dir)[0]!);

      const recording = JSON.parse(readFileSync(file, 'utf8'));
      recording.interactions[0].response.status = 'OK';
      writeFileSync(file, JSON.stringify(recording));
      const wrongField = cassette('replay', dir, provider.id);
      await rejection(talk(createModel(provider.id, {}, wrongField)));
      expect(wrongField.failure).toBeInstanceOf(InputError);
      expect(wrongField.failure!.message).toMatch(new RegExp(`^${shown(file)}: interactions\\.0\\.response\\.status: [^\\n]+$`));

      writeFileSync(file, '{"version": 1, "interactions": [');
      const badJson = cassette('replay', dir, provider.id);
      await rejection(talk(createModel(provider.id, {}, badJson)));
      expect(badJson.failure!.message).toBe(`${shown(file)}: not a JSON object (a corrupt cassette: delete it and re-record)`);
    });
  });
}

test('scripted doubles are never recorded', async ({}, testInfo) => {
  const dir = testInfo.outputPath('cassettes');
  const record = cassette('record', dir, 'scripted:diligent');
  await createModel('scripted:diligent', {}, record).chat({ messages: question, tools: [] });
  expect(() => readdirSync(dir)).toThrow(/ENOENT/);
});

test('replayed models need no OPENAI_API_KEY and no OLLAMA_HOST, and are never skipped', () => {
  expect(modelUnavailable('openai:gpt-test', {}, 'replay')).toBeUndefined();
  expect(modelUnavailable('ollama:llama-test', {}, 'replay')).toBeUndefined();
  expect(modelUnavailable('openai:gpt-test', {}, 'record')).toBe('openai:gpt-test: OPENAI_API_KEY is not set');
  expect(() => createModel('openai:gpt-test', {}, cassette('replay', '/nowhere', 'openai:gpt-test'))).not.toThrow();
  expect(() => createModel('openai:gpt-test', {}, cassette('record', '/nowhere', 'openai:gpt-test'))).toThrow(/OPENAI_API_KEY is not set/);
});

test('HARNESS_MODEL_CACHE overrides the option; the folder is relative to the config; bad values are one line', () => {
  expect(resolveModelCache(undefined, '/project', {})).toEqual({ mode: 'off', dir: '/project/fixtures/cassettes' });
  expect(resolveModelCache({ mode: 'record', dir: 'tapes' }, '/project', {})).toEqual({ mode: 'record', dir: '/project/tapes' });
  expect(resolveModelCache({ mode: 'record' }, '/project', { HARNESS_MODEL_CACHE: 'replay' }).mode).toBe('replay');
  expect(resolveModelCache({ mode: 'replay' }, '/project', { HARNESS_MODEL_CACHE: 'off' }).mode).toBe('off');
  expect(resolveModelCache({ mode: 'replay' }, '/project', { HARNESS_MODEL_CACHE: '' }).mode).toBe('replay');
  expect(() => resolveModelCache({}, '/project', { HARNESS_MODEL_CACHE: 'sometimes' })).toThrow(
    new InputError('HARNESS_MODEL_CACHE: "sometimes" is not a cache mode (accepted: record, replay, off)'),
  );
  expect(() => resolveModelCache({ mode: 'save' as ModelCacheMode }, '/project', {})).toThrow(/^modelCache: mode: [^\n]+"record"\|"replay"\|"off"$/);
});

/** Runs `body` with these environment variables (undefined: unset), restoring them after. */
async function withEnv<T>(vars: Record<string, string | undefined>, body: () => Promise<T>): Promise<T> {
  const saved = Object.fromEntries(Object.keys(vars).map((name) => [name, process.env[name]]));
  const set = (values: Record<string, string | undefined>) => {
    for (const [name, value] of Object.entries(values)) if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  };
  set(vars);
  try {
    return await body();
  } finally {
    set(saved);
  }
}

const CACHE_DIR = '../test-results/tests/cassettes-fixture';
harnessTest.describe('through the harness fixture', () => {
  harnessTest.use({ model: 'openai:gpt-test', modelCache: { mode: 'replay', dir: CACHE_DIR }, site: recorded({ startLoggedIn: true }) });
  // The fixture skips a model it thinks cannot run: a replayed one must run.
  harnessTest.afterEach(({}, testInfo) => expect(testInfo.status).not.toBe('skipped'));

  harnessTest('a run recorded through evaluate replays in the browser with the same outcome, with no key', async ({ harness, context }, testInfo) => {
    // The real endpoint's stand-in: the diligent double, behind OpenAI's own URL.
    server.use(
      http.post(OPENAI_URL, async ({ request }) =>
        scriptedFetch(`${SCRIPTED_BASE_URL}/chat/completions`, { method: 'POST', body: JSON.stringify({ ...((await request.json()) as object), model: 'diligent' }) }),
      ),
    );
    const dir = resolve(dirname(testInfo.config.configFile!), CACHE_DIR);
    const site = recordedHn({ startLoggedIn: true });
    // The name the fixture gives this test's run.
    const run = [testInfo.project.name, ...testInfo.titlePath].filter(Boolean).join(' › ');
    const first = await withEnv({ OPENAI_API_KEY: API_KEY, OPENAI_BASE_URL: undefined }, () =>
      evaluate({ context, site, model: 'openai:gpt-test', layers: [], task: upvoteFirstPost, modelCache: { mode: 'record', dir, run, repeatIndex: testInfo.repeatEachIndex } }),
    );
    expect(first).toMatchObject({ claimed: true, actual: true, stopReason: 'finished' });
    server.resetHandlers();

    const files = cassetteFiles(dir).filter((name) => name.endsWith(`-${testInfo.repeatEachIndex}.json`));
    expect(files).toHaveLength(1);
    const text = readFileSync(join(dir, files[0]!), 'utf8');
    expect(text).not.toContain(site.account.password);
    expect(readCassette(join(dir, files[0]!)).interactions).toHaveLength(first.iterations);

    const again = await withEnv({ OPENAI_API_KEY: undefined, OPENAI_BASE_URL: undefined }, () => harness.run(upvoteFirstPost));
    const outcome = (record: typeof first) => ({
      claimed: record.claimed,
      actual: record.actual,
      iterations: record.iterations,
      stopReason: record.stopReason,
      calls: record.trace.flatMap((event) => (event.type === 'tool_call' ? [`${event.name} ${event.arguments}`] : [])),
    });
    expect(outcome(again)).toEqual(outcome(first));
  });

  harnessTest('a replay miss fails the run with the miss, not a model error', async ({ context }, testInfo) => {
    const dir = testInfo.outputPath('cassettes');
    const error = await rejection(
      evaluate({ context, site: recordedHn(), model: 'openai:gpt-test', layers: [], task: upvoteFirstPost, modelCache: { mode: 'replay', dir } }),
    );
    expect(error).toBeInstanceOf(ReplayMissError);
    expect(error.message).toMatch(/^replay miss for openai:gpt-test: no cassette .*openai-gpt-test\/[0-9a-f]{16}-0\.json; there are no cassettes/);
  });
});
