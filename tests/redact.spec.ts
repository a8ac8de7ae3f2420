import { expect, test } from '@playwright/test';
import { redact } from '../src/harness/trace.ts';
import { SECRET_MARK } from '../src/harness/redact.ts';
import { recordedHn } from '../src/sites/hn/site.ts';
import { sessionCookies } from '../src/sites/site.ts';

/**
 * redact(): the one place secrets are replaced (traces, attachments, reports, Allure, history,
 * trace.zip). An agent is an adversary: it may write a secret in any encoding, so every form
 * counts. Each case failed before redact() knew encodings (it replaced the plain form only).
 */
const SECRET = 'hunter2-pass+word/42 x';
const TOKEN = 'gw-3f9a1c2b7d4e5f60';

const b64 = (text: string | Buffer) => Buffer.from(text).toString('base64');
const b64url = (text: string | Buffer) => Buffer.from(text).toString('base64url');

const forms: Array<[string, string]> = [
  ['plain', SECRET],
  ['encodeURIComponent', encodeURIComponent(SECRET)],
  ['encodeURIComponent, lower-case escapes', encodeURIComponent(SECRET).replace(/%[0-9A-F]{2}/g, (e) => e.toLowerCase())],
  ['form encoding (+ for space)', new URLSearchParams({ pw: SECRET }).toString().slice(3)],
  ['encodeURIComponent with + for space', encodeURIComponent(SECRET).replace(/%20/g, '+')],
  ['base64', b64(SECRET)],
  ['base64url', b64url(SECRET)],
  ['hex', Buffer.from(SECRET).toString('hex')],
  ['HEX', Buffer.from(SECRET).toString('hex').toUpperCase()],
];

for (const [name, form] of forms) {
  test(`redact: the secret ${name} is replaced, in text and in a JSON value`, () => {
    const text = `before ${form} after`;
    expect(redact(text, [SECRET])).not.toContain(form);
    expect(redact(text, [SECRET])).toContain(SECRET_MARK);
    const value = { a: [text], [`key ${form}`]: 1 };
    expect(JSON.stringify(redact(value, [SECRET]))).not.toContain(form);
  });
}

for (const offset of [0, 1, 2, 3, 4, 5]) {
  for (const [name, encode] of [['base64', b64], ['base64url', b64url]] as const) {
    test(`redact: a secret inside a longer ${name} stream, starting at byte ${offset}, leaves none of its own characters`, () => {
      const prefix = Buffer.from('ABCDEFGH'.slice(0, offset));
      const stream = encode(Buffer.concat([prefix, Buffer.from(`Authorization: Bearer ${TOKEN}\r\n`)]));
      const redacted = redact(`data:${stream}`, [TOKEN]);
      expect(redacted).toContain(SECRET_MARK);
      // Whatever the alignment, the token's own characters (encoded at each of the three, ends trimmed) are gone.
      for (const align of [0, 1, 2]) {
        const own = encode(Buffer.concat([Buffer.alloc(align), Buffer.from(TOKEN)])).slice(3, -3);
        expect(redacted).not.toContain(own);
      }
    });
  }
}

test('redact: a JSON escape next to a secret stays valid (a replacement never cuts through one)', () => {
  const secret = 'nope1234';
  expect(redact({ text: `a\n${secret}` }, [secret])).toEqual({ text: `a\n${SECRET_MARK}` });
  expect(redact({ text: `say "${secret}"` }, [secret])).toEqual({ text: `say "${SECRET_MARK}"` });
});

test('redact: a secret with JSON-special characters, as written inside a JSON string', () => {
  const secret = 'pa"ss\\word';
  const args = JSON.stringify({ pw: secret });
  expect(redact(args, [secret])).toBe(`{"pw":"${SECRET_MARK}"}`);
});

test('redact: short values (under 4 characters) are not secrets; other text is left as it was', () => {
  expect(redact('abc abc', ['abc'])).toBe('abc abc');
  expect(redact({ n: 1, b: true, s: 'plain text', z: null }, [SECRET])).toEqual({ n: 1, b: true, s: 'plain text', z: null });
});

test("the replica's sessions are the site's secrets, from the moment it issues them", () => {
  const site = recordedHn();
  expect(site.secrets?.()).toEqual([]);
  const cookie = site.replica.state.login(site.account.username, site.account.password)!;
  expect(cookie).toMatch(/^harness&[0-9a-f]{40}$/);
  expect(site.secrets?.()).toEqual([cookie, cookie.slice(cookie.indexOf('&') + 1)]);
  expect(redact(`user=${encodeURIComponent(cookie)}`, site.secrets!())).toBe('user=[secret]');
});

test('sessionCookies(): every Set-Cookie value a site hands out, and its token after "&"', () => {
  const sessions = sessionCookies();
  const headers = new Headers();
  headers.append('set-cookie', 'user=someone&0123456789abcdef; Path=/; Secure');
  headers.append('set-cookie', 'flag=1');
  sessions.observe(new Response(null, { headers }));
  expect(sessions.secrets()).toEqual(['someone&0123456789abcdef', '0123456789abcdef']);
});
