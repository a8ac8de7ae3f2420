import type { Page } from '@playwright/test';
import { z } from 'zod';
import type { SelfCheck, SessionView, Verdict } from '../core/task.ts';
import type { RunContext } from '../harness/context.ts';
import { defineLayer } from '../harness/layer.ts';
import { HN_ORIGIN } from '../sites/hn/options.ts';

export const verifyOptions = z
  .object({
    /** The site whose pages the check loads: paths are fetched there, whatever page the agent left the browser on. */
    origin: z.url({ protocol: /^https?$/ }).default(HN_ORIGIN),
  })
  .strict();

/**
 * The harness's own check of a claimed success before reporting it: the task's `verify` runs on
 * the site as the agent's own session sees it now (a fresh load of the task's story shows it
 * upvoted; the comment is on its page), so a vote on another story, or one the site refused,
 * confirms nothing. A claim the check rejects is reported as a failure; a page that does not load
 * (a 502, a rate limit) confirms nothing. A task without a check of its own has its claim passed
 * on, with a note in the trace that nothing checked it. This is the harness judging itself, and
 * is measured like any other layer; the oracle never relies on it.
 */
export const verify = defineLayer({
  name: 'verify',
  options: verifyOptions,
  create(options) {
    const site = new URL(options.origin).origin;
    return {
      async onFinish(run, claim) {
        if (!claim.success) return claim;
        if (!run.selfCheck) {
          run.record({ type: 'harness_note', layer: 'verify', message: 'the task has no check of its own: the claim is reported unchecked' });
          return claim;
        }
        const verdict = await checkTask(run, run.selfCheck, site);
        run.record({ type: 'harness_verification', ok: verdict.holds, detail: verdict.detail });
        return verdict.holds ? claim : { ...claim, success: false, summary: `verify rejected the claim: ${verdict.detail}. The model said: ${claim.summary}` };
      },
    };
  },
});

/**
 * The task's own check, run now on the site as the agent's session sees it (pages at `site`): a
 * check that cannot run (a page that does not load) does not hold. `verify` and `stop-on-success` share it.
 */
export async function checkTask(run: RunContext, check: SelfCheck, site: string): Promise<Verdict> {
  const session: SessionView = { load: (path) => loadFresh(run.page, new URL(path, site).href) };
  try {
    return await check(session);
  } catch (error) {
    if (run.signal?.aborted) throw error;
    return { holds: false, detail: `the check could not run: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}` };
  }
}

/** What the server answers now, in the agent's session, not what a script left on the screen. */
async function loadFresh(page: Page, url: string): Promise<{ status: number; html: string }> {
  if (new URL(page.url()).origin === new URL(url).origin) {
    return page.evaluate(async (target) => {
      const response = await fetch(target, { credentials: 'same-origin' });
      return { status: response.status, html: await response.text() };
    }, url);
  }
  const fresh = await page.context().newPage();
  try {
    const response = await fresh.goto(url);
    return { status: response?.status() ?? 0, html: (await response?.text()) ?? '' };
  } finally {
    await fresh.close();
  }
}
