import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { z } from 'zod';
import { runSnapshotSchema, type RunView } from '../harness/context.ts';
import { defineLayer } from '../harness/layer.ts';
import { executeCall } from '../harness/loop.ts';
import type { ChatMessage } from '../core/model.ts';
import { stallContinues, tellContinued } from './stall.ts';
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
  /** Saved when the run paused for approval: on resume, the turn the pause interrupted is finished first. */
  paused: z.boolean().default(false),
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
 * replayed: a step cut short by a crash is simply not in the file, and the model is asked again.
 * A run that pauses for approval is saved as it paused, and kept: the process that resumes it
 * finishes the paused turn through the approval path. The file is removed when the run ends. Without a `file`, it is
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
        // A paused run is kept for the process that resumes it once its request is decided.
        if (outcome.stopReason !== 'awaiting_approval') rmSync(file, { force: true });
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
        if (saved.paused) await finishPausedTurn(run);
      },
      async afterTools(run) {
        await save(file, run, false);
      },
      async onPause(run) {
        await save(file, run, true);
      },
    };
  },
});

/**
 * Takes up a run that paused: a stuck run's `continue` is asked about again (stall); then each call
 * of the interrupted turn not yet answered runs through the layers again, by the harness, so an
 * approved action runs now, a denied one is refused (the model is told), and one still waiting
 * pauses the run again. Nothing that ran before the pause runs twice.
 */
async function finishPausedTurn(run: RunView): Promise<void> {
  const request = run.trace.of('harness_approval_request').at(-1);
  if (request?.kind === 'continue' && !stallContinues(run, request)) return;
  const turn = run.messages.findLast((message): message is Extract<ChatMessage, { role: 'assistant' }> => message.role === 'assistant');
  const answered = new Set(run.messages.flatMap((message) => (message.role === 'tool' ? [message.toolCallId] : [])));
  for (const call of turn?.toolCalls ?? []) if (!answered.has(call.id) && !run.stopped) await executeCall(run, call, 'harness');
  if (!run.stopped) tellContinued(run);
}

async function save(file: string, run: RunView, paused: boolean): Promise<void> {
  const saved: Saved = {
    version: 1,
    paused,
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
