import { z } from 'zod';
import type { StateChange } from '../../core/state.ts';

/** User → item ids: one of the per-user lists HN keeps (votes, hidden, favorites). */
const userListSchema = z.record(z.string(), z.array(z.string()));

/**
 * A story as the listings showed it at that moment: what tasks name stories by (rank, title,
 * site) and what information tasks ask (score, poster, comments). Facts a capture does not show
 * are absent. A job has no score, poster or vote arrow.
 */
export const storySchema = z.object({
  rank: z.number().int().min(1),
  id: z.string(),
  title: z.string(),
  /** The domain HN shows after the title (`github.com/user` for GitHub): `/from?site=` lists by it. */
  site: z.string().optional(),
  /** Where the title links to, when off the site (absent on a text post): a duplicate submission of it goes to this story. */
  url: z.string().optional(),
  points: z.number().int().optional(),
  by: z.string().optional(),
  comments: z.number().int().min(0).optional(),
  /** Unix seconds of posting (the age's `title`): `/newest` orders by it. */
  time: z.number().int().optional(),
  job: z.boolean().optional(),
  /** Its thread takes no more comments (HN closes old ones): its captured item page offers no comment form and no reply link. */
  closed: z.boolean().optional(),
});

/** A comment: the capture's and those written on the replica. `parent` is the story or the comment it replies to. */
export const commentSchema = z.object({
  id: z.string(),
  parent: z.string(),
  story: z.string(),
  by: z.string(),
  text: z.string(),
  /** Dead (killed or flagged): shown as `[dead]`, and no one can reply to it. */
  dead: z.boolean().optional(),
});
export type HnComment = z.infer<typeof commentSchema>;

/** A story submitted on the replica: a link (`url`) or a text post (Ask HN). */
export const submissionSchema = z.object({
  id: z.string(),
  by: z.string(),
  title: z.string(),
  url: z.string().optional(),
  text: z.string().optional(),
});
export type Submission = z.infer<typeof submissionSchema>;

/** What an account's profile form edits. */
export const profileSchema = z.object({ about: z.string() });
export type Profile = z.infer<typeof profileSchema>;

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
  /** Absent when the snapshot could not read them: no change of them is claimed. The live site reads the account's own lists only. */
  hidden: userListSchema.optional(),
  faves: userListSchema.optional(),
  ranking: z.array(storySchema),
  /** Every comment the snapshot could read: the capture's and new ones; on the live site, the account's own (its `/threads`). */
  comments: z.array(commentSchema).optional(),
  /** Stories submitted on the site during runs, oldest first; absent where they cannot be read (the live site): a task judged on them is refused there. */
  submissions: z.array(submissionSchema).optional(),
  /** Account → profile: what the profile form edits; absent on the live site, as submissions are. */
  profiles: z.record(z.string(), profileSchema).optional(),
});
export type HnSnapshot = z.infer<typeof hnSnapshotSchema>;

/**
 * What a change between two snapshots can be, with what it is to `detail`. The per-user lists:
 * an item added to or taken from a user's votes, hidden stories or favorites. Posts: a comment
 * written (or its text changed, or gone), a story submitted (or changed, or gone), a profile's
 * field edited (`id` is the account).
 */
const changeKinds = {
  vote: 'upvoted',
  unvote: 'unvoted',
  hide: 'hid',
  unhide: 'unhid',
  fave: 'favorited',
  unfave: 'unfavorited',
  comment: 'commented',
  submission: 'submitted',
  profile: 'edited the profile of',
} as const;

/** The part of the snapshot each kind of change is read from: where a snapshot lacks the part, no such change can be seen. */
export const partOfKind = {
  vote: 'votes',
  unvote: 'votes',
  hide: 'hidden',
  unhide: 'hidden',
  fave: 'faves',
  unfave: 'faves',
  comment: 'comments',
  submission: 'submissions',
  profile: 'profiles',
} as const satisfies Record<keyof typeof changeKinds, keyof HnSnapshot>;

/** A change on the site by `user` to item `id`, of one of the kinds above. */
export interface HnChange extends StateChange {
  kind: keyof typeof changeKinds;
  user: string;
}

type Describe = (kind: HnChange['kind'], user: string, id: string, what?: string) => HnChange;

/**
 * Every part of the snapshot a run can change, and how to list its changes: one entry per part.
 * A part absent from either snapshot could not be read, and lists nothing.
 */
const parts: ReadonlyArray<(start: HnSnapshot, end: HnSnapshot, describe: Describe) => HnChange[]> = [
  userListChanges('votes', 'vote', 'unvote'),
  userListChanges('hidden', 'hide', 'unhide'),
  userListChanges('faves', 'fave', 'unfave'),
  postChanges<HnComment>('comments', 'comment', (comment) => `on ${comment.parent}: ${JSON.stringify(comment.text)}`),
  postChanges<Submission>('submissions', 'submission', (story) => `${JSON.stringify(story.title)}${story.url ? ` (${story.url})` : ''}`),
  profileChanges,
];

/**
 * Posts of one kind written, changed or gone between the snapshots, matched by id: a new one is
 * the run's writing; one whose content differs (an edit) or that is gone is a change of it too.
 */
function postChanges<Post extends { id: string; by: string }>(part: 'comments' | 'submissions', kind: HnChange['kind'], content: (post: Post) => string) {
  return (start: HnSnapshot, end: HnSnapshot, describe: Describe): HnChange[] => {
    const before = start[part] as Post[] | undefined;
    const after = end[part] as Post[] | undefined;
    if (!before || !after) return [];
    const had = new Map(before.map((post) => [post.id, post]));
    const has = new Set(after.map((post) => post.id));
    return [
      ...after.flatMap((post) => {
        const old = had.get(post.id);
        if (!old) return [describe(kind, post.by, post.id, content(post))];
        return JSON.stringify(old) === JSON.stringify(post) ? [] : [describe(kind, post.by, post.id, `changed to ${content(post)}`)];
      }),
      ...before.filter((post) => !has.has(post.id)).map((post) => describe(kind, post.by, post.id, 'removed')),
    ];
  };
}

/** Each account's profile fields that differ: one change per field, its `id` the account. */
function profileChanges(start: HnSnapshot, end: HnSnapshot, describe: Describe): HnChange[] {
  if (!start.profiles || !end.profiles) return [];
  const users = [...new Set([...Object.keys(start.profiles), ...Object.keys(end.profiles)])].sort();
  return users.flatMap((user) => {
    const [before, after] = [start.profiles![user] ?? { about: '' }, end.profiles![user] ?? { about: '' }];
    return (Object.keys(after) as Array<keyof Profile>)
      .filter((field) => before[field] !== after[field])
      .map((field) => describe('profile', user, user, `${field}: ${JSON.stringify(after[field])}`));
  });
}

/** Items added to and taken from each user's `list`, user by user, in the order the end lists them. */
function userListChanges(list: 'votes' | 'hidden' | 'faves', added: HnChange['kind'], removed: HnChange['kind']) {
  return (start: HnSnapshot, end: HnSnapshot, describe: Describe): HnChange[] => {
    const before = start[list];
    const after = end[list];
    if (!before || !after) return [];
    const users = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
    return users.flatMap((user) => {
      const had = new Set(before[user] ?? []);
      const has = new Set(after[user] ?? []);
      return [
        ...[...has].filter((id) => !had.has(id)).map((id) => describe(added, user, id)),
        ...[...had].filter((id) => !has.has(id)).map((id) => describe(removed, user, id)),
      ];
    });
  };
}

/** Every change between two snapshots, part by part (votes, hidden, favorites, comments, submissions, profiles), user by user. */
export function hnDiff(start: HnSnapshot, end: HnSnapshot): HnChange[] {
  const titles = new Map([...start.ranking, ...end.ranking].map((story) => [story.id, story.title]));
  const describe: Describe = (kind, user, id, what) => {
    const title = titles.get(id);
    const about = what ?? (title === undefined ? '' : `(${JSON.stringify(title)})`);
    return { kind, id, user, detail: `${user} ${changeKinds[kind]} ${id}${about ? ` ${about}` : ''}` };
  };
  return parts.flatMap((part) => part(start, end, describe));
}
