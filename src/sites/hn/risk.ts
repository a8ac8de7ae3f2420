/** A risk policy for Hacker News, as data for the `risk` layer: `risk({ rules: hnRiskRules, permits: ['upvote'] })`. Actions by the kinds HN's classifier names. */
export const hnRiskRules = [
  { name: 'vote', action: 'upvote', kind: 'vote', score: 80 },
  { name: 'unvote', action: 'unvote', kind: 'unvote', score: 80 },
  { name: 'post a comment', action: 'comment', kind: 'comment', score: 90 },
  { name: 'flag or hide', action: 'flag', kind: ['flag', 'unflag', 'hide', 'unhide'], score: 60 },
  { name: 'log out', action: 'logout', kind: 'logout', score: 50 },
  { name: 'leave the site', action: 'leave-site', host: '^(?!news\\.ycombinator\\.com$)', score: 90 },
];
