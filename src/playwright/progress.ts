/** Matrices of fewer tests finish before an estimate would help: they print none. */
export const ETA_MIN_TESTS = 20;
/** An estimate at every tenth of the tests, and at least this often while tests finish. */
export const ETA_INTERVAL_MS = 30_000;

/**
 * The reporter's time estimate for a long matrix: `harness-eval: 48/192 tests · ETA 3m 10s`, from
 * the pace so far (wall time over tests finished, so parallel workers count). A line at each tenth
 * of the tests or every 30 s, whichever comes first; none for a small matrix, none at the end (the
 * final summary says it).
 */
export class EtaProgress {
  private lastAt: number;
  private lastTenth = 0;

  constructor(
    private readonly total: number,
    private readonly startedAt: number,
  ) {
    this.lastAt = startedAt;
  }

  /** The line to print once `finished` tests are done, at `now`; undefined when it is not time. */
  update(finished: number, now: number): string | undefined {
    if (this.total < ETA_MIN_TESTS || finished <= 0 || finished >= this.total) return undefined;
    const tenth = Math.floor((finished * 10) / this.total);
    if (tenth <= this.lastTenth && now - this.lastAt < ETA_INTERVAL_MS) return undefined;
    this.lastTenth = tenth;
    this.lastAt = now;
    const left = ((now - this.startedAt) / finished) * (this.total - finished);
    return `harness-eval: ${finished}/${this.total} tests · ETA ${formatEta(left)}`;
  }
}

/** `45s`, `3m 10s`, `2h 05m`: coarse, as an estimate is. */
export function formatEta(ms: number): string {
  const seconds = Math.max(1, Math.round(ms / 1000));
  if (seconds < 60) return `${seconds}s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m ${String(seconds % 60).padStart(2, '0')}s`;
  const minutes = Math.round(seconds / 60);
  return `${Math.floor(minutes / 60)}h ${String(minutes % 60).padStart(2, '0')}m`;
}

/**
 * Whether the reporter's lines may keep the terminal's colours (a failed test's message carries
 * them: Playwright's workers always colour theirs), decided as Playwright's own reporters decide:
 * on a terminal, unless NO_COLOR (set, not empty), FORCE_COLOR=0 or DEBUG_COLORS=0 says not;
 * FORCE_COLOR or DEBUG_COLORS set otherwise colours any output.
 */
export function terminalColors(isTTY: boolean | undefined, env: NodeJS.ProcessEnv): boolean {
  const off = (value: string | undefined) => value === '0' || value === 'false';
  if (off(env.DEBUG_COLORS) || off(env.FORCE_COLOR) || (env.NO_COLOR !== undefined && env.NO_COLOR !== '')) return false;
  return Boolean(env.DEBUG_COLORS || env.FORCE_COLOR) || isTTY === true;
}
