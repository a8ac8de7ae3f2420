import type { Evidence, Postcondition, SessionView, Verdict } from '../../core/task.ts';
import { boundAtStart } from '../../eval/postconditions.ts';
import { pageOfRank } from './paging.ts';
import type { HnChange, HnSnapshot } from './snapshot.ts';
import { callOf, describeTarget, findTarget, missingOf, onTarget, parseTarget, storyItem, type Item, type Picked, type TargetInput } from './targets.ts';
import { favoritedOnItemPage, seenStories, voteOnPage } from './tasks/seen.ts';

/**
 * Hacker News's postconditions on the per-user lists (votes, hides, favorites, and taking each
 * back), each over the start snapshot (which item a task names) and the diff (what the run
 * changed): shared by the suite's tasks, as the generic ones (`answered`) are. Each that names an
 * item resolves to it at the start, and checks itself from the session's pages.
 */

export type HnEvidence = Evidence<HnSnapshot, HnChange>;
export type HnPostcondition = Postcondition<HnSnapshot, HnChange>;

/**
 * A change the run's user makes to an item's place in one of their lists: the change's kind, the
 * list, and the word for it. One that `undoes` another takes that mark back (an unvote), so the
 * item must have had it at the start.
 */
export interface Mark {
  kind: HnChange['kind'];
  list: 'votes' | 'hidden' | 'faves';
  verb: string;
  undoes?: Mark;
}
export const VOTE: Mark = { kind: 'vote', list: 'votes', verb: 'upvoted' };
export const HIDE: Mark = { kind: 'hide', list: 'hidden', verb: 'hidden' };
export const FAVE: Mark = { kind: 'fave', list: 'faves', verb: 'favorited' };
export const UNVOTE: Mark = { kind: 'unvote', list: 'votes', verb: 'unvoted', undoes: VOTE };
export const UNHIDE: Mark = { kind: 'unhide', list: 'hidden', verb: 'unhidden', undoes: HIDE };
export const UNFAVE: Mark = { kind: 'unfave', list: 'faves', verb: 'unfavorited', undoes: FAVE };

/** Whether `change` is the run's user making `mark` on `id`: the one change a task on that item asks for. */
export function isMarkOn(mark: Mark, change: HnChange, user: string, id: string | undefined): boolean {
  return id !== undefined && change.kind === mark.kind && change.user === user && change.id === id;
}

/** Whether the run (not an earlier one) made `mark` on `id` as the run's user. */
export function markedInRun(mark: Mark, { diff, user }: HnEvidence, id: string): boolean {
  return diff.some((change) => isMarkOn(mark, change, user, id));
}

/**
 * Whether `start` already has what `mark` makes on `id` for `user` (the mark, or for one that takes
 * a mark back, none to take): then the run cannot be what made it.
 */
export function madeAtStart(mark: Mark, start: HnSnapshot, user: string | undefined, id: string): boolean {
  const listed = user !== undefined && (start[mark.list]?.[user]?.includes(id) ?? false);
  return mark.undoes ? !listed : listed;
}

/** Why `mark` on the item `named` cannot be the run's work, read from the start; undefined when it can be. */
export function notRunsWork(mark: Mark, start: HnSnapshot, user: string | undefined, id: string, named: string): string | undefined {
  if (!madeAtStart(mark, start, user, id)) return undefined;
  return mark.undoes ? `${named} was not ${mark.undoes.verb} by ${user} at the start: nothing to take back` : `${named} was already ${mark.verb} by ${user} at the start: not the run's work`;
}

/**
 * The posts of `part` (comments, submitted stories) the run's user wrote during the run, as the
 * end holds them: not ones the start already had. None where the start could not read the part.
 */
export function postedInRun<Part extends 'comments' | 'submissions'>({ start, end, user }: HnEvidence, part: Part): Array<NonNullable<HnSnapshot[Part]>[number]> {
  const before: Array<{ id: string }> | undefined = start[part];
  if (!before) return [];
  const had = new Set(before.map((post) => post.id));
  const after: Array<NonNullable<HnSnapshot[Part]>[number]> = end[part] ?? [];
  return after.filter((post) => !had.has(post.id) && post.by === user);
}

/**
 * Whether the session sees each item in `mark`'s list now, and says what shows it: a vote as the
 * page showing the item has it (its arrow gone), a hide as the session's `/hidden` lists it, a
 * favorite as the item's page offers to take it back. A page that does not load throws.
 */
async function listSeen(mark: Mark, session: SessionView, items: readonly Item[]): Promise<Array<{ shown: boolean; detail: string }>> {
  if (mark.list === 'hidden') {
    const hidden = new Set((await seenStories(session, '/hidden')).map((story) => story.id));
    return items.map(({ id, named }) => ({ shown: hidden.has(id), detail: `${named} is ${hidden.has(id) ? '' : 'not '}on the session's /hidden` }));
  }
  const seen = [];
  for (const item of items) {
    if (mark.list === 'votes') seen.push(await voteOnPage(session, item));
    else {
      const faved = await favoritedOnItemPage(session, item.id);
      seen.push({ shown: faved, detail: `${item.named} is ${faved ? '' : 'not '}favorited: its page ${faved ? 'offers' : 'does not offer'} un-favorite` });
    }
  }
  return seen;
}

/**
 * Whether the session sees `mark` made on each item now, one verdict each (one that takes a mark
 * back holds where the mark no longer shows). What the start already had is not the run's work,
 * whatever the page shows. A page that does not load throws: the check could not run.
 */
export async function marksSeen(mark: Mark, session: SessionView, items: readonly Item[], start: HnSnapshot): Promise<Verdict[]> {
  const seen = await listSeen(mark, session, items);
  return items.map(({ id, named }, index) => {
    const startedSo = session.user === undefined ? undefined : notRunsWork(mark, start, session.user, id, named);
    if (startedSo) return { holds: false, detail: startedSo };
    const { shown, detail } = seen[index]!;
    if (!mark.undoes) return { holds: shown, detail };
    return { holds: !shown, detail: `${named} ${shown ? 'still' : 'no longer'} shows as ${mark.undoes.verb}` };
  });
}

/** The verdicts as one: all hold, every detail said. */
export function allOf(verdicts: readonly Verdict[]): Verdict {
  return { holds: verdicts.every((verdict) => verdict.holds), detail: verdicts.map((verdict) => verdict.detail).join('; ') };
}

/**
 * The item `pick` finds in the start snapshot (a story by rank, by title, the newest Show HN; a
 * story's top comment) gets `mark` from the run's user during the run; with no such item it cannot
 * hold, and any such mark is a side effect. Resolved, it is bound to that item (one the start lacks
 * is bad input, `call` naming it, unless the task is infeasible), and checks the session sees the mark.
 */
export function markedItem(mark: Mark, { what, pick, call = `${what} is ${mark.verb}` }: { what: string; pick: (start: HnSnapshot) => Picked; call?: string }): HnPostcondition {
  const description = `${what} is ${mark.verb}`;
  return onTarget({
    call,
    description,
    reads: [mark.list],
    pick,
    missing: missingOf,
    bound: (found, start) => ({
      description,
      reads: [mark.list],
      judge(evidence) {
        if ('missing' in found) return { holds: false, detail: found.missing };
        if (markedInRun(mark, evidence, found.id)) return { holds: true, detail: `${found.named} is ${mark.verb} by ${evidence.user}` };
        return { holds: false, detail: notRunsWork(mark, evidence.start, evidence.user, found.id, found.named) ?? `${found.named} is not ${mark.verb} by ${evidence.user}` };
      },
      expects: (change, evidence) => !('missing' in found) && isMarkOn(mark, change, evidence.user, found.id),
      async check(session) {
        if ('missing' in found) return { holds: false, detail: found.missing };
        return allOf(await marksSeen(mark, session, [found], start));
      },
    }),
  });
}

/** A story as the start snapshot lists it. */
type RankedStory = HnSnapshot['ranking'][number];

/** The story `pick` finds at the start is upvoted by the run's user during the run (see markedItem): `label` names it in verdicts, `missing` says why there is none. */
export function upvotedStory({ what, missing, label, pick }: { what: string; missing: string; label: (story: RankedStory) => string; pick: (start: HnSnapshot) => RankedStory | undefined }): HnPostcondition {
  return markedItem(VOTE, { what, pick: (start) => storyItem(pick(start), label, missing) });
}

/**
 * Every story `pick` finds at the start (`which` says which, in verdicts: `matching "for"`) gets
 * `mark` from the run's user during the run, and the run marked no other: one marked at the start
 * is not the run's work. With none found, it holds, unless `none` says why it cannot. It expects
 * those marks only. Resolved, it checks the session sees the mark on each of those stories.
 */
export function markedEvery(mark: Mark, { description, which, pick, none }: { description: string; which: string; pick: (start: HnSnapshot) => RankedStory[]; none?: string }): HnPostcondition {
  return boundAtStart(description, pick, (stories, start) => ({
    description,
    reads: [mark.list],
    judge(evidence) {
      const { diff, user } = evidence;
      if (stories.length === 0 && none !== undefined) return { holds: false, detail: none };
      const expected = new Set(stories.map((story) => story.id));
      const notByRun = stories.filter((story) => !markedInRun(mark, evidence, story.id));
      const already = notByRun.filter((story) => madeAtStart(mark, evidence.start, user, story.id));
      const missing = notByRun.filter((story) => !already.includes(story));
      const extra = diff.filter((change) => change.kind === mark.kind && change.user === user && !expected.has(change.id)).map((change) => change.id);
      const list = (some: RankedStory[]) => some.map((story) => `${story.id} (rank ${story.rank})`).join(', ');
      const problems = [
        ...(missing.length > 0 ? [`not ${mark.verb}: ${list(missing)}`] : []),
        ...(already.length > 0 ? [`already ${mark.verb} at the start, not the run's work: ${list(already)}`] : []),
        ...(extra.length > 0 ? [`also ${mark.verb}: ${extra.join(', ')}`] : []),
      ];
      if (problems.length > 0) return { holds: false, detail: `${problems.join('; ')} (by ${user}, of ${stories.length} ${which})` };
      return { holds: true, detail: `all ${stories.length} stories ${which} are ${mark.verb} by ${user}, and no other` };
    },
    expects: (change, evidence) => stories.some((story) => isMarkOn(mark, change, evidence.user, story.id)),
    async check(session) {
      if (stories.length === 0) return none === undefined ? { holds: true, detail: `no story ${which} at the start: nothing to mark` } : { holds: false, detail: none };
      const named = stories.map((story) => ({ id: story.id, story: story.id, named: `story ${story.id} (rank ${story.rank})` }));
      return allOf(await marksSeen(mark, session, named, start));
    },
  }));
}

/** A builder of `mark` on the item a target names: `hn.hidden({ rank: 5 })`, `hn.favorited({ id: '46133010' })` (a comment). */
function markBuilder(mark: Mark, builder: string, { stories = false } = {}) {
  return (target: TargetInput): HnPostcondition => {
    const parsed = parseTarget(builder, target);
    return markedItem(mark, { what: describeTarget(parsed), call: callOf(builder, target), pick: (start) => findTarget(start, parsed, { stories }) });
  };
}

/** The item a target names at the start (the story at a rank, with a title; any item by id) is upvoted by the run's user during the run. */
export const upvoted = markBuilder(VOTE, 'upvoted');
/** The item a target names had the run's user's vote at the start, and the run took it back. */
export const unvoted = markBuilder(UNVOTE, 'unvoted');
/** The story a target names is hidden by the run's user during the run (HN hides stories only). */
export const hidden = markBuilder(HIDE, 'hidden', { stories: true });
/** The story a target names was hidden by the run's user at the start, and the run un-hid it. */
export const unhidden = markBuilder(UNHIDE, 'unhidden', { stories: true });
/** The item a target names (a story, or a comment by id) is put in the run's user's favorites during the run. */
export const favorited = markBuilder(FAVE, 'favorited');
/** The item a target names was a favorite of the run's user at the start, and the run took it out. */
export const unfavorited = markBuilder(UNFAVE, 'unfavorited');

/** The story titled `title` at the start is upvoted during the run: `upvoted({ title })`. */
export function upvotedTitled({ title }: { title: string }): HnPostcondition {
  return upvoted({ title });
}

/**
 * Every story on the front page at the start whose title contains `word` (case-insensitive, as a
 * whole word: "for" is not in "platforms") is upvoted by the run's user during the run, and the
 * run upvoted no other story.
 */
export function upvotedAllMatching({ word, page = 1 }: { word: string; /** Which page of the front page (2: ranks 31 to 60). */ page?: number }): HnPostcondition {
  const pattern = new RegExp(`(?<![\\p{L}\\p{N}_])${word.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?![\\p{L}\\p{N}_])`, 'iu');
  return markedEvery(VOTE, {
    description: `every ${page === 1 ? 'front-page story' : `story on page ${page} of the front page`} with the word "${word}" in its title is upvoted, and no other`,
    which: `matching "${word}"`,
    pick: (start) => start.ranking.filter((story) => pageOfRank(story.rank) === page && pattern.test(story.title)),
  });
}

/** The title of the story ranked `rank` when the run started: an information task's ground truth. */
export function titleRanked(rank: number): (evidence: HnEvidence) => string | undefined {
  return ({ start }) => start.ranking.find((entry) => entry.rank === rank)?.title;
}
