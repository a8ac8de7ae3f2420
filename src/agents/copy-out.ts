import { constants } from 'node:fs';
import { lstat, mkdir, open, readdir } from 'node:fs/promises';
import type { EscapeAttempt } from '../core/agent.ts';
import { everyForm, SECRET_MARK } from '../harness/redact.ts';
import { atMost } from '../queue.ts';
import { PATH_MAX } from './sandbox-limits.ts';

/**
 * What an agent left in its work folder, copied into its run's folder once its sandbox ended, in
 * one pass: each file read once, in chunks (a folder may hold hundreds of megabytes), its copy
 * written with the run's secrets cut out in every form redact.ts knows. An agent's own session
 * files (a CLI's HOME) hold its prompt, and the prompt the site login of its run.
 */

/** A chunk as a file is copied: one that is all zeros is left a hole. */
const CHUNK_BYTES = 1024 * 1024;
/** How many files are copied at once. */
const FILES_AT_ONCE = 8;
const ZEROS = Buffer.alloc(CHUNK_BYTES);
const SLASH = Buffer.from('/');

/**
 * Copies the folders and regular files under `from` to `to`, never following a link (the agent
 * made them: a link could name any file the worker can read), up to `maxBytes` of their sizes in
 * all, never their setuid or setgid bits, every form of `secrets` cut out. A sparse file is copied
 * by the bytes it holds: its holes, and its runs of zeros, stay holes.
 * Names are taken as bytes (one that is not UTF-8 is copied too). It never throws: what it cannot
 * copy (a name past PATH_MAX, a special file, a link, a file past the limit, one it cannot read)
 * is skipped, and answered as an escape attempt per reason, naming the first such path.
 */
export async function copyOut(from: string, to: string, maxBytes: number, secrets: readonly string[]): Promise<EscapeAttempt[]> {
  // Longest first, in bytes: where two start together, the longer is cut (firstForm), and the longest sets what a chunk holds back.
  const forms = everyForm(secrets).map((form) => Buffer.from(form, 'utf8')).sort((a, b) => b.length - a.length);
  // A secret has no zero byte, so none spans a hole; were one to have one, holes would be written out rather than a cut missed.
  const holes = !forms.some((form) => form.includes(0));
  let left = maxBytes;
  const skipped = new Map<string, { first: string; more: number }>();
  const skip = (reason: string, path: Buffer) => {
    const seen = skipped.get(reason);
    if (seen) seen.more++;
    else skipped.set(reason, { first: path.toString('utf8'), more: 0 });
  };
  // Files at once, a few: each is several round trips to the thread pool, and one at a time they were most of a short run's end (bench:sandbox).
  const pooled = atMost(FILES_AT_ONCE);
  const walk = async (source: Buffer, target: Buffer, relative: Buffer): Promise<void> => {
    const entries = await pooled(() => readdir(source, { withFileTypes: true, encoding: 'buffer' }));
    await Promise.all(
      entries.map(async (entry) => {
        const { name } = entry;
        const [next, into, path] = [Buffer.concat([source, SLASH, name]), Buffer.concat([target, SLASH, name]), relative.length === 0 ? name : Buffer.concat([relative, SLASH, name])];
        try {
          if (Math.max(next.length, into.length) >= PATH_MAX) skip('a name past PATH_MAX', path);
          else if (entry.isSymbolicLink()) skip('a symbolic link', path);
          else if (entry.isDirectory()) {
            await pooled(() =>
              mkdir(into).catch((error: NodeJS.ErrnoException) => {
                if (error.code !== 'EEXIST') throw error;
              }),
            );
            await walk(next, into, path);
          } else if (!entry.isFile()) skip('a special file (a named pipe, a socket or a device)', path);
          else
            await pooled(async () => {
              const { size, mode } = await lstat(next);
              if (size > left) skip(`past the work folder's limit (${maxBytes} bytes)`, path);
              else {
                left -= size;
                await copyFile(next, into, size, mode, forms, holes);
              }
            });
        } catch (error) {
          skip(`a file it could not copy (${(error as NodeJS.ErrnoException).code ?? 'an error'})`, path);
        }
      }),
    );
  };
  try {
    await mkdir(to, { recursive: true });
    await walk(Buffer.from(from), Buffer.from(to), Buffer.alloc(0));
  } catch (error) {
    skip(`its work folder, which could not be read (${(error as NodeJS.ErrnoException).code ?? 'an error'})`, Buffer.from('.'));
  }
  return [...skipped].map(([reason, { first, more }]) => ({ kind: 'copy', detail: `${reason}, not copied: ${JSON.stringify(first.length > 100 ? `${first.slice(0, 100)}\u2026` : first)}${more > 0 ? ` and ${more} more` : ''}` }));
}

/**
 * A file's bytes, chunk by chunk, each form of a secret cut out: where `holes`, a chunk of zeros is
 * not written, so a sparse file's copy holds what it held. Its permissions, never its setuid, setgid
 * or sticky bits: the copy is the worker's (root's, in CI), and a setuid shell the agent left would
 * be a root shell on the host (fs.copyFile keeps every bit).
 */
async function copyFile(from: Buffer, to: Buffer, size: number, mode: number, forms: readonly Buffer[], holes: boolean): Promise<void> {
  const source = await open(from, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  try {
    const target = await open(to, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW, mode & 0o777);
    // An existing copy (a run before in the same folder) keeps its mode through O_CREAT: set it.
    await target.chmod(mode & 0o777);
    try {
      const cut = redactor(forms);
      const chunk = Buffer.allocUnsafe(CHUNK_BYTES);
      // Where the copy's next bytes go (a mark is not as long as what it replaces), and how far it is written: holes at its end are made by truncate.
      let position = 0;
      let written = 0;
      const write = async (bytes: Buffer) => {
        if (bytes.length > 0) {
          await target.write(bytes, 0, bytes.length, position);
          written = position + bytes.length;
        }
        position += bytes.length;
      };
      for (let at = 0; at < size; ) {
        const { bytesRead } = await source.read(chunk, 0, Math.min(CHUNK_BYTES, size - at), at);
        if (bytesRead === 0) break;
        at += bytesRead;
        const bytes = chunk.subarray(0, bytesRead);
        if (holes && bytes.equals(ZEROS.subarray(0, bytesRead))) {
          // What was held back for a form across chunks is written first: no form goes on into zeros.
          await write(cut.end());
          position += bytesRead;
        } else await write(cut.push(bytes));
      }
      await write(cut.end());
      if (written !== position) await target.truncate(position);
    } finally {
      await target.close();
    }
  } finally {
    await source.close();
  }
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
 * Streams bytes through, chunk by chunk: each chunk joined to the tail of the one before (as long
 * as the longest form, less one byte), every form found whole replaced by the mark, and the rest of
 * the tail held for the next chunk; `end()` lets out what is held.
 */
function redactor(forms: readonly Buffer[]) {
  const keep = Math.max(0, (forms[0]?.length ?? 0) - 1);
  const mark = Buffer.from(SECRET_MARK);
  let carry = Buffer.alloc(0);
  const cut = (bytes: Buffer, last: boolean): Buffer => {
    const out: Buffer[] = [];
    let from = 0;
    // A match must start where the rest of it is in `bytes`: one starting in the held tail is looked for with the next chunk.
    const limit = last ? bytes.length : Math.max(0, bytes.length - keep);
    for (let next = firstForm(bytes, forms, from); next && next.at < limit; next = firstForm(bytes, forms, from)) {
      out.push(bytes.subarray(from, next.at), mark);
      from = next.at + next.form.length;
    }
    const held = Math.max(from, limit);
    out.push(bytes.subarray(from, held));
    carry = Buffer.from(bytes.subarray(held));
    return out.length === 1 ? out[0]! : Buffer.concat(out);
  };
  return {
    push: (chunk: Buffer) => cut(carry.length === 0 ? chunk : Buffer.concat([carry, chunk]), false),
    end: () => cut(carry, true),
  };
}
