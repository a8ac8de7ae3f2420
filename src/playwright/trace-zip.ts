import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { unzipSync, zipSync, type Zippable } from 'fflate';
import { redactText, redactValue, SECRET_MARK } from '../harness/redact.ts';

/**
 * Playwright's trace.zip (`--trace on`) records what a secret-blind recorder sees: every network
 * entry with its `cookie` and `set-cookie` headers (the replica's session; on the live site a real
 * account's), `authorization` headers, `addCookies` calls, and `fill` values. The reporter rewrites
 * each test's trace before anything else reads it: the values of those headers and every cookie's
 * value are replaced wholesale (no need to know the session), and every secret the main process
 * knows (API keys, the site's password) is redacted in every encoding, in every entry.
 */

/** Headers whose values are credentials, whatever they hold. */
const CREDENTIAL_HEADERS = new Set(['cookie', 'set-cookie', 'authorization', 'proxy-authorization', 'x-api-key', 'api-key']);

/** Entries holding JSON lines (events, network entries); anything else is redacted as text. */
const JSON_LINES = /\.(trace|network)$/;

/** A selector or field name that is a password's (`input[name="pw"]`, `#password`): what is typed there is a secret, whoever's. */
const PASSWORD_FIELD = /pass(word|wd)?\b|\bpw\b|pwd|secret|token|api[-_]?key/i;
/** A password in a form-encoded body (`acct=me&pw=…`). */
const PASSWORD_PARAM = /(^|[&?\s])(pw|pwd|pass|passwd|password)=[^&\s"]*/gi;

/** The value with credential headers and cookies' values replaced: `{ name: 'cookie', value }`, `cookies: [{ name, value }]`; a `fill` into a password field too. */
export function withoutCredentials(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutCredentials);
  if (value === null || typeof value !== 'object') return value;
  const entries = Object.entries(value as Record<string, unknown>).map(([key, item]): [string, unknown] => {
    if (key === 'cookies' && Array.isArray(item)) return [key, item.map((cookie) => (cookie && typeof cookie === 'object' && 'value' in cookie ? { ...withoutCredentials(cookie) as object, value: SECRET_MARK } : withoutCredentials(cookie)))];
    return [key, withoutCredentials(item)];
  });
  const out = Object.fromEntries(entries) as Record<string, unknown>;
  // An action typing into a password field (`fill`, `type`, `pressSequentially`): its value, whatever it is.
  const params = out.params as Record<string, unknown> | undefined;
  if (params && typeof params === 'object' && typeof params.selector === 'string' && PASSWORD_FIELD.test(params.selector)) {
    for (const key of ['value', 'text']) if (typeof params[key] === 'string') out.params = { ...params, [key]: SECRET_MARK };
  }
  if (typeof out.name === 'string' && typeof out.value === 'string' && CREDENTIAL_HEADERS.has(out.name.toLowerCase())) out.value = SECRET_MARK;
  // A header map ({ cookie: '…' }) as some events carry them.
  for (const key of Object.keys(out)) if (CREDENTIAL_HEADERS.has(key.toLowerCase()) && typeof out[key] === 'string') out[key] = SECRET_MARK;
  return out;
}

function withoutPasswordParams(text: string): string {
  return text.replace(PASSWORD_PARAM, (_match, before: string, name: string) => `${before}${name}=${SECRET_MARK}`);
}

function redactLines(text: string, secrets: readonly string[]): string {
  return text
    .split('\n')
    .map((line) => {
      if (line.trim() === '') return line;
      let parsed: unknown;
      try {
        parsed = JSON.parse(line);
      } catch {
        return redactText(line, secrets);
      }
      return withoutPasswordParams(JSON.stringify(redactValue(withoutCredentials(parsed), secrets)));
    })
    .join('\n');
}

/** An entry's bytes, redacted: as UTF-8 text when it is text, else byte for byte (latin1), which finds any ASCII secret in a binary. */
function redactEntry(name: string, bytes: Uint8Array, secrets: readonly string[]): Uint8Array {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const utf8 = buffer.toString('utf8');
  const isText = Buffer.byteLength(utf8, 'utf8') === buffer.length && !utf8.includes('\uFFFD');
  if (JSON_LINES.test(name) && isText) return Buffer.from(redactLines(utf8, secrets), 'utf8');
  const text = isText ? utf8 : buffer.toString('latin1');
  const redacted = withoutPasswordParams(redactText(text, secrets));
  return redacted === text ? bytes : Buffer.from(redacted, isText ? 'utf8' : 'latin1');
}

/** A zip's bytes with every entry redacted (zips inside it too); the same bytes when nothing changed. */
export function redactZip(zip: Uint8Array, secrets: readonly string[]): { bytes: Uint8Array; changed: boolean } {
  const entries = unzipSync(zip);
  let changed = false;
  const out: Zippable = {};
  for (const [name, bytes] of Object.entries(entries)) {
    const redacted = name.endsWith('.zip') ? redactZip(bytes, secrets).bytes : redactEntry(name, bytes, secrets);
    if (redacted !== bytes && !Buffer.from(redacted).equals(Buffer.from(bytes))) changed = true;
    out[name] = redacted;
  }
  return changed ? { bytes: zipSync(out, { level: 6 }), changed } : { bytes: zip, changed };
}

/** Rewrites the trace.zip at `path` in place (atomically), redacted; a file that is not a zip is left as it is and named. */
export function redactTraceFile(path: string, secrets: readonly string[]): { changed: boolean; error?: string } {
  let zip: Buffer;
  try {
    zip = readFileSync(path);
  } catch (error) {
    return { changed: false, error: `${path}: cannot read it (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})` };
  }
  let result: { bytes: Uint8Array; changed: boolean };
  try {
    result = redactZip(zip, secrets);
  } catch (error) {
    return { changed: false, error: `${path}: not a zip (${(error as Error).message.split('\n')[0]})` };
  }
  if (!result.changed) return { changed: false };
  const temporary = `${path}.redacting`;
  writeFileSync(temporary, result.bytes);
  renameSync(temporary, path);
  return { changed: true };
}
