import type { Task } from '../../../core/task.ts';
import { pageOfRank } from '../paging.ts';
import type { HnSnapshot } from '../snapshot.ts';

/**
 * Suite tasks as templates over the start snapshot: each names what any capture has (the story
 * ranked 7, the first story whose thread was captured, a job ad when there is one), not the own
 * fixture's titles.
 */

type Story = HnSnapshot['ranking'][number];

/** What a template finds in the start snapshot, or why the capture lacks it. */
export type Found<Value> = Value | { missing: string };

function isMissing<Value>(found: Found<Value>): found is { missing: string } {
  return typeof found === 'object' && found !== null && 'missing' in found;
}

/**
 * A task `make` writes on what `find` picks in the start snapshot. As defined it is `make` on the
 * own fixture's pick (`fixture`, which `find` gives there), so it keeps its name and reads there as
 * it always did; `resolve` writes it on what another capture has, and `whyNotApplicable` says what a
 * capture lacks (then the task's own reasons). Its postconditions' session checks (`check`) come
 * with them, so they too name what this capture has.
 */
export function fromStart<Value>(fixture: Value, find: (start: HnSnapshot) => Found<Value>, make: (found: Value) => Task): Task {
  const task = make(fixture);
  return {
    ...task,
    whyNotApplicable(start) {
      const found = find(start as HnSnapshot);
      return isMissing(found) ? found.missing : make(found).whyNotApplicable?.(start);
    },
    resolve(start) {
      const found = find(start as HnSnapshot);
      // Asked where the task does not apply: the task as written, whose postconditions say what is missing.
      const { prompt, postconditions, reference } = isMissing(found) ? task : make(found);
      return { prompt, postconditions, reference };
    },
  };
}

/** The stories a reader could act on (a job ad takes no votes, has no comments), in rank order. */
const stories = (start: HnSnapshot): Story[] => start.ranking.filter((story) => !story.job).sort((a, b) => a.rank - b.rank);

/** A fact a listing shows of a story, which a capture may leave out (a job has no points or poster, a text post no site). */
type Shown = 'points' | 'by' | 'site';

/** The first story ranked `rank` or below it, or the last one when the capture lists fewer; `open`: only stories whose thread takes comments; `shows`: only stories the listing shows that fact of. */
export function storyFrom(rank: number, { open = false, shows }: { open?: boolean; shows?: Shown } = {}) {
  return (start: HnSnapshot): Found<Story> => {
    const listed = stories(start).filter((story) => (!open || !story.closed) && (!shows || story[shows] !== undefined));
    const none = open ? 'the capture lists no story that takes comments' : shows ? `the capture lists no story showing its ${shows === 'by' ? 'poster' : shows}` : 'the capture lists no story';
    return listed.find((story) => story.rank >= rank) ?? listed.at(-1) ?? { missing: none };
  };
}

/** The live top comment of story `id`: the first its thread lists at its top level (HN's best-ranked). */
export function topCommentOf(start: Pick<HnSnapshot, 'comments'>, id: string) {
  return start.comments?.find((comment) => comment.story === id && comment.parent === id && !comment.dead);
}

/** The `nth` story (from 1, by rank) whose thread was captured with a live top comment, or the last such when there are fewer; `open`: only threads that take replies. */
export function threadFrom(nth: number, { open = false } = {}) {
  return (start: HnSnapshot): Found<Story> => {
    const threads = stories(start).filter((story) => topCommentOf(start, story.id) && (!open || !story.closed));
    return threads[nth - 1] ?? threads.at(-1) ?? { missing: open ? "the capture has no thread that takes replies (no item page with one, or HN closed it)" : "the capture has no story's comments (no item page with its thread)" };
  };
}

/** The first page of the front page a capture lists: 1, or 2 for a capture of page 2 alone (ranks 31 to 60). */
export function firstPageOf(start: HnSnapshot): Found<number> {
  const first = Math.min(...start.ranking.map((story) => story.rank));
  return Number.isFinite(first) ? pageOfRank(first) : { missing: 'the capture lists no story' };
}

/** How a prompt names page `page` of the front page: the front page itself for page 1. */
export function frontPageNamed(page: number): string {
  return page === 1 ? 'the Hacker News front page' : `page ${page} of the Hacker News front page`;
}

/** Why a task on the stories ranked `ranks` does not apply: the capture lists none at one of them. */
export function ranksListed(...ranks: number[]) {
  return (start: unknown): string | undefined => {
    const missing = ranks.filter((rank) => !(start as HnSnapshot).ranking.some((story) => story.rank === rank));
    return missing.length > 0 ? `the capture lists no story ranked ${missing.join(', ')}` : undefined;
  };
}

/** A found story's title: what a task names it by. */
export const titleOf = (find: (start: HnSnapshot) => Found<Story>) => fieldOf(find, 'title');

/** A found story's rank: what a task on "the story ranked k" names it by. */
export const rankOf = (find: (start: HnSnapshot) => Found<Story>) => fieldOf(find, 'rank');

function fieldOf<Field extends 'title' | 'rank'>(find: (start: HnSnapshot) => Found<Story>, field: Field) {
  return (start: HnSnapshot): Found<Story[Field]> => {
    const story = find(start);
    return isMissing(story) ? story : story[field];
  };
}
