import type { Page, Request } from '@playwright/test';
import { z } from 'zod';
import { defineLayer } from '../harness/layer.ts';

export const settleOptions = z
  .object({
    /** How long the page must stay quiet (no request in flight, no DOM mutation) to count as settled. */
    quietMs: z.number().int().positive().default(150),
    /** The longest wait after an action, settled or not. */
    maxMs: z.number().int().positive().default(2000),
  })
  .strict()
  .refine((options) => options.quietMs <= options.maxMs, { path: ['quietMs'], message: 'must not exceed maxMs' });

/**
 * Lets the page finish reacting before the model looks again. A click's `load` event is not the end
 * of it: scripts render, votes post in the background, late requests land. After each `act` tool
 * that ran, waits until the page has been quiet for `quietMs`, at most `maxMs`, and records how
 * long it waited and whether the page settled (`harness_settle`).
 */
export const settle = defineLayer({
  name: 'settle',
  options: settleOptions,
  create({ quietMs, maxMs }) {
    return {
      async aroundTool(run, call, next) {
        if (run.tools.get(call.name)?.effect !== 'act') return next();
        const network = watchNetwork(run.page);
        try {
          const outcome = await next();
          const ran = outcome.ok || outcome.kind === 'tool_error';
          if (!ran) return outcome;
          const started = performance.now();
          const settled = await waitForQuiet(run.page, network, quietMs, maxMs);
          run.record({ type: 'harness_settle', callId: call.id, ms: Math.round(performance.now() - started), settled });
          return outcome;
        } finally {
          network.stop();
        }
      },
    };
  },
});

/** Requests in flight on the page, watched from before the action so that none it causes is missed. */
function watchNetwork(page: Page) {
  const inFlight = new Set<Request>();
  let lastActivity = performance.now();
  const started = (request: Request) => {
    inFlight.add(request);
    lastActivity = performance.now();
  };
  const ended = (request: Request) => {
    inFlight.delete(request);
    lastActivity = performance.now();
  };
  page.on('request', started).on('requestfinished', ended).on('requestfailed', ended);
  return {
    quietFor: () => (inFlight.size > 0 ? 0 : performance.now() - lastActivity),
    stop: () => page.off('request', started).off('requestfinished', ended).off('requestfailed', ended),
  };
}

async function waitForQuiet(page: Page, network: ReturnType<typeof watchNetwork>, quietMs: number, maxMs: number): Promise<boolean> {
  const deadline = performance.now() + maxMs;
  while (performance.now() < deadline && !page.isClosed()) {
    // A navigation replaces the document mid-wait: that is activity, so wait again on the new one.
    const domQuiet = await page.evaluate(domQuietFor, { quietMs, timeoutMs: deadline - performance.now() }).catch(() => false);
    if (domQuiet && network.quietFor() >= quietMs) return true;
  }
  return false;
}

/** Runs in the page: true once no DOM mutation has happened for `quietMs`, false at `timeoutMs`. */
function domQuietFor({ quietMs, timeoutMs }: { quietMs: number; timeoutMs: number }): Promise<boolean> {
  return new Promise((resolve) => {
    const done = (quiet: boolean) => {
      observer.disconnect();
      clearTimeout(quietTimer);
      clearTimeout(deadline);
      resolve(quiet);
    };
    const deadline = setTimeout(() => done(false), timeoutMs);
    let quietTimer = setTimeout(() => done(true), quietMs);
    const observer = new MutationObserver(() => {
      clearTimeout(quietTimer);
      quietTimer = setTimeout(() => done(true), quietMs);
    });
    observer.observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
  });
}
