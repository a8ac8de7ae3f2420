import type { Page } from '@playwright/test';
import { z } from 'zod';
import type { Site } from './site.ts';
import type { StateChange } from './state.ts';

/**
 * Ground truth at the run's start and end, every change between them (as the site's pack
 * computes it), whose account the run used, and the answer the agent's claim gave (an
 * information task's answer is judged against the ground truth; the claim's word that it
 * succeeded is not evidence, and neither are its trace or its page).
 */
export interface Evidence<State = unknown, Change extends StateChange = StateChange> {
  start: State;
  end: State;
  diff: readonly Change[];
  user: string;
  answer?: string;
}

export interface Verdict {
  holds: boolean;
  detail: string;
}

/** What resolving a postcondition knows of its task. */
export interface ResolveContext {
  /** Why the task is infeasible, when it is: a target missing at the start is then the task's point, not a typo. */
  infeasible?: string;
}

/**
 * A fact about what a run changed on the site. The oracle's verdict (`judge`) reads ground truth
 * only, never the trace or the page; `check` is the harness's own look at it. `judge` judges the change from start to end (what the account had before
 * is not the run's work); `expects` says whether a change is one the task asked for: every change
 * no postcondition expects is a side effect. A postcondition that asks for no change (a read-only
 * task) expects none. `judge` may be async (a site whose ground truth must be fetched); the
 * oracle awaits it.
 */
export interface Postcondition<State = unknown, Change extends StateChange = StateChange> {
  description: string;
  judge(evidence: Evidence<State, Change>): Promise<Verdict> | Verdict;
  expects(change: Change, evidence: Evidence<State, Change>): boolean;
  /**
   * The postcondition bound to what it names, read once from the start snapshot (the item at rank
   * 1 becomes item 46194762): the oracle, `verify` and `stop-on-success` all judge that identity,
   * so hiding or reordering cannot make another item the target. Absent: it names no item. What it
   * names missing from the start is bad input (a typo: `rank: 999`), thrown as one line naming the
   * field and the value, unless its task is infeasible (`context.infeasible`): then it cannot hold.
   */
  resolve?(start: State, context?: ResolveContext): Postcondition<State, Change>;
  /**
   * The harness-side check (what `verify` and `stop-on-success` run): whether the postcondition
   * looks true from the agent's own session now, through the site kit's pages, never ground truth.
   * It may be fooled where the oracle is not, and is measured like any other part of the harness.
   * A postcondition that names an item by rank or title has it only once resolved (a check that
   * picked the item from the page now would follow whatever hiding or reordering put there).
   * Absent where no session-side check is possible (an answer): the layers then record the claim
   * as unverified. A page that does not load throws: the check could not run, and confirms nothing.
   */
  check?(session: SessionView): Promise<Verdict>;
  /**
   * The parts of the site's state (fields of its snapshot) `judge` reads beyond what every snapshot
   * of the site has. A site whose start snapshot lacks one (a live site that cannot read every part)
   * cannot judge it, and the run is refused before it starts. Absent: none.
   */
  reads?: readonly string[];
}

/**
 * The task contract: what an agent is asked, what must be true of the site afterwards, and the
 * task's own solution. A site kit's suite is a list of them; a spec may write its own.
 */

/** What a task's reference solution ends with: done (with the answer to an information task), or why no one can do it. */
export type ReferenceOutcome = { answer?: string; impossible?: undefined } | { impossible: string };

/**
 * The task's own scripted solution, run in `page` (the `referenceAgent()` control): a task is valid
 * only when it succeeds. It signs in outside the page, so no password is typed into it. On an
 * infeasible task it finds nothing to do, changes nothing and says why (`impossible`).
 */
export type Reference = (page: Page, site: Site) => Promise<ReferenceOutcome | void>;

/** The site as the agent's own session sees it: a page's status and markup, loaded now with the session's cookies. */
export interface SessionView {
  load(path: string): Promise<{ status: number; html: string }>;
  /** The account the run signs in with, when the harness knows it: a mark it had at the start is not the run's work. */
  readonly user?: string;
}

/**
 * What a task written as a template (the item at rank 7, an item whose thread was captured, the
 * job ad) says on the site a run starts from: its prompt, postconditions and reference name what
 * the start snapshot has there.
 */
export interface TaskInstance {
  prompt: string;
  postconditions: Postcondition[];
  reference?: Reference;
}

/** What a task is, for reading a suite by kind: a report gives tasks per tag. */
export const taskTags = ['navigation', 'form', 'multi-step', 'loop', 'information', 'infeasible', 'needs-login', 'side-effect-trap'] as const;
export type TaskTag = (typeof taskTags)[number];

const isFunction = (value: unknown) => typeof value === 'function';
const postconditionSchema = z.custom<Postcondition>(
  (value) => typeof value === 'object' && value !== null && typeof (value as Postcondition).description === 'string' && isFunction((value as Postcondition).judge) && isFunction((value as Postcondition).expects),
  'expected a postcondition { description, judge(evidence), expects(change, evidence) }',
);

export const taskSchema = z
  .object({
    /** The task's name in cells, reports and `harness-eval judge --task`. */
    name: z.string().regex(/^[a-z0-9]+(-[a-z0-9]+)*$/, 'expected lower-case words joined by "-" (my-first-task)'),
    /**
     * Bumped whenever the prompt or the postconditions change: runs of two revisions are two tasks,
     * and never pool into one cell (the run's condition carries it). 1 unless a task says otherwise.
     */
    revision: z.number().int().min(1).default(1),
    tags: z.array(z.enum(taskTags)).default([]),
    /**
     * Why no agent can do the task (the story it names was never posted): its only right outcome is a
     * truthful failure. It tags the task `infeasible`, and its postconditions resolve knowing it: what
     * they name missing at the start is then expected, not bad input.
     */
    infeasible: z.string().min(1).optional(),
    prompt: z.string().min(1),
    postconditions: z.array(postconditionSchema).min(1, 'a task needs a postcondition: with none, no run could be actual'),
    reference: z.custom<Reference>(isFunction, 'expected a function (page, site) => outcome').optional(),
    /**
     * Why the task does not apply to a site as the run would start it (its capture has no comments,
     * no user page), or undefined when it does: such a task is skipped there, with this reason.
     */
    whyNotApplicable: z.custom<(start: unknown) => string | undefined>(isFunction, 'expected a function (start) => reason | undefined').optional(),
    /**
     * The task as it reads on the start snapshot, for a template: called once the task applies, and
     * the run (its agent, its oracle) gets that prompt, those postconditions and that reference; the
     * name, revision and tags stay the task's. Absent: the task as written, on any start.
     */
    resolve: z.custom<(start: unknown) => TaskInstance>(isFunction, 'expected a function (start) => { prompt, postconditions, reference }').optional(),
  })
  .refine((task) => task.infeasible !== undefined || !task.tags.includes('infeasible'), { path: ['infeasible'], message: "a task tagged infeasible says why: infeasible: 'reason'" })
  .transform((task) => (task.infeasible === undefined ? task : declaredInfeasible(task, task.infeasible)));
export type Task = z.output<typeof taskSchema>;
/** A task as its author writes it: `revision` and `tags` may be left out (1, and none). */
export type TaskInput = z.input<typeof taskSchema>;

/**
 * An infeasible task as it runs: tagged so, and its postconditions (and a template's) resolve with
 * the reason, wherever they are resolved, so a missing target is taken as the task's point.
 */
function declaredInfeasible<T extends { tags: TaskTag[]; postconditions: Postcondition[]; resolve?: (start: unknown) => TaskInstance }>(task: T, reason: string): T {
  const knowing = (postconditions: readonly Postcondition[]) =>
    postconditions.map((postcondition) => (postcondition.resolve ? { ...postcondition, resolve: (start: unknown) => postcondition.resolve!(start, { infeasible: reason }) } : postcondition));
  const { resolve } = task;
  return {
    ...task,
    tags: task.tags.includes('infeasible') ? task.tags : [...task.tags, 'infeasible'],
    postconditions: knowing(task.postconditions),
    ...(resolve && {
      resolve(start: unknown) {
        const instance = resolve(start);
        return { ...instance, postconditions: knowing(instance.postconditions) };
      },
    }),
  };
}
