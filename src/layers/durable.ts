import { existsSync, readFileSync, rmSync } from 'node:fs';
import type { BrowserContext } from '@playwright/test';
import { z } from 'zod';
import type { RunContext, RunSnapshot } from '../harness/context.ts';
import type { Layer } from '../harness/layer.ts';
import { parseInput } from '../input.ts';
import { writeFileAtomic } from '../text.ts';

export const durableOptions = z.object({ file: z.string().min(1) }).strict();

interface Saved {
  version: 1;
  task: string;
  model: string;
  url: string;
  cookies: Awaited<ReturnType<BrowserContext['cookies']>>;
  run: RunSnapshot;
}

/**
 * Saves the run after every step, so a run whose process dies resumes in a new process from its
 * last complete step: conversation, trace, counts, the page's URL and cookies. Nothing is
 * replayed: a step cut short (an action still waiting for approval) is simply not in the file, and
 * the model is asked again. The file is removed when the run ends.
 */
export function durable(options: z.input<typeof durableOptions>): Layer {
  const { file } = parseInput(durableOptions, options, 'layer durable');
  let resumed = false;
  return {
    name: 'durable',
    async aroundAttempt(run, attempt) {
      const outcome = await attempt();
      rmSync(file, { force: true });
      return outcome;
    },
    async beforeModel(run) {
      if (resumed || run.attemptIterations > 0 || !existsSync(file)) return;
      resumed = true;
      const saved = JSON.parse(readFileSync(file, 'utf8')) as Saved;
      if (saved.version !== 1 || saved.task !== run.task || saved.model !== run.model.id) return;
      run.resume(saved.run);
      await run.page.context().addCookies(saved.cookies);
      if (/^https?:/.test(saved.url)) await run.page.goto(saved.url, { waitUntil: 'load' });
      run.record({ type: 'harness_resume', file, fromStep: saved.run.iterations });
    },
    async afterTools(run) {
      await save(file, run);
    },
  };
}

async function save(file: string, run: RunContext): Promise<void> {
  const saved: Saved = {
    version: 1,
    task: run.task,
    model: run.model.id,
    url: run.page.url(),
    cookies: await run.page.context().cookies(),
    run: run.snapshot(),
  };
  // A process killed mid-write must leave the previous step, never half a file.
  writeFileAtomic(file, JSON.stringify(saved));
}
