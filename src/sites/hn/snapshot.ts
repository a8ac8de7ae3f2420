import { z } from 'zod';
import type { StateChange } from '../site.ts';

/** User → item ids: one of the per-user lists HN keeps (votes, hidden, favorites). */
const userListSchema = z.record(z.string(), z.array(z.string()));

/**
 * Hacker News as the oracle reads it: every user's votes (stories and comments), hidden stories
 * and favorites, and the front page's ranking, which tasks name stories by. Sessions are not in
 * it: logging in is not the task's work. The ranking is the world's doing, not the run's, so it is
 * never diffed (a story the user hid is gone from the user's `/news`, but keeps its rank here). The
 * replica's `GET /__harness/state` answers this shape (with its request count), as `harness-eval
 * judge` reads it.
 */
export const hnSnapshotSchema = z.object({
  votes: userListSchema,
  /** Absent when the snapshot could not read them (the live site): no change of them is claimed. */
  hidden: userListSchema.optional(),
  faves: userListSchema.optional(),
  ranking: z.array(z.object({ rank: z.number().int().min(1), id: z.string(), title: z.string() })),
  /**
   * The items whose votes this snapshot could read, when not all (the live site sees only what its
   * pages show): an item outside it has no known vote, and no change of it is claimed.
   */
  scope: z.array(z.string()).optional(),
});
export type HnSnapshot = z.infer<typeof hnSnapshotSchema>;

/**
 * What a change between two snapshots can be, with what it is to `detail`. The per-user lists:
 * an item added to or taken from a user's votes, hidden stories or favorites.
 */
const changeKinds = {
  vote: 'upvoted',
  unvote: 'unvoted',
  hide: 'hid',
  unhide: 'unhid',
  fave: 'favorited',
  unfave: 'unfavorited',
} as const;

/** A change on the site by `user` to item `id`, of one of the kinds above. */
export interface HnChange extends StateChange {
  kind: keyof typeof changeKinds;
  user: string;
}

type Describe = (kind: HnChange['kind'], user: string, id: string) => HnChange;

/**
 * Every part of the snapshot a run can change, and how to list its changes: one entry per part.
 * A part absent from either snapshot could not be read, and lists nothing.
 */
const parts: ReadonlyArray<(start: HnSnapshot, end: HnSnapshot, describe: Describe, known: (id: string) => boolean) => HnChange[]> = [
  userListChanges('votes', 'vote', 'unvote'),
  userListChanges('hidden', 'hide', 'unhide'),
  userListChanges('faves', 'fave', 'unfave'),
];

/** Items added to and taken from each user's `list`, user by user, in the order the end lists them. */
function userListChanges(list: 'votes' | 'hidden' | 'faves', added: HnChange['kind'], removed: HnChange['kind']) {
  return (start: HnSnapshot, end: HnSnapshot, describe: Describe, known: (id: string) => boolean): HnChange[] => {
    const before = start[list];
    const after = end[list];
    if (!before || !after) return [];
    const users = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
    return users.flatMap((user) => {
      const had = new Set(before[user] ?? []);
      const has = new Set(after[user] ?? []);
      return [
        ...[...has].filter((id) => !had.has(id) && known(id)).map((id) => describe(added, user, id)),
        ...[...had].filter((id) => !has.has(id) && known(id)).map((id) => describe(removed, user, id)),
      ];
    });
  };
}

/** Every change between two snapshots, part by part (votes, hidden, favorites), user by user. */
export function hnDiff(start: HnSnapshot, end: HnSnapshot): HnChange[] {
  const known = (id: string) => [start.scope, end.scope].every((scope) => scope === undefined || scope.includes(id));
  const titles = new Map([...start.ranking, ...end.ranking].map((story) => [story.id, story.title]));
  const describe: Describe = (kind, user, id) => {
    const title = titles.get(id);
    return { kind, id, user, detail: `${user} ${changeKinds[kind]} ${id}${title === undefined ? '' : ` (${JSON.stringify(title)})`}` };
  };
  return parts.flatMap((part) => part(start, end, describe, known));
}
