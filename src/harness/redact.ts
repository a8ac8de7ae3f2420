/**
 * Secret values replaced in any text or JSON value, in every form an agent (an adversary) could
 * write them: plain; JSON-escaped; URL-encoded (encodeURIComponent, upper- or lower-case escapes,
 * and form encoding with `+`); base64, standard and url-safe, at each of the three alignments a
 * secret can have inside a longer base64 stream (the characters that depend on the secret's bytes
 * only); and hex, lower- and upper-case. One place: every caller (traces, attachments, reports,
 * Allure results, history, trace.zip) gets all of them.
 */

/** What a secret is replaced with. */
export const SECRET_MARK = '[secret]';

/** Shorter values are not secrets (and would match by chance): the same floor for every form. */
const MIN_SECRET = 4;
/** Encoded forms shorter than this match too easily by chance; the secret's plain form always counts. */
const MIN_FORM = 4;

const formsCache = new Map<string, readonly string[]>();

/** Every form of `secret` that counts as it, longest first. */
export function secretForms(secret: string): readonly string[] {
  const cached = formsCache.get(secret);
  if (cached) return cached;
  const bytes = Buffer.from(secret, 'utf8');
  const uri = encodeURIComponent(secret);
  const forms = new Set<string>([secret, JSON.stringify(secret).slice(1, -1)]);
  const encoded = [
    uri,
    lowerEscapes(uri),
    uri.replace(/%20/g, '+'),
    new URLSearchParams({ s: secret }).toString().slice(2),
    lowerEscapes(new URLSearchParams({ s: secret }).toString().slice(2)),
    bytes.toString('hex'),
    bytes.toString('hex').toUpperCase(),
    ...base64Forms(bytes),
  ];
  for (const form of encoded) if (form.length >= MIN_FORM) forms.add(form);
  const sorted = [...forms].sort((a, b) => b.length - a.length);
  if (formsCache.size > 256) formsCache.clear();
  formsCache.set(secret, sorted);
  return sorted;
}

/**
 * The base64 characters that depend on the secret's bytes alone, when it starts at byte 0, 1 or
 * 2 of a 3-byte group: whatever surrounds it in a longer stream, these characters are in it.
 */
function base64Forms(bytes: Buffer): string[] {
  const forms: string[] = [];
  for (const offset of [0, 1, 2]) {
    const padded = Buffer.concat([Buffer.alloc(offset), bytes]);
    const start = Math.ceil((offset * 8) / 6);
    const end = Math.floor(((offset + bytes.length) * 8) / 6);
    const standard = padded.toString('base64').slice(start, end);
    forms.push(standard, standard.replace(/\+/g, '-').replace(/\//g, '_'));
  }
  return forms;
}

function lowerEscapes(text: string): string {
  return text.replace(/%[0-9A-F]{2}/g, (escape) => escape.toLowerCase());
}

/** Every form of every secret long enough to count, each once: what a stream of bytes is cut by (agents/copy-out.ts). */
export function everyForm(secrets: readonly string[]): string[] {
  return [...new Set(secrets.filter((secret) => secret.length >= MIN_SECRET).flatMap((secret) => secretForms(secret)))];
}

/** `text` with every form of every secret replaced. */
export function redactText(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) {
    if (secret.length < MIN_SECRET) continue;
    for (const form of secretForms(secret)) if (out.includes(form)) out = out.split(form).join(SECRET_MARK);
  }
  return out;
}

/**
 * The value, as JSON, with every string (keys too) redacted: each string on its own, so a
 * replacement can never cut through a JSON escape.
 */
export function redactValue<T>(value: T, secrets: readonly string[]): T {
  const active = secrets.filter((secret) => secret.length >= MIN_SECRET);
  if (active.length === 0) return value;
  if (typeof value === 'string') return redactText(value, active) as T;
  const json = JSON.stringify(value);
  if (json === undefined) return value;
  return walk(JSON.parse(json), active) as T;
}

function walk(value: unknown, secrets: readonly string[]): unknown {
  if (typeof value === 'string') return redactText(value, secrets);
  if (Array.isArray(value)) return value.map((item) => walk(item, secrets));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [redactText(key, secrets), walk(item, secrets)]));
  }
  return value;
}
