import { readdirSync, readFileSync } from 'node:fs';

/**
 * Chromium's browser processes (not its helpers: those carry `--type=`; not the bubblewrap that
 * runs a sandboxed one, whose command line ends with Chromium's) whose profile is under `dir`: a
 * child run given its own TMPDIR puts every browser it launches there.
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
      return args.some((arg) => arg.startsWith(`--user-data-dir=${dir}/`)) && !args.some((arg) => arg.startsWith('--type=')) && !args[0]!.endsWith('bwrap');
    })
    .map(Number);
}
