import { z } from 'zod';
import { InputError, parseInput } from '../../input.ts';
import type { Postcondition, ResolveContext } from '../../core/task.ts';
import { boundAtStart } from '../../eval/postconditions.ts';
import type { HnChange, HnSnapshot } from './snapshot.ts';

/**
 * What HN's postcondition builders name an item by, and how they find it in the start snapshot:
 * a story by its rank or its title at the start, or any item (a story, a comment) by its id.
 */

export const targetSchema = z
  .strictObject({
    rank: z.number().int().min(1).optional(),
    title: z.string().min(1).optional(),
    id: z.union([z.string().regex(/^\d+$/, 'expected an item id (digits)'), z.number().int().min(1)]).optional(),
  })
  .refine((target) => [target.rank, target.title, target.id].filter((field) => field !== undefined).length === 1, 'expected one of rank, title or id');
export type TargetInput = z.input<typeof targetSchema>;
type Target = z.output<typeof targetSchema>;

/** An item as a postcondition names it: its id, the story whose page shows it, and its words in verdicts (`story 46194762 (rank 1)`). */
export interface Item {
  id: string;
  story: string;
  named: string;
}
/** What a postcondition names, found at the start, or why it is not there. */
export type Picked = Item | { missing: string };

/** A story of the start's ranking as an Item, named by `label` (`rank 1`); `missing` when there is none. */
export function storyItem<Story extends { id: string }>(story: Story | undefined, label: (story: Story) => string, missing: string): Picked {
  return story ? { id: story.id, story: story.id, named: `story ${story.id} (${label(story)})` } : { missing };
}

/** How a builder's call reads in an error, as its author wrote it: `hn.upvoted({ rank: 999 })`. */
export function callOf(builder: string, args: Record<string, unknown>): string {
  return `hn.${builder}(${literal(args)})`;
}

/** A value as a JavaScript literal reads: objects as `{ key: value }`, the rest as JSON. */
function literal(value: unknown): string {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return JSON.stringify(value);
  return `{ ${Object.entries(value)
    .map(([key, field]) => `${key}: ${literal(field)}`)
    .join(', ')} }`;
}

/** A builder's target, checked: a bad one is one InputError naming the call and the field. */
export function parseTarget(builder: string, target: TargetInput): Target {
  return parseInput(targetSchema, target, `hn.${builder}()`);
}

/** A target as a description says it, before any start is known. */
export function describeTarget(target: Target): string {
  if (target.rank !== undefined) return `the story ranked ${target.rank} at the start`;
  if (target.title !== undefined) return `the story titled ${JSON.stringify(target.title)}`;
  return `item ${target.id}`;
}

/** What the start lists, for an error that names what is there instead: `30 stories, ranks 1 to 30`. */
function listed(start: HnSnapshot, { comments = false } = {}): string {
  const ranks = start.ranking.map((story) => story.rank);
  const stories = ranks.length === 0 ? 'no story' : `${ranks.length} ${ranks.length === 1 ? 'story' : 'stories'}, ranks ${Math.min(...ranks)} to ${Math.max(...ranks)}`;
  return comments ? `${stories}, ${start.comments?.length ?? 0} comments` : stories;
}

/**
 * The item `target` names in `start`: a story by rank or title, or any item by id (a story it
 * ranks or one submitted on the site, a comment). `stories`: only a story will do (HN hides stories).
 */
export function findTarget(start: HnSnapshot, target: Target, { stories = false } = {}): Picked {
  if (target.rank !== undefined) return storyItem(start.ranking.find((story) => story.rank === target.rank), () => `rank ${target.rank}`, `no story at rank ${target.rank} at the start (${listed(start)})`);
  if (target.title !== undefined) return storyItem(start.ranking.find((story) => story.title === target.title), () => JSON.stringify(target.title), `no story titled ${JSON.stringify(target.title)} at the start (${listed(start)})`);
  const id = String(target.id);
  const ranked = start.ranking.find((story) => story.id === id);
  if (ranked) return storyItem(ranked, (story) => `rank ${story.rank}`, '');
  const submitted = start.submissions?.find((story) => story.id === id);
  if (submitted) return storyItem(submitted, (story) => JSON.stringify(story.title), '');
  const comment = start.comments?.find((candidate) => candidate.id === id);
  if (comment && stories) return { missing: `${id} is a comment at the start, not a story` };
  if (comment) return { id, story: comment.story, named: `comment ${id} (by ${comment.by})` };
  return { missing: `no ${stories ? 'story' : 'story or comment'} ${id} at the start (${listed(start, { comments: !stories })})` };
}

type HnPostcondition = Postcondition<HnSnapshot, HnChange>;

/**
 * A postcondition on what `pick` names at the start (`bound` makes it for that). Resolved, a target
 * the start lacks (`missing` says why) is bad input: one line naming `call` (`hn.upvoted({ rank:
 * 999 }): no story at rank 999 …`), thrown before any run, so a typo never reads as an infeasible
 * task. Not so where the task is infeasible (the missing target is its point), nor where the start
 * cannot read a part it `reads` (the run is refused as not applicable instead). Unresolved, it is
 * judged on what the evidence's start names, and cannot hold without it.
 */
export function onTarget<Named>({
  call,
  description,
  reads,
  pick,
  missing,
  bound,
}: {
  call: string;
  description: string;
  reads: readonly (keyof HnSnapshot)[];
  pick: (start: HnSnapshot) => Named;
  missing: (named: Named) => string | undefined;
  bound: (named: Named, start: HnSnapshot) => HnPostcondition;
}): HnPostcondition {
  return {
    ...boundAtStart(description, pick, bound),
    resolve(start: HnSnapshot, context?: ResolveContext) {
      const named = pick(start);
      const why = missing(named);
      const unread = reads.some((part) => start[part] === undefined);
      if (why !== undefined && context?.infeasible === undefined && !unread) throw new InputError(`${call}: ${why}`);
      return bound(named, start);
    },
  };
}

/** Why a Picked is not there, for `onTarget`. */
export const missingOf = (found: Picked): string | undefined => ('missing' in found ? found.missing : undefined);
