import type { SiteIdle } from '../core/site.ts';

export type { Site, SiteAccount, SiteFactory, SiteIdle } from '../core/site.ts';
export type { StateChange } from '../core/state.ts';

/** The shortest wait for a site to settle: answers on a loaded machine take time even with no latency set. */
export const IDLE_FLOOR_MS = 2_000;

/** The wait for a site whose answers take up to `latencyMs`: a request just sent, and one behind it. */
export function idleBoundMs(latencyMs: number): number {
  return IDLE_FLOOR_MS + 2 * latencyMs;
}

/**
 * Counts a site's requests between arrival and answer, so the end snapshot can wait for the last
 * one. A count that reaches zero is trusted only after pending callbacks have run: a redirect the
 * adapter follows sends its next request at once.
 */
export function requestsInFlight() {
  let pending = 0;
  const waiters = new Set<() => void>();
  const settleLater = () =>
    setImmediate(() => {
      if (pending !== 0) return;
      for (const wake of waiters) wake();
      waiters.clear();
    });
  return {
    async track<T>(answer: () => Promise<T>): Promise<T> {
      pending += 1;
      try {
        return await answer();
      } finally {
        pending -= 1;
        if (pending === 0) settleLater();
      }
    },
    async idle(boundMs: number): Promise<SiteIdle> {
      const began = performance.now();
      if (pending > 0) {
        let wake!: () => void;
        const settled = new Promise<void>((resolve) => waiters.add((wake = resolve)));
        let timer: NodeJS.Timeout | undefined;
        const bound = new Promise<void>((resolve) => (timer = setTimeout(resolve, boundMs)));
        await Promise.race([settled, bound]);
        clearTimeout(timer);
        waiters.delete(wake);
      }
      return { settled: pending === 0, waitedMs: Math.round(performance.now() - began), pending };
    },
  };
}

/** Cookie values shorter than this are flags (`1`, `yes`), not sessions. */
const SESSION_MIN_CHARS = 8;

/**
 * The session cookies a site handed out, for `Site.secrets()`: `observe` each response of the
 * run's traffic, and every Set-Cookie value (whole, and after its first `&`, where HN keeps the
 * token) is a secret from then on.
 */
export function sessionCookies() {
  const values = new Set<string>();
  return {
    observe(response: Response): Response {
      for (const header of response.headers.getSetCookie()) {
        const value = header.split(';')[0]!.split('=').slice(1).join('=').trim();
        if (value.length < SESSION_MIN_CHARS) continue;
        values.add(value);
        const token = value.slice(value.indexOf('&') + 1);
        if (token !== value && token.length >= SESSION_MIN_CHARS) values.add(token);
      }
      return response;
    },
    secrets: (): string[] => [...values],
  };
}
