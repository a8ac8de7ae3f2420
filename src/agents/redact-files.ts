import { lstat, open, readdir, rename } from 'node:fs/promises';
import { SECRET_MARK, secretForms } from '../harness/redact.ts';
import { atMost } from '../queue.ts';

/**
 * What an agent left in its work folder, copied into its run's folder, with the run's secrets cut
 * out of every file, in every form redact.ts knows: an agent's own session files (a CLI's HOME)
 * hold its prompt, and the prompt the site login of its run. A file is read in chunks, never
 * whole (a folder may hold hundreds of megabytes), and rewritten only when a secret is in it.
 */

const CHUNK_BYTES = 1024 * 1024;
/** How many files are read at once. */
const FILES_AT_ONCE = 8;
const SLASH = Buffer.from('/');

/** Cuts every form of `secrets` out of each regular file of `paths` and the folders among them (links are never followed); answers how many files changed. */
export async function redactFiles(paths: readonly string[], secrets: readonly string[]): Promise<number> {
  const forms = [...new Set(secrets.filter((secret) => secret.length >= 4).flatMap((secret) => secretForms(secret)))].map((form) => Buffer.from(form, 'utf8')).sort((a, b) => b.length - a.length);
  if (forms.length === 0) return 0;
  let changed = 0;
  // A few files at once: each is several round trips to the thread pool; a folder is listed without holding a place, so nested ones cannot wait on each other.
  const pooled = atMost(FILES_AT_ONCE);
  // Paths as bytes: a name that is no UTF-8 (an agent's) is still reached.
  const visit = async (path: Buffer): Promise<void> => {
    const stat = await pooled(() => lstat(path).catch(() => undefined));
    if (stat?.isDirectory()) {
      const names = await pooled(() => readdir(path, { encoding: 'buffer' }).catch(() => []));
      await Promise.all(names.map((name) => visit(Buffer.concat([path, SLASH, name]))));
    } else if (stat?.isFile() && (await pooled(() => redactFile(path, forms)))) changed++;
  };
  await Promise.all(paths.map((path) => visit(Buffer.from(path))));
  return changed;
}

/** The first occurrence of any of `forms` in `bytes` from `from` on: where, and which (the longest, where two start together). */
function firstForm(bytes: Buffer, forms: readonly Buffer[], from: number): { at: number; form: Buffer } | undefined {
  let found: { at: number; form: Buffer } | undefined;
  for (const form of forms) {
    const at = bytes.indexOf(form, from);
    if (at !== -1 && (found === undefined || at < found.at)) found = { at, form };
  }
  return found;
}

/**
 * Streams `bytes` through, chunk by chunk: each chunk joined to the tail of the one before (as long
 * as the longest form, less one byte), every form found whole replaced, and the rest of the tail held for the next.
 */
function redactor(forms: readonly Buffer[]) {
  const keep = forms[0]!.length - 1;
  const mark = Buffer.from(SECRET_MARK);
  let carry = Buffer.alloc(0);
  let found = false;
  const cut = (bytes: Buffer, last: boolean): Buffer => {
    const out: Buffer[] = [];
    let from = 0;
    // A match must start where the rest of it is in `bytes`: one starting in the held tail is looked for with the next chunk.
    const limit = last ? bytes.length : Math.max(0, bytes.length - keep);
    for (let next = firstForm(bytes, forms, from); next && next.at < limit; next = firstForm(bytes, forms, from)) {
      found = true;
      out.push(bytes.subarray(from, next.at), mark);
      from = next.at + next.form.length;
    }
    const held = Math.max(from, limit);
    out.push(bytes.subarray(from, held));
    carry = Buffer.from(bytes.subarray(held));
    return Buffer.concat(out);
  };
  return {
    push: (chunk: Buffer) => cut(Buffer.concat([carry, chunk]), false),
    end: () => cut(carry, true),
    found: () => found,
  };
}

/** Whether a secret was in the file: then it is rewritten without (beside it, then renamed over it, its mode kept). */
async function redactFile(path: Buffer, forms: readonly Buffer[]): Promise<boolean> {
  if (!(await pass(path, forms, undefined))) return false;
  const { mode } = await lstat(path);
  const redacted = Buffer.concat([path, Buffer.from('.redacting')]);
  const target = await open(redacted, 'wx', mode & 0o777);
  try {
    await pass(path, forms, target);
  } finally {
    await target.close();
  }
  await rename(redacted, path);
  return true;
}

/** One pass over the file: whether a secret is in it, each redacted chunk written to `target` when given. */
async function pass(path: Buffer, forms: readonly Buffer[], target: Awaited<ReturnType<typeof open>> | undefined): Promise<boolean> {
  const source = await open(path, 'r');
  const cut = redactor(forms);
  try {
    const chunk = Buffer.allocUnsafe(CHUNK_BYTES);
    for (;;) {
      const { bytesRead } = await source.read(chunk, 0, CHUNK_BYTES, null);
      if (bytesRead === 0) break;
      const out = cut.push(chunk.subarray(0, bytesRead));
      if (target) await target.write(out);
    }
    const out = cut.end();
    if (target) await target.write(out);
  } finally {
    await source.close();
  }
  return cut.found();
}
