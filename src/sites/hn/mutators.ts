import type { Evidence } from '../../eval/postconditions.ts';
import type { Mutators } from '../../eval/mutation.ts';
import type { HnChange, HnSnapshot } from './snapshot.ts';

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

/** Hacker News's mutators, one row per part of the snapshot: a new change kind (a comment, a submission) adds its own. */
export const hnMutators: Mutators<HnSnapshot, HnChange> = {
  ofChange: Object.assign({}, ...lists.map((list) => list.ofChange), profileMutators.ofChange),
  extra: { ...Object.fromEntries(lists.map((list, index) => [['vote', 'hide', 'favorite'][index]!, list.extra])), profile: profileMutators.extra },
};
