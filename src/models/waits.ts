import type { ModelWaits } from '../core/model.ts';

/**
 * The run's model waits, measured: overlapping waits count once. `onChange` hears when the run
 * starts and stops waiting (the fixture holds the test's clock meanwhile).
 */
export class WaitClock implements ModelWaits {
  private active = 0;
  private since = 0;
  private total = 0;

  constructor(private readonly onChange?: (waiting: boolean) => void) {}

  begin(): () => void {
    if (this.active++ === 0) {
      this.since = performance.now();
      this.onChange?.(true);
    }
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      if (--this.active > 0) return;
      this.total += performance.now() - this.since;
      this.onChange?.(false);
    };
  }

  waitedMs(): number {
    return Math.round(this.total + (this.active > 0 ? performance.now() - this.since : 0));
  }
}

/** `work` timed as a wait on `waits` (none: untimed). */
export async function waiting<T>(waits: ModelWaits | undefined, work: () => Promise<T>): Promise<T> {
  const end = waits?.begin();
  try {
    return await work();
  } finally {
    end?.();
  }
}
