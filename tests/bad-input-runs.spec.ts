import { chmodSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { CLAIM_FILE_CAP_BYTES, commandAgent } from '../src/agents/command.ts';
import { TEXT_CHARS } from '../src/report/caps.ts';
import { functionAgent } from '../src/agents/function.ts';
import { answered } from '../src/eval/postconditions.ts';
import { defineTask } from '../src/eval/tasks.ts';
import { agentCondition } from '../src/playwright/condition.ts';
import { runAgent } from './support.ts';

/**
 * Bad input met at a run (a program that is not there, a claim written oddly or too big) and the
 * secrets a command agent can get at, in every encoding. Each test failed before its fix.
 */

/** A command agent that is `node -e script`. */
const script = (source: string, options: Parameters<typeof commandAgent>[1] = {}) => commandAgent([process.execPath, '-e', source], options);

test.describe('a program that is not there is bad input, never a run', () => {
  test('a program that was there when the agent was named, gone before the run: one line, before the run starts', async ({ context }, testInfo) => {
    const program = testInfo.outputPath('agent.sh');
    writeFileSync(program, '#!/bin/sh\nexit 0\n');
    chmodSync(program, 0o755);
    const agent = commandAgent([program]);
    unlinkSync(program);
    let started = false;
    const error = await runAgent(context, testInfo, agent, { onStart: async () => void (started = true) }).catch((thrown: unknown) => thrown as Error);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toBe(`commandAgent: ${program}: no such file`);
    expect((error as Error).stack).toBe(`InputError: commandAgent: ${program}: no such file`);
    // No start was announced: the reporter has nothing to count.
    expect(started).toBe(false);
    expect(context.pages()).toHaveLength(0);
  });
});

test('a program that cannot start once the run has started (its #! interpreter is not there): an InputError, not a run', async ({ context }, testInfo) => {
  const program = testInfo.outputPath('agent.sh');
  writeFileSync(program, '#!/no/such/interpreter\n');
  chmodSync(program, 0o755);
  let started = false;
  const error = await runAgent(context, testInfo, commandAgent([program]), { onStart: async () => void (started = true) }).catch((thrown: unknown) => thrown as Error);
  // It started (the fixture then takes its start back: tests/bad-input-fixture.spec.ts), and the run threw instead of returning a record.
  expect(started).toBe(true);
  expect((error as Error).stack).toBe(`InputError: commandAgent: ${program}: cannot start (ENOENT: the interpreter its #! line names is not there)`);
});

test.describe('claims are read leniently, and capped', () => {
  test('a claim file with a UTF-8 byte-order mark is read', async ({ context }, testInfo) => {
    const agent = script(`require('fs').writeFileSync(process.env.HARNESS_CLAIM_FILE, '\\uFEFF' + JSON.stringify({ success: false, summary: 'with a BOM' }))`);
    const { result } = await runAgent(context, testInfo, agent);
    expect(result).toMatchObject({ claimed: false, summary: 'with a BOM', stopReason: 'finished' });
  });

  test('an answer that is a number, a boolean or an object is kept as its JSON text, and 42 answers "42"', async ({ context }, testInfo) => {
    const question = defineTask({ name: 'six-times-seven', prompt: 'What is 6 × 7?', postconditions: [answered('42')] });
    const answering = (answer: unknown) => functionAgent(async () => ({ success: true, summary: 'answered', answer }) as never, { name: 'answers' });
    const number = await runAgent(context, testInfo, answering(42), { task: question });
    expect(number.result).toMatchObject({ answer: '42', claimed: true, actual: true, falseSuccess: false });
    const object = await runAgent(context, testInfo, answering({ value: 42 }), { task: question });
    expect(object.result).toMatchObject({ answer: '{"value":42}', claimed: true, actual: false, falseSuccess: true });
    const boolean = await runAgent(context, testInfo, answering(true), { task: question });
    expect(boolean.result).toMatchObject({ answer: 'true', actual: false });
  });

  test('a claim file past the cap is not read: the worst case, a claimed success; a flood of summary is cut, saying so', async ({ context }, testInfo) => {
    const flood = script(`require('fs').writeFileSync(process.env.HARNESS_CLAIM_FILE, JSON.stringify({ success: true, summary: 'x'.repeat(${CLAIM_FILE_CAP_BYTES} * 2) }))`);
    const big = await runAgent(context, testInfo, flood);
    expect(big.result).toMatchObject({ claimed: true, stopReason: 'finished' });
    expect(big.result.summary).toMatch(/^the claim file is \d+ bytes, past the cap of 1048576: not read, taken as a claimed success$/);
    const chatty = script(`require('fs').writeFileSync(process.env.HARNESS_CLAIM_FILE, JSON.stringify({ success: false, summary: 's'.repeat(50000), answer: 'a'.repeat(30000) }))`);
    const { result } = await runAgent(context, testInfo, chatty);
    expect(result.summary).toBe(`${'s'.repeat(TEXT_CHARS)}…[harness-eval: cut; 50,000 characters in all]`);
    expect(result.answer).toBe(`${'a'.repeat(TEXT_CHARS)}…[harness-eval: cut; 30,000 characters in all]`);
  });
});

test.describe('function agents', () => {
  test('two unnamed functions are two cells, named after their functions, the same in every worker', () => {
    const first = functionAgent(async () => ({ success: true, summary: 'one' }));
    const second = functionAgent(async () => ({ success: false, summary: 'two' }));
    expect(first.name).toBe('function-agent');
    expect(agentCondition(first)).not.toEqual(agentCondition(second));
    // The same function, named again (another worker loading the config): the same cell.
    const again = functionAgent(async () => ({ success: true, summary: 'one' }));
    expect(agentCondition(again)).toEqual(agentCondition(first));
    expect(functionAgent(async function reader() { return { success: true, summary: '' }; }).name).toBe('reader');
  });
});

test.describe('a command agent that prints its secrets, encoded', () => {
  test('the site password, the gateway token and the session cookie: no plain, URL, base64 (any alignment) or hex form reaches an attachment or the record', async ({ context }, testInfo) => {
    const source = `
const fs = require('fs'), path = require('path');
(async () => {
  const login = await fetch(process.env.HARNESS_SITE_URL + '/login', { method: 'POST', redirect: 'manual', body: new URLSearchParams({ acct: process.env.HARNESS_SITE_USERNAME, pw: process.env.HARNESS_SITE_PASSWORD, goto: 'news' }) });
  const cookie = login.headers.getSetCookie()[0].split(';')[0].split('=').slice(1).join('=');
  const told = { password: process.env.HARNESS_SITE_PASSWORD, token: process.env.OPENAI_API_KEY, cookie };
  // Spelt backwards: the copy-out cuts the run's secrets out of what it copies, as it knows them.
  const backwards = Object.fromEntries(Object.entries(told).map(([name, value]) => [name, [...value].reverse().join('')]));
  fs.writeFileSync(path.join(path.dirname(process.env.HARNESS_CLAIM_FILE), 'told.json'), JSON.stringify(backwards));
  for (const value of Object.values(told)) {
    const bytes = Buffer.from(value);
    console.log(value, bytes.toString('base64'), bytes.toString('base64url'), encodeURIComponent(value), new URLSearchParams({ v: value }).toString(), bytes.toString('hex'), bytes.toString('hex').toUpperCase());
    for (const before of ['', 'x', 'xy']) console.log(Buffer.from(before + 'Authorization: Bearer ' + value + '\\n').toString('base64'));
    console.error(Buffer.from('pw=' + value).toString('base64'));
  }
  fs.writeFileSync(process.env.HARNESS_CLAIM_FILE, JSON.stringify({ success: false, summary: 'token ' + Buffer.from(told.token).toString('base64') + ' cookie ' + encodeURIComponent(told.cookie) }));
})();`;
    const { result, attachments } = await runAgent(context, testInfo, script(source, { account: true }));
    const backwards = JSON.parse(readFileSync(join(testInfo.outputPath('run'), 'told.json'), 'utf8')) as Record<string, string>;
    const told = Object.fromEntries(Object.entries(backwards).map(([name, value]) => [name, [...value].reverse().join('')]));
    expect(told.token).toMatch(/.{8}/);
    expect(told.cookie).toMatch(/&[0-9a-f]{40}$/);
    const stdout = attachments.get('agent-stdout.txt')!;
    const everything = [stdout, attachments.get('agent-stderr.txt')!, JSON.stringify(result)].join('\n');
    expect(stdout).toContain('[secret]');
    for (const [what, value] of Object.entries(told)) {
      const bytes = Buffer.from(value);
      const forms = [value, bytes.toString('base64').slice(0, -4), bytes.toString('base64url').slice(0, -4), encodeURIComponent(value), new URLSearchParams({ v: value }).toString().slice(2), bytes.toString('hex'), bytes.toString('hex').toUpperCase()];
      for (const form of forms) expect(everything, `${what} as ${form}`).not.toContain(form);
      // Every word of the output, read as base64: none decodes to the secret (an embedded one is broken up).
      for (const word of everything.split(/[\s"\\]+/)) {
        expect(Buffer.from(word, 'base64').toString('latin1'), `${what} in ${word}`).not.toContain(value);
        expect(Buffer.from(word, 'base64url').toString('latin1'), `${what} in ${word}`).not.toContain(value);
      }
    }
  });
});

test('a function agent that records the gateway token, encoded, and returns it: neither its trace nor its result holds it', async ({ context }, testInfo) => {
  let token = '';
  const agent = functionAgent(
    async ({ model, trace }) => {
      token = model.apiKey;
      trace.record('my key', { base64: Buffer.from(token).toString('base64'), hex: Buffer.from(token).toString('hex') });
      return { success: false, summary: `key ${encodeURIComponent(token)}`, answer: Buffer.from(`Bearer ${token}`).toString('base64') };
    },
    { name: 'key-leaker' },
  );
  const { result } = await runAgent(context, testInfo, agent);
  expect(token.length).toBeGreaterThan(8);
  const text = JSON.stringify(result);
  for (const form of [token, Buffer.from(token).toString('base64').slice(0, -4), Buffer.from(token).toString('hex'), encodeURIComponent(token)]) expect(text).not.toContain(form);
  expect(result.trace).toContainEqual(expect.objectContaining({ type: 'custom', name: 'my key', data: { base64: expect.stringMatching(/^\[secret\]/), hex: '[secret]' } }));
});
