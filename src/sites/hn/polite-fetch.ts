import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { retryAfterMs } from '../../http.ts';
import { inOrder } from '../../queue.ts';
import type { SiteHandler } from '../route.ts';

/** How gently a live site is asked: one request at a time, spaced, and backing off when it says so. */
export const politenessSchema = z
  .object({
    /** One request at a time, each starting at least this long after the previous one was answered (static files excepted). */
    intervalMs: z.number().int().min(0).default(1000),
    /** Tries after the first when the site answers that it is rate-limiting. */
    retries: z.number().int().min(0).max(10).default(3),
    /** The first wait after a rate-limit answer; each next one doubles. */
    backoffMs: z.number().int().min(1).default(2000),
    /** No wait is longer, whatever the doubling or a `retry-after` asks. */
    maxBackoffMs: z.number().int().min(1).default(30_000),
  })
  .strict();
export type Politeness = z.output<typeof politenessSchema>;

/** HN's answer when it is asked too often (as a 503, sometimes as a plain page). */
const RATE_LIMITED = /not able to serve your requests this quickly/;

/** The site's static files: the browser fetches several at once with each page, and HN serves them from a cache. */
const STATIC_FILE = /\.(?:css|js|svg|gif|png|ico|jpe?g|webp|woff2?)$/i;

export class RateLimitError extends Error {
  override name = 'RateLimitError';
}

/**
 * A fetch for one origin that a live site can bear: one request at a time, in call order, each
 * starting at least `intervalMs` after the previous one was answered. A rate-limit answer (429,
 * 503, or HN's "not able to serve your requests this quickly") pauses every request for an
 * exponentially growing wait (`retry-after` when given, never more than `maxBackoffMs`), then the
 * request is tried again, up to `retries` times. Redirects are answered, not followed.
 * It looks up `globalThis.fetch` at each call, so msw can stand in for the site.
 */
export function politeFetch(origin: string, { intervalMs, retries, backoffMs, maxBackoffMs }: Politeness): SiteHandler {
  const inQueue = inOrder();
  let lastAnswered = -Infinity;
  let pausedUntil = 0;
  const nextStart = () => Math.max(lastAnswered + intervalMs, pausedUntil);

  /** Sends when this request's turn comes: turns are taken in call order, and held until the answer is known. */
  const inTurn = <T>(send: () => Promise<T>): Promise<T> =>
    inQueue(async () => {
      // A rate-limit answer may arrive while this turn waits: look again after every sleep.
      for (let wait = nextStart() - Date.now(); wait > 0; wait = nextStart() - Date.now()) await sleep(wait);
      try {
        return await send();
      } finally {
        lastAnswered = Date.now();
      }
    });

  return async (request) => {
    const url = new URL(request.url);
    if (url.origin !== origin) throw new Error(`polite fetch for ${origin} refused a request to ${url.origin}`);
    const waits: number[] = [];
    const tryOnce = async (attempt: number) => {
      const answer = await readRateLimit(await globalThis.fetch(request.clone(), { redirect: 'manual' }));
      // Paused before the turn is let go, so no request queued behind this one slips through.
      if (answer.limited && attempt < retries) {
        const wait = retryAfterMs(answer.response.headers.get('retry-after'), maxBackoffMs) ?? Math.min(backoffMs * 2 ** attempt, maxBackoffMs);
        waits.push(wait);
        pausedUntil = Math.max(pausedUntil, Date.now() + wait);
      }
      return answer;
    };
    for (let attempt = 0; ; attempt++) {
      const { response, limited } = await (STATIC_FILE.test(url.pathname) ? tryOnce(attempt) : inTurn(() => tryOnce(attempt)));
      if (!limited) return response;
      if (attempt === retries) {
        const waited = waits.length > 0 ? ` (waited ${waits.map(duration).join(', ')})` : '';
        throw new RateLimitError(
          `${url.host} is rate-limiting: "not able to serve your requests this quickly" ${attempt + 1} times for ${request.method} ${url.pathname}${waited}. Try again later, or raise intervalMs.`,
        );
      }
    }
  };
}

/** Whether the answer is a rate limit. A page's body is read to tell, so it is handed on rebuilt. */
async function readRateLimit(response: Response): Promise<{ response: Response; limited: boolean }> {
  const limitStatus = response.status === 429 || response.status === 503;
  if (!limitStatus && !/^text\//.test(response.headers.get('content-type') ?? '')) return { response, limited: false };
  const text = await response.text();
  const rebuilt = new Response(text === '' ? null : text, { status: response.status, statusText: response.statusText, headers: response.headers });
  return { response: rebuilt, limited: limitStatus || RATE_LIMITED.test(text) };
}

function duration(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${Math.round(ms / 100) / 10} s`;
}
