import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from '@playwright/test';
import { z } from 'zod';
import type { RunRecord } from '../core/run.ts';
import type { Task } from '../core/task.ts';
import type { RunView, TaskId } from '../harness/context.ts';
import { defineLayer } from '../harness/layer.ts';
import { describeCalls } from '../harness/loop.ts';
import { elementSchema, subroutineStepSchema } from '../core/trace.ts';
import { InputError, readJsonFile } from '../input.ts';
import type { ToolCall } from '../core/model.ts';
import { parseJsonObject, writeFileAtomic } from '../text.ts';
import { readFirstElement } from '../tools/first-element.ts';

export const subroutinesOptions = z
  .object({
    /** The folder of subroutine files, one per task and revision, relative to the working folder: shared by every run that names it. */
    dir: z.string().min(1).default('subroutines'),
    /** false: only record each run's steps (a run to save a subroutine from), never replay one. */
    replay: z.boolean().default(true),
  })
  .strict();

type Step = z.infer<typeof subroutineStepSchema>;
type FoundElement = z.infer<typeof elementSchema>;

/** A saved subroutine: a confirmed run's actions for one task and revision, ending with its claim. */
export const subroutineSchema = z.object({
  task: z.string(),
  revision: z.number().int().min(1),
  steps: z.array(subroutineStepSchema).min(1),
});
export type Subroutine = z.infer<typeof subroutineSchema>;

/** The tools whose calls name an element by selector: the element must be the same one on replay. */
const ON_ELEMENT = new Set(['click', 'fill']);

/**
 * AI subroutines: a run's actions, once the oracle confirmed it (`saveSubroutine`), replayed
 * without the model on later runs of the same task.
 *
 * Recording: every action of the run (an `act` tool call, the model's or the harness's, and the
 * final `finish`) is written to the trace as a `harness_subroutine_step`: the call, the page it ran
 * on, the element its selector resolved to, whether it succeeded and where it landed.
 *
 * Replay: before the model's first call, the task's subroutine (if `dir` has one) runs step by
 * step through `callTool` as the harness's own calls, so permissions and approval still apply.
 * Before each step the page must match (same page, same element, same row, by what they are and
 * say, not their classes: a routine learned on one markup era replays on another); after it, the same
 * outcome and landing page. A step that does not match stops the replay: the model is told what
 * was done and continues from that step. A replay that completes ends with the recorded `finish`,
 * which the other layers' `onFinish` (verify) still judge. The layer never decides a run was good.
 */
export const subroutines = defineLayer({
  name: 'subroutines',
  options: subroutinesOptions,
  create({ dir, replay }) {
    let tried = false;
    return {
      async aroundTool(run, call, next, by) {
        const tool = run.tools.get(call.name);
        // A program's calls are its own tool call's doing: that call is the step.
        if ((tool?.effect !== 'act' && call.name !== 'finish') || by === 'program') return next();
        const on = place(run.page.url());
        const element = await elementOf(run.page, call);
        const outcome = await next();
        const step: Step = { tool: call.name, arguments: call.arguments, on, ...(element && { element }), ok: outcome.ok, landed: place(run.page.url()) };
        run.record({ type: 'harness_subroutine_step', callId: call.id, step });
        return outcome;
      },
      async beforeModel(run) {
        // Once per run, before the model's first call: a retry or a resumed run is the model's.
        if (!replay || tried || run.attempt !== 1 || run.iterations > 0) return;
        tried = true;
        if (!run.taskId) {
          run.record({ type: 'harness_note', layer: 'subroutines', message: 'the run has no task name and revision, so no subroutine is replayed' });
          return;
        }
        const file = subroutineFile(dir, run.taskId);
        const routine = readSubroutine(file);
        if (!routine) {
          run.record({ type: 'harness_note', layer: 'subroutines', message: `no subroutine for ${run.taskId.name} revision ${run.taskId.revision} in ${dir}: the model does the task` });
          return;
        }
        await replaySteps(run, routine, file);
      },
    };
  },
});

/** Replays `routine` until it ends with its claim, or a step no longer matches the page: then the model is told where to go on from. */
async function replaySteps(run: RunView, routine: Subroutine, file: string): Promise<void> {
  const of = routine.steps.length;
  for (const [index, step] of routine.steps.entries()) {
    const number = index + 1;
    const call: ToolCall = { id: `subroutine-${number}`, name: step.tool, arguments: step.arguments };
    const drift = await driftBefore(run.page, step, call);
    if (drift) return handOver(run, routine, file, { number, why: drift, carriedOut: false });
    const outcome = await run.callTool(call, { by: 'harness' });
    if (outcome.ok !== step.ok) {
      const why = outcome.ok ? 'succeeded where the recorded one failed' : `failed (${outcome.error})`;
      return handOver(run, routine, file, { number, why, carriedOut: outcome.ok });
    }
    const landed = place(run.page.url());
    if (landed !== step.landed) return handOver(run, routine, file, { number, why: `landed on ${landed}, not on ${step.landed} as recorded`, carriedOut: true });
  }
  run.record({ type: 'harness_subroutine', file, replayed: of, of });
}

/** Ends a replay that diverged at step `number`: recorded, and one message to the model saying what was done and where it goes on from. */
function handOver(run: RunView, routine: Subroutine, file: string, divergence: { number: number; why: string; carriedOut: boolean }): void {
  const { number, why, carriedOut } = divergence;
  const of = routine.steps.length;
  run.record({ type: 'harness_subroutine', file, replayed: number - 1, of, diverged: { step: number, why } });
  const calls = (steps: readonly Step[]) => describeCalls(steps.map((step, index) => ({ id: `subroutine-${index + 1}`, name: step.tool, arguments: step.arguments })));
  const done = number > 1 ? `The harness replayed steps 1–${number - 1} of a recorded routine for this task (${calls(routine.steps.slice(0, number - 1))}).` : 'The harness tried a recorded routine for this task; it replayed no step.';
  run.tell(
    'subroutines',
    `${done} Step ${number} (${calls([routine.steps[number - 1]!])}) ${why}, so the routine stopped there; that step was ${carriedOut ? '' : 'not '}carried out. Continue the task yourself from step ${number}: the browser is on ${run.page.url()}.`,
  );
}

/** Why the page no longer fits `step`, or undefined when it does: the page it runs on, and the element it acts on. */
async function driftBefore(page: Page, step: Step, call: ToolCall): Promise<string | undefined> {
  const here = place(page.url());
  // A navigation goes to its address from anywhere: only where it lands counts.
  if (step.tool !== 'navigate' && here !== step.on) return `would run on ${here}, not on ${step.on} as recorded`;
  if (!step.element) return undefined;
  const now = await elementOf(page, call);
  if (!now) return 'found no element for its selector';
  const was = step.element;
  const fields = ['tag', 'id', 'text', 'href'] as const;
  const field = fields.find((name) => now[name] !== was[name]);
  if (field) return `found an element whose ${field} is "${now[field]}", not "${was[field]}" as recorded`;
  if (now.within?.id !== was.within?.id) return `found its element in a row with id "${now.within?.id ?? ''}", not "${was.within?.id ?? ''}" as recorded`;
  if (now.within?.text !== was.within?.text) return `found its element in a row reading "${now.within?.text ?? ''}", not "${was.within?.text ?? ''}" as recorded`;
  return undefined;
}

/** The element a click or fill names, as the page shows it now; undefined for other calls, or when none matches. */
async function elementOf(page: Page, call: ToolCall): Promise<FoundElement | undefined> {
  if (!ON_ELEMENT.has(call.name)) return undefined;
  const selector = parseJsonObject(call.arguments)?.selector;
  if (typeof selector !== 'string') return undefined;
  try {
    return await readFirstElement(page, selector, describeInPage);
  } catch {
    // A selector the browser cannot read, or a page navigating away: nothing found, as the tool would say.
    return undefined;
  }
}

/** Runs in the page (self-contained, no helpers): the element, and the row it sits in, as `elementSchema` keeps them. */
function describeInPage(element: Element): FoundElement {
  const href = element.getAttribute('href') ?? '';
  const row = element.closest('tr, li, form');
  return {
    tag: element.tagName.toLowerCase(),
    id: element.id,
    text: (element.textContent ?? '').replace(/\s+/g, ' ').trim().slice(0, 100),
    // The session's token changes with every sign-in: the link is the same without it.
    href: href.replace(/([?&])auth=[^&]*&?/, '$1').replace(/[?&]$/, ''),
    ...(row && { within: { id: row.id, text: (row.textContent ?? '').replace(/\s+/g, ' ').trim().slice(0, 200) } }),
  };
}

/** A page as steps compare it: path and query, without the session's token (`auth`). */
function place(url: string): string {
  if (!URL.canParse(url)) return url;
  const parsed = new URL(url);
  if (parsed.protocol === 'about:') return url;
  parsed.searchParams.delete('auth');
  return `${parsed.pathname}${parsed.search}`;
}

/** Where the subroutine of a task's revision is kept in `dir`. */
export function subroutineFile(dir: string, task: TaskId): string {
  return join(dir, `${task.name}.r${task.revision}.json`);
}

/** The subroutine kept in `file`, if there is one; a file that is not one is an InputError. */
function readSubroutine(file: string): Subroutine | undefined {
  return existsSync(file) ? readJsonFile(file, subroutineSchema, 'subroutine', { label: `subroutine ${file}` }) : undefined;
}

/** What `saveSubroutine` reads of a run record: the oracle's verdict and the trace. */
type JudgedRun = Pick<RunRecord, 'task' | 'claimed' | 'actual' | 'judged' | 'incomplete' | 'sideEffects' | 'trace'>;

/**
 * Saves the actions of a run the oracle confirmed (claimed, actual, no side effect) as the
 * subroutine of `task` in `dir`, and returns the file. Any other record is refused with an
 * InputError: only the oracle's verdict makes a run worth repeating. The run must have had the
 * `subroutines` layer on (its trace holds the steps). Cited evidence is dropped from the claim:
 * a replay makes none of the calls it cited.
 */
export function saveSubroutine(record: JudgedRun, { task, dir }: { task: Pick<Task, 'name' | 'revision' | 'prompt'>; dir: string }): string {
  const refuse = (why: string) => new InputError(`saveSubroutine (${task.name}): ${why}`);
  if (record.task !== task.prompt) throw refuse('the record is of another task (its prompt differs)');
  const confirmed = record.judged && !record.incomplete && record.claimed && record.actual && record.sideEffects.length === 0;
  if (!confirmed) {
    throw refuse(
      `the oracle did not confirm this run (claimed ${record.claimed}, actual ${record.actual}, ${record.sideEffects.length} side effects${record.incomplete ? ', incomplete' : ''}): only a confirmed run is saved`,
    );
  }
  const recorded = record.trace.filter((event) => event.type === 'harness_subroutine_step');
  const claim = recorded.findLast((event) => event.step.tool === 'finish' && event.step.ok);
  if (!claim) throw refuse('the trace has no recorded steps ending in finish: run the task with the subroutines layer on');
  const steps = recorded.filter((event) => event.attempt === claim.attempt && event.seq <= claim.seq).map((event) => event.step);
  const secret = steps.findIndex((step) => step.arguments.includes('[secret]'));
  if (secret !== -1) throw refuse(`step ${secret + 1} (${steps[secret]!.tool}) carries a secret: a subroutine never keeps one (sign in with the login layer)`);
  const last = steps.at(-1)!;
  const { evidence: _cited, ...finish } = parseJsonObject(last.arguments) ?? {};
  if (finish.success !== true) throw refuse('the run did not end by claiming success');
  steps[steps.length - 1] = { ...last, arguments: JSON.stringify(finish) };
  const file = subroutineFile(dir, task);
  mkdirSync(dir, { recursive: true });
  writeFileAtomic(file, `${JSON.stringify({ task: task.name, revision: task.revision, steps } satisfies Subroutine, null, 2)}\n`);
  return file;
}
