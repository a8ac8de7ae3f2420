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
