import type { StateChange } from '../report/types.ts';
import type { HnChange, HnSnapshot } from '../sites/hn/snapshot.ts';

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

/**
 * A fact about what a run changed on the site, checked by the oracle only, never against the
 * trace or the page. `check` judges the change from start to end (what the account had before
 * is not the run's work); `expects` says whether a change is one the task asked for: every change
 * no postcondition expects is a side effect. A postcondition that asks for no change (a read-only
 * task) expects none. `check` may be async (a site whose ground truth must be fetched); the
 * oracle awaits it.
 */
export interface Postcondition<State = unknown, Change extends StateChange = StateChange> {
  description: string;
  check(evidence: Evidence<State, Change>): Promise<Verdict> | Verdict;
  expects(change: Change, evidence: Evidence<State, Change>): boolean;
}

type HnEvidence = Evidence<HnSnapshot, HnChange>;
type HnPostcondition = Postcondition<HnSnapshot, HnChange>;

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

/** The story at `rank` when the run started is upvoted by the run's user during the run. */
export function upvoted({ rank }: { rank: number }): HnPostcondition {
  const target = ({ start }: HnEvidence) => start.ranking.find((entry) => entry.rank === rank);
  return {
    description: `the story ranked ${rank} at the start is upvoted`,
    check(evidence) {
      const story = target(evidence);
      if (!story) return { holds: false, detail: `no story ranked ${rank} at the start` };
      return voteDetail(evidence, story.id, `rank ${rank}`);
    },
    expects: (change, evidence) => isVoteOn(target(evidence), change, evidence.user),
  };
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
  const target = ({ start }: HnEvidence) => start.ranking.find((entry) => entry.title === title);
  return {
    description: `the story titled "${title}" is upvoted`,
    check(evidence) {
      const story = target(evidence);
      if (!story) return { holds: false, detail: `no story titled "${title}" at the start` };
      return voteDetail(evidence, story.id, JSON.stringify(title));
    },
    expects: (change, evidence) => isVoteOn(target(evidence), change, evidence.user),
  };
}

/** An answer as a reader would compare it: case, surrounding quotes and runs of white space do not count. */
export function normalizeAnswer(answer: string): string {
  return answer
    .trim()
    .replace(/^["'\u201c\u2018](.*)["'\u201d\u2019]$/su, '$1')
    .replace(/\s+/g, ' ')
    .trim()
    .toLowerCase();
}

/**
 * The claim's answer equals the ground truth (`expected`, or computed from the evidence, e.g. the
 * title ranked 3 at the start), as `normalizeAnswer` compares them: the whole answer, not a part
 * of it, so an answer that hedges with two candidates is wrong. It asks for no change to the site.
 */
export function answered<State = unknown, Change extends StateChange = StateChange>(
  expected: string | ((evidence: Evidence<State, Change>) => Promise<string | undefined> | string | undefined),
  { what = 'the answer' }: { what?: string } = {},
): Postcondition<State, Change> {
  return {
    description: `${what} is ${typeof expected === 'string' ? JSON.stringify(expected) : 'right'}`,
    async check(evidence) {
      const truth = typeof expected === 'string' ? expected : await expected(evidence);
      if (truth === undefined) return { holds: false, detail: `${what} has no ground truth on this site` };
      if (evidence.answer === undefined) return { holds: false, detail: `no answer given (${what} is ${JSON.stringify(truth)})` };
      if (normalizeAnswer(evidence.answer) === normalizeAnswer(truth)) return { holds: true, detail: `${what} is ${JSON.stringify(truth)}, as answered` };
      return { holds: false, detail: `answered ${JSON.stringify(evidence.answer)}, but ${what} is ${JSON.stringify(truth)}` };
    },
    expects: () => false,
  };
}

/** The title of the story ranked `rank` when the run started: an information task's ground truth. */
export function titleRanked(rank: number): (evidence: HnEvidence) => string | undefined {
  return ({ start }) => start.ranking.find((entry) => entry.rank === rank)?.title;
}
