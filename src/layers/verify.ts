import type { Page } from '@playwright/test';
import * as cheerio from 'cheerio';
import { z } from 'zod';
import type { RunContext } from '../harness/context.ts';
import { defineLayer } from '../harness/layer.ts';
import { HN_ORIGIN } from '../sites/hn/options.ts';

export const verifyOptions = z
  .object({
    /** The site whose state counts: a click, and the fresh load that confirms it, happen there or confirm nothing. */
    origin: z.url({ protocol: /^https?$/ }).default(HN_ORIGIN),
  })
  .strict();

/**
 * The harness's own check of a claimed upvote before reporting it: the trace must hold a click
 * on an upvote arrow, and a fresh load of the story's page must show the vote registered (arrow
 * gone or `nosee`); a page that does not show the story (a 502, a rate limit) confirms nothing.
 * Both on the site's own origin: an arrow on a look-alike page elsewhere, or a page elsewhere
 * that shows the story voted, confirms nothing. A claim without that evidence is reported as a
 * failure. This is the harness
 * judging itself, and is measured like any other layer; the oracle never relies on it.
 */
export const verify = defineLayer({
  name: 'verify',
  options: verifyOptions,
  create(options) {
    const site = new URL(options.origin).origin;
    return {
      async onFinish(run, claim) {
        if (!claim.success) return claim;
        const verdict = await checkUpvote(run, site);
        run.record({ type: 'harness_verification', ok: verdict.ok, detail: verdict.detail });
        return verdict.ok ? claim : { success: false, summary: `verify rejected the claim: ${verdict.detail}. The model said: ${claim.summary}` };
      },
    };
  },
});

async function checkUpvote(run: RunContext, site: string): Promise<{ ok: boolean; detail: string }> {
  const click = run.trace
    .of('tool_result')
    .findLast((event) => event.attempt === run.attempt && event.ok && event.name === 'click' && /#up_\d+/.test(String(event.output?.clicked)));
  if (!click) return { ok: false, detail: 'no click on an upvote arrow in the trace' };
  const id = /#up_(\d+)/.exec(String(click.output!.clicked))![1]!;
  const where = URL.canParse(String(click.output!.url)) ? new URL(String(click.output!.url)).origin : String(click.output!.url);
  if (where !== site) return { ok: false, detail: `story ${id}: the click on its arrow left the browser on ${where}, not on the site (${site})` };
  const { status, html } = await loadFresh(run.page, `${site}/item?id=${id}`);
  const $ = cheerio.load(html);
  // An error page (a 502, a rate limit) has no arrow either: only the story's own row can show its vote.
  if ($(`tr.athing[id="${id}"]`).length === 0) {
    return { ok: false, detail: `story ${id}: the page loaded (HTTP ${status}) does not show the story, so the vote cannot be confirmed` };
  }
  const arrow = $(`#up_${id}`);
  if (arrow.length === 0) return { ok: true, detail: `story ${id}: arrow gone` };
  return arrow.hasClass('nosee')
    ? { ok: true, detail: `story ${id}: arrow has class nosee` }
    : { ok: false, detail: `story ${id}: the arrow is still there, the vote did not register` };
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
