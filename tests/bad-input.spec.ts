import { existsSync, writeFileSync } from 'node:fs';
import { chromium } from '@playwright/test';
import { upvoteFirstPost } from '../src/sites/hn/suite.ts';
import { commandAgent } from '../src/agents/command.ts';
import { defineTask } from '../src/eval/tasks.ts';
import { ApprovalStore } from '../src/harness/approvals.ts';
import { functionAgent } from '../src/agents/function.ts';
import { resolveLayers } from '../src/layers/index.ts';
import { readCassette, resolveModelCache } from '../src/models/cassette.ts';
import { createModel } from '../src/models/registry.ts';
import { chromiumLaunchOptions } from '../src/playwright/chromium.ts';
import { checkUseKeys } from '../src/playwright/use-keys.ts';
import { evaluate } from '../src/eval/evaluate.ts';
import HarnessReporter from '../src/playwright/reporter.ts';
import { readSummary } from '../src/report/compare.ts';
import { summarize } from '../src/report/summarize.ts';
import { live } from '../src/sites/hn/live.ts';
import { recorded, recordedHn } from '../src/sites/hn/site.ts';
import { playwright } from './playwright-child.ts';
import { expect, attachedRunRecord, test } from './support.ts';

/**
 * The table of bad input in docs/audits.md, row by row: each thing a user can get wrong and the one line
 * they get for it. Rows that need a run or a browser follow the table. A command agent's program is
 * checked before each run (`prepare`), never when it is named: a spec file that names it keeps its tests.
 */
/** A file in the running test's output folder (the rows' thunks run inside tests). */
const file = (name: string, content: string) => (writeFileSync(test.info().outputPath(name), content), test.info().outputPath(name));

const table: Array<[string, () => unknown, RegExp]> = [
  ['a bad site option', () => recorded({ faults: { errorRate: 2 } }), /^hn replica options: faults\.errorRate: Too big: expected number to be <=1$/],
  ['an unknown layer', () => resolveLayers(['guardrails', 'telepathy' as never]), /^layers\[1\]: unknown layer "telepathy" \(accepted: guardrails, context, verify, login, retry, durable, stall, permissions, approval, risk, observations, evidence, budget, checkpoint, settle, output, code-mode, subroutines, stop-on-success, recovery, vision\)$/],
  ['a layer given as something else', () => resolveLayers([[42, {}] as never]), /^layers\[0\]: 0: Invalid input: expected string, received number$/],
  ['a bad layer option value', () => resolveLayers([['guardrails', { maxIterations: 0 }]]), /^layer guardrails: maxIterations: Too small/],
  ['an unknown layer option', () => resolveLayers([['retry', { tries: 3 }]]), /^layer retry: \(options\): Unrecognized key: "tries"$/],
  ['a bad reporter gate', () => new HarnessReporter({ gates: [{ layer: 'bare' } as never] }), /^harness-eval reporter options: gates\.0: Unrecognized key: "layer"$/],
  ['a bad cache mode in the config', () => resolveModelCache({ mode: 'yes' as never }, test.info().outputDir), /^modelCache: mode: Invalid option: expected one of "record"\|"replay"\|"off"$/],
  ['a bad HARNESS_MODEL_CACHE', () => resolveModelCache({}, test.info().outputDir, { HARNESS_MODEL_CACHE: 'yes' }), /^HARNESS_MODEL_CACHE: "yes" is not a cache mode \(accepted: record, replay, off\)$/],
  ['a model with no scheme', () => createModel('gpt-4o'), /^model: "gpt-4o" is not scheme:name \(accepted schemes: openai, ollama, scripted\)$/],
  ['an unknown model scheme', () => createModel('anthropic:claude'), /^model: unknown scheme "anthropic" in "anthropic:claude" \(accepted: openai, ollama, scripted\)$/],
  ['an unknown scripted double', () => createModel('scripted:genius'), /^model scripted:genius: unknown scripted double "genius" \(accepted: overclaimer, diligent, looper, injectable, iterator, programmer, looker, snapshot-overclaimer, snapshot-diligent\)$/],
  ['a missing API key', () => createModel('openai:gpt-4o-mini', {}), /^model openai:gpt-4o-mini: OPENAI_API_KEY is not set/],
  ['a bad sampling option', () => createModel({ id: 'ollama:llama3.1', temperature: 9 }), /^model: temperature: Too big/],
  ['a cassette that is not JSON', () => readCassette(file('truncated.json', '{"version": 1, "mod')), /truncated\.json: not a JSON object \(a corrupt cassette: delete it and re-record\)$/],
  ['a cassette with a wrong field', () => readCassette(file('wrong.json', '{"version": 1, "model": "openai:x", "run": "r", "interactions": [{"key": "abc", "request": {"path": "/", "body": {}}, "response": {"status": 200, "body": {}}}]}')), /wrong\.json: interactions\.0\.key: must be a sha256 in hex$/],
  ['CHROMIUM_PATH naming no file', () => chromiumLaunchOptions({ CHROMIUM_PATH: '/nowhere/chromium' }), /^CHROMIUM_PATH: no file at \/nowhere\/chromium$/],
  ['a baseline summary that is not there', () => readSummary(test.info().outputPath('last-night.json')), /last-night\.json: cannot read this summary\.json \(ENOENT\)$/],
  ['an unknown program for a command agent', () => commandAgent(['no-such-program', 'agent.py']).prepare!(), /^commandAgent: no-such-program: command not found$/],
  ['a command agent path that is not there', () => commandAgent(['./nowhere/agent.sh']).prepare!(), /^commandAgent: \.\/nowhere\/agent\.sh: no such file$/],
  ['a command agent file that is not executable', () => commandAgent([file('agent.sh', '#!/bin/sh\n')]).prepare!(), /^commandAgent: .*agent\.sh: not executable \(EACCES\)$/],
  ['a command agent cwd that is not a folder', () => commandAgent(['node'], { cwd: '/nowhere/at/all' }).prepare!(), /^commandAgent\(\) options: cwd: no folder at \/nowhere\/at\/all$/],
  ['a task with a postcondition that is not one', () => defineTask({ name: 'vote', prompt: 'Vote.', postconditions: [{ description: 'voted' } as never] }), /^task vote: postconditions\.0: expected a postcondition \{ description, judge\(evidence\), expects\(change, evidence\) \}$/],
  ['a task with an empty prompt', () => defineTask({ name: 'vote', prompt: '', postconditions: upvoteFirstPost.postconditions }), /^task vote: prompt: Too small: expected string to have >=1 characters$/],
  ['a NUL byte in a command agent argv', () => commandAgent(['node', 'agent\0.js']), /^commandAgent\(\) argv\[1\]: contains a NUL byte$/],
  ['a NUL byte in a command agent env value', () => commandAgent(['node'], { env: { KEY: 'a\0b' } }), /^commandAgent\(\) options: env\.KEY: contains a NUL byte$/],
  ['an "=" in a command agent env name', () => commandAgent(['node'], { env: { 'A=B': 'x' } }), /^commandAgent\(\) options: env\.A=B: its name contains "="$/],
  ['a command agent env name sh cannot set', () => commandAgent(['node'], { env: { 'my-key': 'x' } }), /^commandAgent\(\) options: env\.my-key: not a name sh can set \(letters, digits and _, not starting with a digit\)$/],
  ['a function agent that is not a function', () => functionAgent('agent' as never), /^functionAgent\(\): expected a function \(input\) => claim, got string$/],
  ['a corrupt approval request in the store', () => (file('store-x.request.json', '{"version": 1, "id'), new ApprovalStore(test.info().outputDir).requests()), /store-x\.request\.json: not a JSON object \(a corrupt approval request: delete it, and the run asks again\)$/],
  ['a baseline that is a partial run', () => new HarnessReporter({ baseline: file('interrupted.json', JSON.stringify(summarize([attachedRunRecord()], { complete: false, planned: 2, stopped: 'interrupted' }))) }), /^harness-eval reporter baseline \S+interrupted\.json: a partial summary \(interrupted; 1 of 2 planned runs not recorded\) is no baseline; compare with a whole run$/],
  ['hn.live() with no account', () => live().create(), /^hn\.live\(\): HN_USERNAME and HN_PASSWORD are not set$/],
  ['a misspelt option in use', () => checkUseKeys({ declared: new Set(['model']), options: ['model'], used: [] }, { modle: 'openai:gpt-4o-mini' }, '/'), /^use\.modle: not an option of Playwright, harness-eval or the test's fixtures; did you mean model\?$/],
];

for (const [what, attempt, message] of table) {
  test(`${what} is a one-line error`, () => {
    let error: unknown;
    try {
      attempt();
    } catch (thrown) {
      error = thrown;
    }
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toMatch(message);
    // One line, and nothing else printed with it: no stack.
    expect((error as Error).stack).toBe(`${(error as Error).name}: ${(error as Error).message}`);
    expect((error as Error).message).not.toContain('\n');
  });
}

test('a corrupt durable checkpoint fails the test in one line, not a run counted as failed', async ({ context }) => {
  const run = (content: string) =>
    evaluate({ context, site: recordedHn(), model: 'scripted:diligent', layers: [['durable', { file: file('run.json', content) }]], task: upvoteFirstPost });
  await expect(run('{"version": 1, "task": "Upvote')).rejects.toThrow(/run\.json: not a JSON object \(a corrupt durable checkpoint: delete it, and the run starts afresh\)$/);
  await expect(run(JSON.stringify({ version: 1, task: upvoteFirstPost.prompt, model: 'scripted:diligent', url: 'about:blank', cookies: [], run: { attempt: 1, iterations: -2 } }))).rejects.toThrow(
    /run\.json: run\.iterations: Too small: expected number to be >=0; run\.attemptIterations: Invalid input: expected number, received undefined;/,
  );
});

test('an unreachable model endpoint ends the run with model_error, naming the endpoint', async ({ context }) => {
  const unreachable = { OLLAMA_HOST: 'http://127.0.0.1:9', OPENAI_API_KEY: 'sk-unused', OPENAI_BASE_URL: 'http://127.0.0.1:9/v1' };
  for (const [id, summary] of [
    ['ollama:llama3.1', /^ollama: cannot reach http:\/\/127\.0\.0\.1:9 \(fetch failed\)$/],
    ['openai:gpt-4o-mini', /^openai: cannot reach http:\/\/127\.0\.0\.1:9\/v1 \(Connection error\.\)$/],
  ] as const) {
    const model = createModel({ id, maxRetries: 0 }, unreachable);
    const result = await evaluate({ context, site: recordedHn(), model, layers: [], task: upvoteFirstPost });
    expect(result).toMatchObject({ stopReason: 'model_error', claimed: false, falseSuccess: false });
    expect(result.summary).toMatch(summary);
  }
});

test('bad input fails before any page opens', async ({ context }) => {
  await expect(evaluate({ context, site: recordedHn(), model: 'scripted:nobody', layers: [], task: upvoteFirstPost })).rejects.toThrow(/unknown scripted double/);
  await expect(evaluate({ context, site: recordedHn(), model: 'scripted:looper', layers: ['nope' as never], task: upvoteFirstPost })).rejects.toThrow(/unknown layer/);
  expect(context.pages()).toHaveLength(0);
});

test('no Chromium anywhere is one line with the commands that install one', () => {
  test.skip(existsSync(chromium.executablePath()), "Playwright's own Chromium is installed here, and would be found");
  expect(() => chromiumLaunchOptions({}, [])).toThrow(
    /^No Chromium found\. Run `npx playwright install chromium`, or on Debian as root `apt-get install -y chromium`, or set CHROMIUM_PATH to a Chromium executable\.$/,
  );
});

test('a missing browser stops `npx playwright test` with that one line, no stack', async () => {
  const child = await playwright(['test', '--list'], { CHROMIUM_PATH: '/nowhere/chromium' });
  expect(child.code).not.toBe(0);
  expect(child.stdout).toContain('CHROMIUM_PATH: no file at /nowhere/chromium');
  expect(child.stdout).not.toMatch(/^\s+at /m);
});
