import type { Cookie } from '@playwright/test';
import { z } from 'zod';
import type { RunView } from '../harness/context.ts';
import { defineLayer } from '../harness/layer.ts';
import { counted } from '../report/format.ts';

export const recoveryOptions = z.object({ maxRecoveries: z.number().int().min(1).max(10).default(2) }).strict();

/**
 * Browser crash recovery: when the page crashes, or the page or its context closes, mid-run, the
 * harness opens a fresh browser session, puts back the cookies (still logged in) and the URL, tells
 * the model once what happened, and the run goes on. Without it the run stops with `error`.
 *
 * The loss is taken on at the next hook: after the tool call in flight (which may have failed on the
 * dead page), after the turn's calls, or before the next model call. The way back is a `navigate` of the harness's own (`by: harness`),
 * through the same permission and approval path as the model's calls. Cookies are kept after every
 * call, for a context that is gone by then; they never enter the trace (a count does).
 * At most `maxRecoveries` per run; past that, or when no session opens, the run stops with `error`.
 */
export const recovery = defineLayer({
  name: 'recovery',
  options: recoveryOptions,
  create({ maxRecoveries }) {
    /** What died, until the session is reopened. */
    let lost: string | undefined;
    /** The session's cookies after the last call: the fallback when the dead context cannot be read. */
    let kept: Cookie[] = [];
    /** What the model is told before its next call (a message between a call and its result is refused by providers). */
    let notice: string | undefined;

    const recoverIfLost = async (run: RunView) => {
      if (!lost) return;
      const what = lost;
      lost = undefined;
      const url = run.page.url();
      const recovered = run.trace.of('harness_recovery').filter((event) => event.recovered).length;
      const giveUp = (why: string) => {
        run.record({ type: 'harness_recovery', lost: what, recovered: false, url, cookies: 0, detail: why });
        run.stop('error', `${what} mid-run, and the harness did not recover it: ${why}`);
      };
      if (recovered >= maxRecoveries) return giveUp(`it had already recovered ${counted(recovered, 'time')}, the most maxRecoveries allows`);
      const cookies = await run.page.context().cookies().catch(() => kept);
      try {
        const page = await run.reopen();
        await page.context().addCookies(cookies);
      } catch (error) {
        return giveUp(`no fresh browser session could be opened: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`);
      }
      const back = /^https?:/.test(url)
        ? await run.callTool({ id: `recovery-${recovered + 1}`, name: 'navigate', arguments: JSON.stringify({ url }) }, { by: 'harness' })
        : undefined;
      const where = back === undefined || back.ok ? `reopened ${run.page.url()}` : `could not reopen ${url} (${back.error}); the browser is on ${run.page.url()}`;
      run.record({ type: 'harness_recovery', lost: what, recovered: true, url: run.page.url(), cookies: cookies.length, detail: `a fresh browser session with the last cookies; ${where}` });
      notice =
        `The connection to the browser was lost (${what}) and recovered: the harness opened a fresh browser session with the same cookies and ${where}. ` +
        'The tool call that was running when it was lost may or may not have taken effect: check the page before going on.';
    };

    return {
      onBrowserLost(_run, what) {
        lost = what;
      },
      async aroundTool(run, _call, next) {
        const outcome = await next();
        if (!lost) kept = await run.page.context().cookies().catch(() => kept);
        await recoverIfLost(run);
        return outcome;
      },
      afterTools: recoverIfLost,
      async beforeModel(run) {
        await recoverIfLost(run);
        if (notice && !run.stopped) run.tell('recovery', notice);
        notice = undefined;
      },
    };
  },
});
