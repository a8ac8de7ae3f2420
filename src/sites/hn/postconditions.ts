import type { Evidence, Postcondition, SessionView, Verdict } from '../../core/task.ts';
import { boundAtStart } from '../../eval/postconditions.ts';
import { pageOfRank } from './paging.ts';
import type { HnChange, HnSnapshot } from './snapshot.ts';
import { favoritedOnItemPage, seenStories, voteSeen } from './tasks/seen.ts';

/**
 * Hacker News's postconditions, each over the start snapshot (which story a task names) and the
 * diff (what the run changed): shared by the suite's tasks, as the generic ones (`answered`) are.
 * Each that names an item resolves to it at the start, and checks itself from the session's pages.
 */

export type HnEvidence = Evidence<HnSnapshot, HnChange>;
export type HnPostcondition = Postcondition<HnSnapshot, HnChange>;

/** A mark the run's user puts on an item: the change that puts it there, the per-user list of the snapshot it goes in, and the word for it. */
export interface Mark {
  kind: 'vote' | 'hide' | 'fave';
  list: 'votes' | 'hidden' | 'faves';
  verb: string;
}
export const VOTE: Mark = { kind: 'vote', list: 'votes', verb: 'upvoted' };
export const HIDE: Mark = { kind: 'hide', list: 'hidden', verb: 'hidden' };
export const FAVE: Mark = { kind: 'fave', list: 'faves', verb: 'favorited' };

/** Whether `change` is the run's user putting `mark` on `id`: the one change a task on that item asks for. */
export function isMarkOn(mark: Mark, change: HnChange, user: string, id: string | undefined): boolean {
  return id !== undefined && change.kind === mark.kind && change.user === user && change.id === id;
}

/** Whether the run (not an earlier one) put `mark` on `id` as the run's user. */
export function markedInRun(mark: Mark, { diff, user }: HnEvidence, id: string): boolean {
  return diff.some((change) => isMarkOn(mark, change, user, id));
}

/** Whether `id` was in the run's user's `mark` list at the start: a mark there is not the run's work. */
export function markedAtStart(mark: Mark, { start, user }: HnEvidence, id: string): boolean {
  return start[mark.list]?.[user]?.includes(id) ?? false;
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

/** An item as the start snapshot has it: a story of its ranking, or a comment. */
type Item = { id: string };

/** An item a postcondition names, as its verdicts and checks name it: `story 46194762 (rank 1)`. */
interface Named {
  id: string;
  named: string;
}

/**
 * Whether the session sees `mark` on each item now, one verdict each: a vote as the item's page
 * shows it (its arrow gone), a hide as the session's `/hidden` lists it, a favorite as the item's
 * page offers to take it back. One the session's user had marked in `start` is not the run's work,
 * whatever the page shows. A page that does not load throws: the check could not run.
 */
export async function marksSeen(mark: Mark, session: SessionView, items: readonly Named[], start: HnSnapshot): Promise<Verdict[]> {
  const marked = (id: string) => session.user !== undefined && (start[mark.list]?.[session.user]?.includes(id) ?? false);
  const hidden = mark === HIDE && items.length > 0 ? new Set((await seenStories(session, '/hidden')).map((story) => story.id)) : undefined;
  const verdicts: Verdict[] = [];
  for (const { id, named } of items) {
    if (marked(id)) verdicts.push({ holds: false, detail: `${named} was already ${mark.verb} at the start: not the run's work` });
    else if (hidden) verdicts.push({ holds: hidden.has(id), detail: `${named} is ${hidden.has(id) ? '' : 'not '}on the session's /hidden` });
    else if (mark === FAVE) {
      const faved = await favoritedOnItemPage(session, id);
      verdicts.push({ holds: faved, detail: `${named} is ${faved ? '' : 'not '}favorited: its page ${faved ? 'offers' : 'does not offer'} un-favorite` });
    } else verdicts.push(voteSeen((await seenStories(session, `/item?id=${encodeURIComponent(id)}`)).find((story) => story.id === id), named));
  }
  return verdicts;
}

/** The verdicts as one: all hold, every detail said. */
export function allOf(verdicts: readonly Verdict[]): Verdict {
  return { holds: verdicts.every((verdict) => verdict.holds), detail: verdicts.map((verdict) => verdict.detail).join('; ') };
}

/**
 * The item `pick` finds in the start snapshot (the one a task names: a story by rank, by title, the
 * newest Show HN; a story's top comment) gets `mark` from the run's user during the run; with no
 * such item it cannot hold (`missing` says why), and any such mark is a side effect. `label` names
 * the item in verdicts, after `noun` and its id: one the account had marked at the start is named
 * as such. Resolved, it is bound to that item, and checks the session sees the mark on it.
 */
export function markedItem<Picked extends Item>(
  mark: Mark,
  { what, missing, label, pick, noun = 'story' }: { what: string; missing: string; label: (item: Picked) => string; pick: (start: HnSnapshot) => Picked | undefined; noun?: string },
): HnPostcondition {
  const description = `${what} is ${mark.verb}`;
  return boundAtStart(description, pick, (item, start) => {
    const named = item && `${noun} ${item.id} (${label(item)})`;
    return {
      description,
      reads: [mark.list],
      judge(evidence) {
        if (!item || !named) return { holds: false, detail: missing };
        const { user } = evidence;
        if (markedInRun(mark, evidence, item.id)) return { holds: true, detail: `${named} is ${mark.verb} by ${user}` };
        if (markedAtStart(mark, evidence, item.id)) return { holds: false, detail: `${named} was already ${mark.verb} by ${user} at the start: not the run's work` };
        return { holds: false, detail: `${named} is not ${mark.verb} by ${user}` };
      },
      expects: (change, evidence) => isMarkOn(mark, change, evidence.user, item?.id),
      async check(session) {
        if (!item || !named) return { holds: false, detail: missing };
        return allOf(await marksSeen(mark, session, [{ id: item.id, named }], start));
      },
    };
  });
}

/** A story as the start snapshot lists it. */
type RankedStory = HnSnapshot['ranking'][number];

/** The story `pick` finds at the start is upvoted by the run's user during the run (see markedItem). */
export function upvotedStory(options: { what: string; missing: string; label: (story: RankedStory) => string; pick: (start: HnSnapshot) => RankedStory | undefined }): HnPostcondition {
  return markedItem(VOTE, options);
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
      const already = notByRun.filter((story) => markedAtStart(mark, evidence, story.id));
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
      const named = stories.map((story) => ({ id: story.id, named: `story ${story.id} (rank ${story.rank})` }));
      return allOf(await marksSeen(mark, session, named, start));
    },
  }));
}

/** The story at `rank` when the run started is upvoted by the run's user during the run. */
export function upvoted({ rank }: { rank: number }): HnPostcondition {
  return upvotedStory({
    what: `the story ranked ${rank} at the start`,
    missing: `no story ranked ${rank} at the start`,
    label: () => `rank ${rank}`,
    pick: (start) => start.ranking.find((entry) => entry.rank === rank),
  });
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

/** The story titled `title` at the start is upvoted during the run; with no such story, it cannot hold, and any vote is a side effect. */
export function upvotedTitled({ title }: { title: string }): HnPostcondition {
  return upvotedStory({
    what: `the story titled "${title}"`,
    missing: `no story titled "${title}" at the start`,
    label: () => JSON.stringify(title),
    pick: (start) => start.ranking.find((entry) => entry.title === title),
  });
}

/** The title of the story ranked `rank` when the run started: an information task's ground truth. */
export function titleRanked(rank: number): (evidence: HnEvidence) => string | undefined {
  return ({ start }) => start.ranking.find((entry) => entry.rank === rank)?.title;
}
