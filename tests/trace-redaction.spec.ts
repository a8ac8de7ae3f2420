import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from '@playwright/test';
import { redactZip } from '../src/playwright/trace-zip.ts';
import { playwright, workspace } from './playwright-child.ts';
import { expect, unzipText } from './support.ts';
import { zipSync, strToU8 } from 'fflate';

/**
 * Playwright's trace.zip under `--trace on`: the reporter rewrites it in the main process before
 * anything else reads it, so neither the session cookie (which no one outside the worker knows)
 * nor the password (which the main process knows, as HN_PASSWORD) is in it, in any form.
 */
test.describe.configure({ timeout: 300_000 });

const PASSWORD = 'trace-pw-7Q2x9KfL3';

const formsOf = (secret: string) => {
  const bytes = Buffer.from(secret);
  return [secret, encodeURIComponent(secret), new URLSearchParams({ v: secret }).toString().slice(2), bytes.toString('base64').slice(0, -4), bytes.toString('base64url').slice(0, -4), bytes.toString('hex'), bytes.toString('hex').toUpperCase()];
};

test('a trace.zip of a real browser run that logged in holds no session cookie value and no password', async () => {
  const { dir, env } = workspace('harness-eval-trace-');
  const child = await playwright(['test', '-c', 'tests/fixtures/bad-input/playwright.config.ts', 'trace.run.ts', '--trace', 'on'], { ...env, HN_PASSWORD: PASSWORD });
  expect(child.code, child.stdout).toBe(0);
  const sessions = JSON.parse(readFileSync(join(env.OUTPUT_DIR, 'session.json'), 'utf8')) as string[];
  // The login worked: the browser held the replica's session.
  expect(sessions.some((value) => /^harness&[0-9a-f]{40}$/.test(value)), sessions.join(', ')).toBe(true);
  const secrets = [PASSWORD, ...sessions.flatMap((value) => [value, value.slice(value.indexOf('&') + 1)])];

  const traces = readdirSync(env.OUTPUT_DIR, { recursive: true, encoding: 'utf8' }).filter((name) => name.endsWith('trace.zip'));
  expect(traces.length).toBeGreaterThan(0);
  let cookieHeaders = 0;
  for (const trace of traces) {
    const entries = unzipText(readFileSync(join(env.OUTPUT_DIR, trace)));
    expect([...entries.keys()].some((name) => name.endsWith('.network'))).toBe(true);
    for (const [name, text] of entries) {
      for (const secret of secrets) for (const form of formsOf(secret)) expect(text, `${trace}:${name} holds ${form}`).not.toContain(form);
      // Every cookie header the network log kept is there, its value replaced.
      for (const match of text.matchAll(/\{"name":"(cookie|set-cookie)","value":"([^"]*)"\}/gi)) {
        cookieHeaders += 1;
        expect(match[2]).toBe('[secret]');
      }
    }
  }
  expect(cookieHeaders).toBeGreaterThan(0);
  expect(dir).toBeTruthy();
});

test('redactZip: cookie headers and cookies are replaced wholesale, known secrets in any encoding, in zips inside zips', () => {
  const network = JSON.stringify({
    type: 'resource-snapshot',
    snapshot: {
      request: { url: 'https://news.ycombinator.com/news', headers: [{ name: 'Cookie', value: 'user=harness&abc123def456' }, { name: 'Accept', value: 'text/html' }], cookies: [{ name: 'user', value: 'harness&abc123def456' }] },
      response: { headers: [{ name: 'set-cookie', value: 'user=harness&abc123def456; Path=/' }], cookies: [] },
    },
  });
  const fill = JSON.stringify({ type: 'before', method: 'fill', params: { selector: 'input[name=pw]', value: `${Buffer.from('sk-known-key-123').toString('base64')}` } });
  const inner = zipSync({ 'x.trace': strToU8(JSON.stringify({ headers: { authorization: 'Bearer whatever-it-is' } })) });
  const zip = zipSync({ 'trace.network': strToU8(`${network}\n`), 'trace.trace': strToU8(`${fill}\n`), 'resources/body.txt': strToU8('acct=harness&pw=sk-known-key-123'), 'inner.zip': inner });
  const { bytes, changed } = redactZip(zip, ['sk-known-key-123']);
  expect(changed).toBe(true);
  const texts = [...unzipText(bytes).values()].join('\n');
  expect(texts).not.toContain('abc123def456');
  expect(texts).not.toContain('whatever-it-is');
  expect(texts).not.toContain('sk-known-key-123');
  expect(texts).not.toContain(Buffer.from('sk-known-key-123').toString('base64'));
  expect(texts).toContain('{"name":"Accept","value":"text/html"}');
  expect(redactZip(zipSync({ 'a.txt': strToU8('nothing here') }), ['sk-known-key-123']).changed).toBe(false);
  // A password no process knows (a spec's own account): typed into a password field, or posted in a form.
  const typed = JSON.stringify({ type: 'before', method: 'fill', params: { selector: 'input[name="pw"]', value: 'unknown-pass-99' } });
  const unknown = unzipText(redactZip(zipSync({ 't.trace': strToU8(typed), 'resources/post.dat': strToU8('acct=harness&pw=unknown-pass-99&goto=news') }), []).bytes);
  expect([...unknown.values()].join('\n')).not.toContain('unknown-pass-99');
  expect(unknown.get('resources/post.dat')).toBe('acct=harness&pw=[secret]&goto=news');
});
