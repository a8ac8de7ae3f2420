import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Chromium's browser processes (not its helpers: those carry `--type=`) whose profile is under
 * `dir`: a child run given its own TMPDIR puts every browser it launches there.
 */
export function browsersUnder(dir: string): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      let args: string[];
      try {
        args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      } catch {
        return false; // it ended while we looked
      }
      return args.some((arg) => arg.startsWith(`--user-data-dir=${dir}/`)) && !args.some((arg) => arg.startsWith('--type='));
    })
    .map(Number);
}

/** Whether process `pid` is alive (signal 0 only asks). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The pid a slot's holder wrote; undefined while it has not yet written it, or once the slot is gone. */
function holderOf(slot: string): number | undefined {
  try {
    return Number(readFileSync(join(slot, 'pid'), 'utf8')) || undefined;
  } catch {
    return undefined;
  }
}

/**
 * One of `slots` places under `dir`, shared by every process that names the same `dir` (the
 * workers of one test run): a slot is a folder, and mkdir is atomic. Waits until one is free,
 * calling `onWait` with the milliseconds each poll waited; a slot whose holder died is taken over.
 * Answers the release.
 */
export async function acquireSlot(dir: string, slots: number, onWait: (ms: number) => void = () => {}): Promise<() => void> {
  mkdirSync(dir, { recursive: true });
  for (;;) {
    for (let slot = 0; slot < slots; slot += 1) {
      const path = join(dir, `slot-${slot}`);
      try {
        mkdirSync(path);
      } catch {
        // A dead holder's slot is freed for the next poll.
        const holder = holderOf(path);
        if (holder !== undefined && !alive(holder)) rmSync(path, { recursive: true, force: true });
        continue;
      }
      writeFileSync(join(path, 'pid'), String(process.pid));
      return () => rmSync(path, { recursive: true, force: true });
    }
    const began = Date.now();
    await new Promise((resolve) => setTimeout(resolve, 100));
    onWait(Date.now() - began);
  }
}
