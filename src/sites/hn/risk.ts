/** A risk policy for Hacker News, as data for the `risk` layer: `risk({ rules: hnRiskRules, permits: ['upvote'] })`. */
export const hnRiskRules = [
  { name: 'vote', action: 'upvote', path: '^/vote$', query: { how: 'up' }, score: 80 },
  { name: 'unvote', action: 'unvote', path: '^/vote$', query: { how: 'un' }, score: 80 },
  { name: 'post a comment', action: 'comment', path: '^/comment$', submit: true, score: 90 },
  { name: 'flag or hide', action: 'flag', path: '^/(flag|hide)$', score: 60 },
  { name: 'log out', action: 'logout', path: '^/logout$', score: 50 },
  { name: 'leave the site', action: 'leave-site', host: '^(?!news\\.ycombinator\\.com$)', score: 90 },
];
