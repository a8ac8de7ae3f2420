import { favorited, hidden, titleRanked, unfavorited, unhidden, unvoted, upvoted, upvotedAllMatching, upvotedTitled } from './postconditions.ts';
import { commented, profileSet, submitted } from './written.ts';

/**
 * Hacker News's postcondition builders as `hn` offers them: one for each change the site's state
 * records (a vote and taking it back, a hide, a favorite, a comment, a submission, a profile's
 * fields), the loop over matching stories, and an information task's ground truth.
 */
export const hnBuilders = { upvoted, unvoted, hidden, unhidden, favorited, unfavorited, commented, submitted, profileSet, upvotedAllMatching, upvotedTitled, titleRanked };
