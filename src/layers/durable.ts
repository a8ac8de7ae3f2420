import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { z } from 'zod';
import { runSnapshotSchema, type RunContext } from '../harness/context.ts';
import { defineLayer } from '../harness/layer.ts';
import { readJsonFile } from '../input.ts';
import { writeFileAtomic } from '../text.ts';

export const durableOptions = z
  .object({
    /** Where the run is saved; by default `durable.json` in the run's output folder. Name one to resume across Playwright runs (which empty their output folder). */
    file: z.string().min(1).optional(),
  })
  .strict();

/** The file: one schema for what is written and what a resume accepts. */
const savedSchema = z.object({
  version: z.int(),
  task: z.string(),
  model: z.string(),
  url: z.string(),
  cookies: z.array(
    z.object({
      name: z.string(),
      value: z.string(),
      domain: z.string(),
      path: z.string(),
      expires: z.number(),
      httpOnly: z.boolean(),
      secure: z.boolean(),
      sameSite: z.enum(['Strict', 'Lax', 'None']),
    }),
  ),
  run: runSnapshotSchema,
});
type Saved = z.infer<typeof savedSchema>;

/**
 * Saves the run after every step, so a run whose process dies resumes in a new process from its
 * last complete step: conversation, trace, counts, the page's URL and cookies. Nothing is
 * replayed: a step cut short (an action still waiting for approval) is simply not in the file, and
 * the model is asked again. The file is removed when the run ends. Without a `file`, it is
 * `durable.json` in the run's output folder (under Playwright, the test's).
 */
export const durable = defineLayer({
  name: 'durable',
  options: durableOptions,
  create(options, { outputDir }) {
    const file = options.file ?? join(outputDir, 'durable.json');
    let resumed = false;
    return {
      async aroundAttempt(_run, attempt) {
        const outcome = await attempt();
        rmSync(file, { force: true });
        return outcome;
      },
      async beforeModel(run) {
        if (resumed || run.attemptIterations > 0 || !existsSync(file)) return;
        resumed = true;
        const saved = readJsonFile(file, savedSchema, 'durable checkpoint', { remedy: 'delete it, and the run starts afresh' });
        // Another run's file (another version, task or model) is not this run's to resume.
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
  },
});

async function save(file: string, run: RunContext): Promise<void> {
  const saved: Saved = {
    version: 1,
    task: run.task,
    model: run.model.id,
    url: run.page.url(),
    cookies: await run.page.context().cookies(),
    run: run.snapshot(),
  };
  mkdirSync(dirname(file), { recursive: true });
  // A process killed mid-write must leave the previous step, never half a file.
  writeFileAtomic(file, JSON.stringify(saved));
}
