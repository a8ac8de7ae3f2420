import type { Evidence, Postcondition, Verdict } from '../../eval/postconditions.ts';
import type { HnChange, HnSnapshot } from './snapshot.ts';

/**
 * Hacker News's postconditions, each over the start snapshot (which story a task names) and the
 * diff (what the run changed): shared by the suite's tasks, as the generic ones (`answered`) are.
 */

export type HnEvidence = Evidence<HnSnapshot, HnChange>;
export type HnPostcondition = Postcondition<HnSnapshot, HnChange>;

/** Whether the run (not an earlier one) upvoted `id` as the run's user. */
function upvotedByRun({ diff, user }: HnEvidence, id: string): boolean {
  return diff.some((change) => change.kind === 'vote' && change.user === user && change.id === id);
}

/** Why a story counts as upvoted or not: a vote the account had at the start is named as such. */
function voteDetail(evidence: HnEvidence, id: string, label: string): Verdict {
  const { start, user } = evidence;
  if (upvotedByRun(evidence, id)) return { holds: true, detail: `story ${id} (${label}) is upvoted by ${user}` };
  if (start.votes[user]?.includes(id)) return { holds: false, detail: `story ${id} (${label}) was already upvoted by ${user} at the start: not the run's work` };
  return { holds: false, detail: `story ${id} (${label}) is not upvoted by ${user}` };
}

/** The one vote a single-story task asks for: the run's user upvoting `story`. */
function isVoteOn(story: { id: string } | undefined, change: HnChange, user: string): boolean {
  return story !== undefined && change.kind === 'vote' && change.user === user && change.id === story.id;
}

/** A story as the start snapshot lists it. */
type RankedStory = HnSnapshot['ranking'][number];

/**
 * The story `pick` finds in the start snapshot (the one a task names: by rank, by title, the
 * newest Show HN) is upvoted by the run's user during the run; with no such story it cannot hold
 * (`missing` says why), and any vote is a side effect. `label` names the story in verdicts.
 */
export function upvotedStory({ what, missing, label, pick }: { what: string; missing: string; label: (story: RankedStory) => string; pick: (start: HnSnapshot) => RankedStory | undefined }): HnPostcondition {
  return {
    description: `${what} is upvoted`,
    check(evidence) {
      const story = pick(evidence.start);
      if (!story) return { holds: false, detail: missing };
      return voteDetail(evidence, story.id, label(story));
    },
    expects: (change, evidence) => isVoteOn(pick(evidence.start), change, evidence.user),
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
  const matchingAt = ({ start }: HnEvidence) => start.ranking.filter((story) => story.rank <= FRONT_PAGE_SIZE && pattern.test(story.title));
  return {
    description: `every front-page story with the word "${word}" in its title is upvoted, and no other`,
    check(evidence) {
      const { diff, user } = evidence;
      const matching = matchingAt(evidence);
      const expected = new Set(matching.map((story) => story.id));
      const notByRun = matching.filter((story) => !upvotedByRun(evidence, story.id));
      const already = notByRun.filter((story) => evidence.start.votes[user]?.includes(story.id));
      const missing = notByRun.filter((story) => !already.includes(story));
      const extra = diff.filter((change) => change.kind === 'vote' && change.user === user && !expected.has(change.id)).map((change) => change.id);
      const list = (stories: typeof matching) => stories.map((story) => `${story.id} (rank ${story.rank})`).join(', ');
      const problems = [
        ...(missing.length > 0 ? [`not upvoted: ${list(missing)}`] : []),
        ...(already.length > 0 ? [`already upvoted at the start, not the run's work: ${list(already)}`] : []),
        ...(extra.length > 0 ? [`also upvoted: ${extra.join(', ')}`] : []),
      ];
      if (problems.length > 0) return { holds: false, detail: `${problems.join('; ')} (by ${user}, of ${matching.length} matching "${word}")` };
      return { holds: true, detail: `all ${matching.length} stories matching "${word}" are upvoted by ${user}, and no other` };
    },
    expects: (change, evidence) => matchingAt(evidence).some((story) => isVoteOn(story, change, evidence.user)),
  };
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
