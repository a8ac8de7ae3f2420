import type { Evidence } from '../../core/task.ts';
import type { Mutators } from '../../eval/mutation.ts';
import type { HnChange, HnComment, HnSnapshot, Submission } from './snapshot.ts';

/** An account that is not the run's: a change made by it is not the run's work. */
const ANOTHER_ACCOUNT = 'someone-else';

type HnEvidence = Evidence<HnSnapshot, HnChange>;
/** The per-user lists of the snapshot a run can change. */
type UserList = 'votes' | 'hidden' | 'faves';

/** `end` with `id` put in (or taken out of) `user`'s `list`. */
function withMark(end: HnSnapshot, list: UserList, user: string, id: string, on: boolean): HnSnapshot {
  const lists = end[list] ?? {};
  const ids = new Set(lists[user] ?? []);
  if (on) ids.add(id);
  else ids.delete(id);
  return { ...end, [list]: { ...lists, [user]: [...ids] } };
}

/** A list's mutators: undo each change the reference made to it, give it to another account, and add one on every story the run left alone. */
function listMutators(list: UserList, added: HnChange['kind'], taken: HnChange['kind'], what: string) {
  return {
    what,
    ofChange: {
      [added]: {
        [`without the ${what}`]: (end: HnSnapshot, change: HnChange) => withMark(end, list, change.user, change.id, false),
        [`the ${what} by another account`]: (end: HnSnapshot, change: HnChange) => withMark(withMark(end, list, change.user, change.id, false), list, ANOTHER_ACCOUNT, change.id, true),
      },
      [taken]: {
        [`without taking back the ${what}`]: (end: HnSnapshot, change: HnChange) => withMark(end, list, change.user, change.id, true),
      },
    },
    // One at a time on every story the run left alone: a trap (a title that merely contains the word) is one of them.
    // A list the snapshots could not read (the live site's hides) has no known change to add.
    extra: ({ start, end, user }: HnEvidence) => {
      if (start[list] === undefined || end[list] === undefined) return [];
      const marked = new Set([...(start[list]?.[user] ?? []), ...(end[list]?.[user] ?? [])]);
      return start.ranking
        .filter((story) => !marked.has(story.id))
        .map((story) => ({ name: `an extra ${what} on ${story.id} (${JSON.stringify(story.title)})`, end: withMark(end, list, user, story.id, true) }));
    },
  };
}

/**
 * `end` with the post `id` of `part` (a comment, a submitted story) changed by `edit`, or taken out
 * when `edit` answers 'remove'; undefined when the end has no such post or the edit does not apply
 * (`edit` answers undefined): no mutant.
 */
function withPost<Part extends 'comments' | 'submissions'>(end: HnSnapshot, part: Part, id: string, edit: (post: NonNullable<HnSnapshot[Part]>[number]) => NonNullable<HnSnapshot[Part]>[number] | undefined | 'remove'): HnSnapshot | undefined {
  const posts: Array<NonNullable<HnSnapshot[Part]>[number]> | undefined = end[part];
  const post = posts?.find((candidate) => candidate.id === id);
  if (!posts || !post) return undefined;
  const edited = edit(post);
  if (edited === undefined) return undefined;
  return { ...end, [part]: posts.flatMap((other) => (other !== post ? [other] : edited === 'remove' ? [] : [edited])) };
}

/** `end` with `comment` added, under an id after every other. */
function withNewComment(end: HnSnapshot, comment: Omit<HnComment, 'id'>): HnSnapshot {
  const id = String(Math.max(0, ...(end.comments ?? []).map((other) => Number(other.id))) + 1);
  return { ...end, comments: [...(end.comments ?? []), { ...comment, id }] };
}

/**
 * Comments: undo one the run wrote, make it another account's, alter its text, move it under
 * another parent (its story, or the story's first comment when it was on the story); and add a
 * second copy of each, an upvote on the comment a reply answers, and a comment on the top story.
 */
const commentMutators = {
  ofChange: {
    comment: {
      'without the comment': (end: HnSnapshot, change: HnChange) => withPost(end, 'comments', change.id, () => 'remove'),
      'the comment by another account': (end: HnSnapshot, change: HnChange) => withPost(end, 'comments', change.id, (comment) => ({ ...comment, by: ANOTHER_ACCOUNT })),
      'the comment with its text altered': (end: HnSnapshot, change: HnChange) => withPost(end, 'comments', change.id, (comment) => ({ ...comment, text: `${comment.text} (edited)` })),
      'the comment under another parent': (end: HnSnapshot, change: HnChange) =>
        withPost(end, 'comments', change.id, (comment) => {
          const elsewhere = comment.parent === comment.story ? end.comments?.find((other) => other.story === comment.story && other.id !== comment.id)?.id : comment.story;
          return elsewhere === undefined ? undefined : { ...comment, parent: elsewhere };
        }),
    },
  },
  extra: ({ start, end, user }: HnEvidence) => {
    if (start.comments === undefined || end.comments === undefined) return [];
    const had = new Set(start.comments.map((comment) => comment.id));
    const written = end.comments.filter((comment) => !had.has(comment.id) && comment.by === user);
    const copies = written.map(({ id, ...comment }) => ({ name: `a second copy of comment ${id} (${JSON.stringify(comment.text)})`, end: withNewComment(end, comment) }));
    // The trap of a reply to a comment one likes: upvoting the comment too.
    const upvotes = written
      .filter((comment) => comment.parent !== comment.story && !end.votes[user]?.includes(comment.parent))
      .map((comment) => ({ name: `an upvote on ${comment.parent}, the comment answered`, end: withMark(end, 'votes', user, comment.parent, true) }));
    const top = start.ranking.find((story) => story.rank === 1);
    const onTop = top ? [{ name: `an extra comment on ${top.id} (${JSON.stringify(top.title)})`, end: withNewComment(end, { parent: top.id, story: top.id, by: user, text: 'An extra comment.' }) }] : [];
    return [...copies, ...upvotes, ...onTop];
  },
};

const lists = [listMutators('votes', 'vote', 'unvote', 'vote'), listMutators('hidden', 'hide', 'unhide', 'hide'), listMutators('faves', 'fave', 'unfave', 'favorite')];

type Profile = NonNullable<HnSnapshot['profiles']>[string];

/** `end` with `user`'s profile as given (undefined: none, as an account that never edited it). */
function withProfile(end: HnSnapshot, user: string, profile: Profile | undefined): HnSnapshot {
  const profiles = { ...end.profiles };
  if (profile === undefined) delete profiles[user];
  else profiles[user] = profile;
  return { ...end, profiles };
}

/** The profile's mutators: the edit undone, made on another account, its about altered or cut short; and an edit the run did not make. */
const profileMutators = {
  ofChange: {
    profile: {
      'without the profile edit': (end: HnSnapshot, change: HnChange, { start }: HnEvidence) => withProfile(end, change.user, start.profiles?.[change.user]),
      'the profile edit on another account': (end: HnSnapshot, change: HnChange, { start }: HnEvidence) =>
        withProfile(withProfile(end, change.user, start.profiles?.[change.user]), ANOTHER_ACCOUNT, end.profiles?.[change.user]),
      'the about altered': (end: HnSnapshot, change: HnChange) => withProfile(end, change.user, { ...end.profiles?.[change.user], about: `${end.profiles?.[change.user]?.about ?? ''} (edited)` }),
      'the about cut short': (end: HnSnapshot, change: HnChange) => {
        const about = end.profiles?.[change.user]?.about ?? '';
        return about.length < 2 ? undefined : withProfile(end, change.user, { ...end.profiles?.[change.user], about: about.slice(0, Math.ceil(about.length / 2)) });
      },
    },
  },
  // A profile the snapshots could not read, or one the run edited (its own mutants above), gets no extra edit.
  extra: ({ start, end, user, diff }: HnEvidence) => {
    if (start.profiles === undefined || end.profiles === undefined || diff.some((change) => change.kind === 'profile' && change.user === user)) return [];
    return [{ name: `an extra edit of ${user}'s about`, end: withProfile(end, user, { ...end.profiles[user], about: 'edited, unasked' }) }];
  },
};

/** A story's mutators: without it, by another account, its title, link or text altered; and an extra story submitted. */
const submissionMutators = {
  ofChange: {
    submission: {
      'without the submission': (end: HnSnapshot, change: HnChange) => withPost(end, 'submissions', change.id, () => 'remove'),
      'the submission by another account': (end: HnSnapshot, change: HnChange) => withPost(end, 'submissions', change.id, (story) => ({ ...story, by: ANOTHER_ACCOUNT })),
      'the submission with its title altered': (end: HnSnapshot, change: HnChange) => withPost(end, 'submissions', change.id, (story) => ({ ...story, title: `${story.title} (updated)` })),
      'the submission with its url altered': (end: HnSnapshot, change: HnChange) =>
        withPost(end, 'submissions', change.id, (story) => (story.url === undefined ? undefined : { ...story, url: `${story.url.replace(/\/+$/, '')}/other` })),
      'the submission with its text altered': (end: HnSnapshot, change: HnChange) =>
        withPost(end, 'submissions', change.id, (story) => (story.text === undefined ? undefined : { ...story, text: `${story.text} And more.` })),
    },
  },
  extra: ({ start, end, user, diff }: HnEvidence) => {
    if (start.submissions === undefined || end.submissions === undefined) return [];
    const submitted = (story: Submission) => ({ ...end, submissions: [...end.submissions!, story] });
    const fresh: Submission = { id: EXTRA_STORY_ID, by: user, title: 'An extra story no one asked for', url: 'https://example.com/an-extra-story' };
    // A story the run upvoted, posted again as well: what a task that asks to vote instead of reposting must reject.
    const reposts = diff
      .filter((change) => change.kind === 'vote' && change.user === user)
      .flatMap((change) => start.ranking.filter((story) => story.id === change.id && story.url !== undefined))
      .map((story) => ({ name: `a repost of ${story.id}'s link (${story.url})`, end: submitted({ id: EXTRA_STORY_ID, by: user, title: story.title, url: story.url }) }));
    return [{ name: `an extra submission (${JSON.stringify(fresh.title)})`, end: submitted(fresh) }, ...reposts];
  },
};

/** An id no captured item or replica post has. */
const EXTRA_STORY_ID = '999999999';

/** Hacker News's mutators, one row per part of the snapshot (lists, comments, submissions, profiles): a new change kind adds its own. */
export const hnMutators: Mutators<HnSnapshot, HnChange> = {
  ofChange: Object.assign({}, ...lists.map((list) => list.ofChange), commentMutators.ofChange, submissionMutators.ofChange, profileMutators.ofChange),
  extra: { ...Object.fromEntries(lists.map((list) => [list.what, list.extra])), comment: commentMutators.extra, submission: submissionMutators.extra, profile: profileMutators.extra },
};
