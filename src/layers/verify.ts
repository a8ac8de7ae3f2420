import { z } from 'zod';
import type { RunContext } from '../harness/context.ts';
import type { Layer } from '../harness/layer.ts';
import { parseInput } from '../input.ts';

export const verifyOptions = z.object({}).strict();

/**
 * The harness's own check of a claimed upvote before reporting it: the trace must hold a click
 * on an upvote arrow, and a fresh load of the story's page must show the vote registered (arrow
 * gone or `nosee`). A claim without that evidence is reported as a failure. This is the harness
 * judging itself, and is measured like any other layer; the oracle never relies on it.
 */
export function verify(options: z.input<typeof verifyOptions> = {}): Layer {
  parseInput(verifyOptions, options, 'layer verify');
  return {
    name: 'verify',
    async onFinish(run, claim) {
      if (!claim.success) return claim;
      const verdict = await checkUpvote(run);
      run.record({ type: 'harness_verification', ok: verdict.ok, detail: verdict.detail });
      return verdict.ok ? claim : { success: false, summary: `verify rejected the claim: ${verdict.detail}. The model said: ${claim.summary}` };
    },
  };
}

async function checkUpvote(run: RunContext): Promise<{ ok: boolean; detail: string }> {
  const clicks = run.trace
    .of('tool_result')
    .filter((event) => event.attempt === run.attempt && event.ok && event.name === 'click')
    .map((event) => /#up_(\d+)/.exec(String(event.output?.clicked ?? ''))?.[1])
    .filter((id): id is string => id !== undefined);
  const id = clicks.at(-1);
  if (!id) return { ok: false, detail: 'no click on an upvote arrow in the trace' };

  // A new page in the same session: what the server says now, not what a script left on screen.
  const page = await run.page.context().newPage();
  try {
    await page.goto(new URL(`/item?id=${id}`, run.page.url()).href, { waitUntil: 'load' });
    const arrow = page.locator(`#up_${id}`);
    if ((await arrow.count()) === 0) return { ok: true, detail: `story ${id}: arrow gone` };
    const classes = (await arrow.getAttribute('class')) ?? '';
    return classes.split(/\s+/).includes('nosee')
      ? { ok: true, detail: `story ${id}: arrow has class nosee` }
      : { ok: false, detail: `story ${id}: the arrow is still there, the vote did not register` };
  } finally {
    await page.close();
  }
}

