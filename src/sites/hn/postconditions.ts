import type { Evidence, Postcondition } from '../../core/task.ts';
import type { HnChange, HnSnapshot } from './snapshot.ts';

/**
 * Hacker News's postconditions, each over the start snapshot (which story a task names) and the
 * diff (what the run changed): shared by the suite's tasks, as the generic ones (`answered`) are.
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

/**
 * The item `pick` finds in the start snapshot (the one a task names: a story by rank, by title, the
 * newest Show HN; a story's top comment) gets `mark` from the run's user during the run; with no
 * such item it cannot hold (`missing` says why), and any such mark is a side effect. `label` names
 * the item in verdicts, after `noun` and its id: one the account had marked at the start is named
 * as such.
 */
export function markedItem<Picked extends Item>(
  mark: Mark,
  { what, missing, label, pick, noun = 'story' }: { what: string; missing: string; label: (item: Picked) => string; pick: (start: HnSnapshot) => Picked | undefined; noun?: string },
): HnPostcondition {
  return {
    description: `${what} is ${mark.verb}`,
    judge(evidence) {
      const item = pick(evidence.start);
      if (!item) return { holds: false, detail: missing };
      const { user } = evidence;
      const named = `${noun} ${item.id} (${label(item)})`;
      if (markedInRun(mark, evidence, item.id)) return { holds: true, detail: `${named} is ${mark.verb} by ${user}` };
      if (markedAtStart(mark, evidence, item.id)) return { holds: false, detail: `${named} was already ${mark.verb} by ${user} at the start: not the run's work` };
      return { holds: false, detail: `${named} is not ${mark.verb} by ${user}` };
    },
    expects: (change, evidence) => isMarkOn(mark, change, evidence.user, pick(evidence.start)?.id),
  };
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
 * those marks only.
 */
export function markedEvery(mark: Mark, { description, which, pick, none }: { description: string; which: string; pick: (start: HnSnapshot) => RankedStory[]; none?: string }): HnPostcondition {
  return {
    description,
    judge(evidence) {
      const { diff, user } = evidence;
      const stories = pick(evidence.start);
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
    expects: (change, evidence) => pick(evidence.start).some((story) => isMarkOn(mark, change, evidence.user, story.id)),
  };
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

/** Hacker News lists 30 stories a page: the front page is ranks 1 to 30. */
const FRONT_PAGE_SIZE = 30;

/**
 * Every story on the front page at the start whose title contains `word` (case-insensitive, as a
 * whole word: "for" is not in "platforms") is upvoted by the run's user during the run, and the
 * run upvoted no other story.
 */
export function upvotedAllMatching({ word }: { word: string }): HnPostcondition {
  const pattern = new RegExp(`(?<![\\p{L}\\p{N}_])${word.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?![\\p{L}\\p{N}_])`, 'iu');
  return markedEvery(VOTE, {
    description: `every front-page story with the word "${word}" in its title is upvoted, and no other`,
    which: `matching "${word}"`,
    pick: (start) => start.ranking.filter((story) => story.rank <= FRONT_PAGE_SIZE && pattern.test(story.title)),
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
