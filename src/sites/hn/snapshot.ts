import { z } from 'zod';
import type { StateChange } from '../site.ts';

/**
 * Hacker News as the oracle reads it: every user's votes (stories and comments), and the front
 * page's ranking, which tasks name stories by. Sessions are not in it: logging in is not the task's
 * work. The ranking is the world's doing, not the run's, so it is never diffed. The replica's
 * `GET /__harness/state` answers this shape (with its request count), as `harness-eval judge` reads it.
 */
export const hnSnapshotSchema = z.object({
  votes: z.record(z.string(), z.array(z.string())),
  ranking: z.array(z.object({ rank: z.number().int().min(1), id: z.string(), title: z.string() })),
  /**
   * The items whose votes this snapshot could read, when not all (the live site sees only what its
   * pages show): an item outside it has no known vote, and no change of it is claimed.
   */
  scope: z.array(z.string()).optional(),
});
export type HnSnapshot = z.infer<typeof hnSnapshotSchema>;

/** A vote given or taken back, by `user`, on item `id`. */
export interface HnChange extends StateChange {
  kind: 'vote' | 'unvote';
  user: string;
}

/** Every vote given or taken back between two snapshots, user by user, in the order the end lists them. */
export function hnDiff(start: HnSnapshot, end: HnSnapshot): HnChange[] {
  const known = (id: string) => [start.scope, end.scope].every((scope) => scope === undefined || scope.includes(id));
  const titles = new Map([...start.ranking, ...end.ranking].map((story) => [story.id, story.title]));
  const change = (kind: HnChange['kind'], user: string, id: string): HnChange => {
    const title = titles.get(id);
    return { kind, id, user, detail: `${user} ${kind === 'vote' ? 'upvoted' : 'unvoted'} ${id}${title === undefined ? '' : ` (${JSON.stringify(title)})`}` };
  };
  const users = [...new Set([...Object.keys(start.votes), ...Object.keys(end.votes)])].sort();
  return users.flatMap((user) => {
    const before = new Set(start.votes[user] ?? []);
    const after = new Set(end.votes[user] ?? []);
    return [
      ...[...after].filter((id) => !before.has(id) && known(id)).map((id) => change('vote', user, id)),
      ...[...before].filter((id) => !after.has(id) && known(id)).map((id) => change('unvote', user, id)),
    ];
  });
}
