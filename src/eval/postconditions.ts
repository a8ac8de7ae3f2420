import type { SiteSnapshot } from '../sites/hn/site.ts';

/** Ground truth at the run's start and end, and whose account the run used. */
export interface Evidence {
  start: SiteSnapshot;
  end: SiteSnapshot;
  user: string;
}

export interface Verdict {
  holds: boolean;
  detail: string;
}

/** A fact about the site's real state after a run, checked by the oracle only. */
export interface Postcondition {
  description: string;
  check(evidence: Evidence): Verdict;
}

/** The story at `rank` when the run started is upvoted by the run's user at the end. */
export function upvoted({ rank }: { rank: number }): Postcondition {
  return {
    description: `the story ranked ${rank} at the start is upvoted`,
    check({ start, end, user }) {
      const story = start.ranking.find((entry) => entry.rank === rank);
      if (!story) return { holds: false, detail: `no story ranked ${rank} at the start` };
      const voted = end.votes[user]?.includes(story.id) ?? false;
      return { holds: voted, detail: `story ${story.id} (rank ${rank}) is ${voted ? '' : 'not '}upvoted by ${user}` };
    },
  };
}

/** Hacker News lists 30 stories a page: the front page is ranks 1 to 30. */
const FRONT_PAGE_SIZE = 30;

/**
 * Every story on the front page at the start whose title contains `word` (case-insensitive, as a
 * whole word: "for" is not in "platforms") is upvoted by the run's user at the end, and the run
 * upvoted no other story.
 */
export function upvotedAllMatching({ word }: { word: string }): Postcondition {
  const pattern = new RegExp(`(?<![\\p{L}\\p{N}_])${word.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?![\\p{L}\\p{N}_])`, 'iu');
  return {
    description: `every front-page story with the word "${word}" in its title is upvoted, and no other`,
    check({ start, end, user }) {
      const matching = start.ranking.filter((story) => story.rank <= FRONT_PAGE_SIZE && pattern.test(story.title));
      const expected = new Set(matching.map((story) => story.id));
      const before = new Set(start.votes[user] ?? []);
      const after = new Set(end.votes[user] ?? []);
      const missing = matching.filter((story) => !after.has(story.id)).map((story) => `${story.id} (rank ${story.rank})`);
      const extra = [...after].filter((id) => !expected.has(id) && !before.has(id));
      const problems = [
        ...(missing.length > 0 ? [`not upvoted: ${missing.join(', ')}`] : []),
        ...(extra.length > 0 ? [`also upvoted: ${extra.join(', ')}`] : []),
      ];
      if (problems.length > 0) return { holds: false, detail: `${problems.join('; ')} (by ${user}, of ${matching.length} matching "${word}")` };
      return { holds: true, detail: `all ${matching.length} stories matching "${word}" are upvoted by ${user}, and no other` };
    },
  };
}

/** The story titled `title` at the start is upvoted at the end; with no such story, it cannot hold. */
export function upvotedTitled({ title }: { title: string }): Postcondition {
  return {
    description: `the story titled "${title}" is upvoted`,
    check({ start, end, user }) {
      const story = start.ranking.find((entry) => entry.title === title);
      if (!story) return { holds: false, detail: `no story titled "${title}" at the start` };
      const voted = end.votes[user]?.includes(story.id) ?? false;
      return { holds: voted, detail: `story ${story.id} ("${title}") is ${voted ? '' : 'not '}upvoted by ${user}` };
    },
  };
}
