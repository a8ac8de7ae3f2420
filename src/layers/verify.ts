import type { Page } from '@playwright/test';
import { z } from 'zod';
import type { Postcondition, SessionView, Verdict } from '../core/task.ts';
import type { RunView } from '../harness/context.ts';
import { defineLayer } from '../harness/layer.ts';

export const verifyOptions = z
  .object({
    /**
     * The site whose pages the check loads (paths are fetched there, whatever page the agent left the
     * browser on): the run's own site unless set.
     */
    origin: z.url({ protocol: /^https?$/ }).optional(),
  })
  .strict();

/**
 * The harness's own check of a claimed success before reporting it: each of the task's
 * postconditions, bound to its item at the run's start, checks itself on the site as the agent's
 * own session sees it now (a fresh load of the story shows it upvoted; the comment is on its
 * page), so a vote on another story, or one the site refused, confirms nothing. All must hold: a
 * claim one rejects is reported as a failure; a page that does not load (a 502, a rate limit)
 * confirms nothing. A postcondition with no session-side check (an answer) cannot confirm the
 * claim: it passes on, recorded as unverified (`harness_unverified`), never silently. This is the
 * harness judging itself, and is measured like any other layer; the oracle never relies on it.
 */
export const verify = defineLayer({
  name: 'verify',
  options: verifyOptions,
  create({ origin }) {
    return {
      async onFinish(run, claim) {
        if (!claim.success) return claim;
        const verdict = await checkPostconditions(run, origin);
        if (verdict) run.record({ type: 'harness_verification', ok: verdict.holds, detail: verdict.detail });
        if (verdict && !verdict.holds) return { ...claim, success: false, summary: `verify rejected the claim: ${verdict.detail}. The model said: ${claim.summary}` };
        const gap = unconfirmable(run.postconditions);
        if (gap) run.record({ type: 'harness_unverified', layer: 'verify', postconditions: gap.postconditions, detail: `${gap.detail}: the claim is reported unverified` });
        return claim;
      },
    };
  },
});

/** Why the session cannot confirm the whole task (the postconditions with no session-side check, or none at all), or undefined when every one checks itself. */
export function unconfirmable(postconditions: readonly Postcondition[]): { postconditions: string[]; detail: string } | undefined {
  if (postconditions.length === 0) return { postconditions: [], detail: 'the task has no postconditions' };
  const unchecked = postconditions.filter((postcondition) => !postcondition.check).map((postcondition) => postcondition.description);
  if (unchecked.length === 0) return undefined;
  return { postconditions: unchecked, detail: `no session-side check of ${unchecked.map((description) => JSON.stringify(description)).join(', ')}` };
}

/**
 * The run's postconditions checked now on the site as the agent's session sees it (pages at
 * `origin`, else the run's site; the run's account as its user). `verify` and `stop-on-success` share it.
 */
export async function checkPostconditions(run: RunView, origin: string | undefined): Promise<Verdict | undefined> {
  const site = origin ?? run.site?.origin;
  // Rejecting is the safe side: no site to look at confirms nothing.
  if (!site) return { holds: false, detail: 'the run names no site to load pages from' };
  const session: SessionView = { load: (path) => loadFresh(run.page, new URL(path, site).href), user: run.credentials?.username };
  return checkSession(run.postconditions, session, run.signal);
}

/**
 * One verdict over every postcondition that can check itself, checked on `session` in order (all
 * must hold); undefined when none can. A check that cannot run (a page that does not load) does
 * not hold, unless the run was stopped (`signal`).
 */
export async function checkSession(postconditions: readonly Postcondition[], session: SessionView, signal?: AbortSignal): Promise<Verdict | undefined> {
  const verdicts: Verdict[] = [];
  for (const postcondition of postconditions) {
    const { check } = postcondition;
    if (check) verdicts.push(await checkOne(() => check.call(postcondition, session), signal));
  }
  if (verdicts.length === 0) return undefined;
  return { holds: verdicts.every((verdict) => verdict.holds), detail: verdicts.map((verdict) => verdict.detail).join('; ') };
}

async function checkOne(check: () => Promise<Verdict>, signal: AbortSignal | undefined): Promise<Verdict> {
  try {
    return await check();
  } catch (error) {
    if (signal?.aborted) throw error;
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
