import type { Evidence } from '../../eval/postconditions.ts';
import type { Mutators } from '../../eval/mutation.ts';
import type { HnChange, HnSnapshot, Submission } from './snapshot.ts';

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

const lists = [listMutators('votes', 'vote', 'unvote', 'vote'), listMutators('hidden', 'hide', 'unhide', 'hide'), listMutators('faves', 'fave', 'unfave', 'favorite')];

/** `end` with the submitted story `id` changed by `edit` (or taken out, when `edit` answers undefined); undefined when the run's end has no such story or the edit does not apply. */
function withSubmission(end: HnSnapshot, id: string, edit: (story: Submission) => Submission | undefined | 'remove'): HnSnapshot | undefined {
  const story = end.submissions?.find((submission) => submission.id === id);
  if (!story) return undefined;
  const edited = edit(story);
  if (edited === undefined) return undefined;
  const submissions = end.submissions!.flatMap((submission) => (submission.id !== id ? [submission] : edited === 'remove' ? [] : [edited]));
  return { ...end, submissions };
}

/** A story's mutators: without it, by another account, its title, link or text altered; and an extra story submitted. */
const submissionMutators = {
  ofChange: {
    submission: {
      'without the submission': (end: HnSnapshot, change: HnChange) => withSubmission(end, change.id, () => 'remove'),
      'the submission by another account': (end: HnSnapshot, change: HnChange) => withSubmission(end, change.id, (story) => ({ ...story, by: ANOTHER_ACCOUNT })),
      'the submission with its title altered': (end: HnSnapshot, change: HnChange) => withSubmission(end, change.id, (story) => ({ ...story, title: `${story.title} (updated)` })),
      'the submission with its url altered': (end: HnSnapshot, change: HnChange) =>
        withSubmission(end, change.id, (story) => (story.url === undefined ? undefined : { ...story, url: `${story.url.replace(/\/+$/, '')}/other` })),
      'the submission with its text altered': (end: HnSnapshot, change: HnChange) =>
        withSubmission(end, change.id, (story) => (story.text === undefined ? undefined : { ...story, text: `${story.text} And more.` })),
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

/** Hacker News's mutators, one row per part of the snapshot: a new change kind (a comment) adds its own. */
export const hnMutators: Mutators<HnSnapshot, HnChange> = {
  ofChange: Object.assign({}, ...lists.map((list) => list.ofChange), submissionMutators.ofChange),
  extra: { ...Object.fromEntries(lists.map((list, index) => [['vote', 'hide', 'favorite'][index]!, list.extra])), submission: submissionMutators.extra },
};
