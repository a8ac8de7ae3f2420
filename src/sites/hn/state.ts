import { createHmac, randomBytes } from 'node:crypto';
import type { Account } from './options.ts';
import type { HnComment, Profile, Submission } from './snapshot.ts';

export interface Session {
  user: string;
  /** Requests made with this session since login; drives the session-expiry fault. */
  requests: number;
}

export interface LoggedRequest {
  at: number;
  method: string;
  /** Path and query, with `auth` tokens removed: the log never holds a secret. */
  path: string;
  user?: string;
  status: number;
}

/**
 * The items each user has marked, list by list: voted (stories and comments), hidden (stories
 * gone from the user's listings) and favorite. Each is a set of item ids per user.
 */
export const userLists = ['votes', 'hidden', 'faves'] as const;
export type UserList = (typeof userLists)[number];
export type UserMarks = Record<UserList, Record<string, string[]>>;

/** What users wrote on the replica: comments, stories submitted, and each account's profile. The captured items are the world's, fixed. */
export interface Posts {
  comments: HnComment[];
  submissions: Submission[];
  profiles: Record<string, Profile>;
}

export interface PersistedState extends Partial<UserMarks>, Partial<Posts> {
  sessions: Record<string, Session>;
  votes: Record<string, string[]>;
  /** Items made on the replica so far: the next one's id is the first free id after the capture's plus this. */
  postCount?: number;
}

/** What really happened on the site, as the oracle reads it: never taken from a browser page. */
export interface SiteTruth extends UserMarks, Posts {
  requests: number;
}

/**
 * The replica's server-side state: accounts, sessions, each user's votes, hidden and favorite
 * items, what users wrote (comments, submissions, profiles), and the request log. The pages' tokens
 * (`auth`, `hmac`) are HMACs over a secret derived from the fault seed, so a replayed run sees the
 * same pages; they act only with a session, and a session id is random: no other run, even one
 * with this seed, can name it.
 */
export class HnState {
  readonly accounts = new Map<string, Account>();
  readonly sessions = new Map<string, Session>();
  readonly marks: Record<UserList, Map<string, Set<string>>> = { votes: new Map(), hidden: new Map(), faves: new Map() };
  readonly requests: LoggedRequest[] = [];
  /** In the order they were made; a comment's or story's id is allocated by `newId`. */
  readonly posts: Posts = { comments: [], submissions: [], profiles: {} };
  private readonly secret: string;
  private postCount = 0;
  private readonly issued = new Set<string>();

  /** `firstNewId`: the id of the first item made on the replica, above every captured one, as HN's ids only grow. */
  constructor(
    account: Account,
    seed: number,
    private readonly firstNewId = 1,
  ) {
    this.accounts.set(account.username, account);
    this.secret = `hn-replica:${seed}`;
  }

  /** The id of the next comment or story, the same in every replay of a run. */
  newId(): string {
    return String(this.firstNewId + this.postCount++);
  }

  /** The 40-hex token HN puts in vote, hide, flag and logout links, bound to user and item. */
  authToken(user: string, target: string): string {
    return createHmac('sha1', this.secret).update(`${user}\n${target}`).digest('hex');
  }

  login(username: string, password: string): string | undefined {
    const account = this.accounts.get(username);
    if (!account || account.password !== password) return undefined;
    return this.signIn(username);
  }

  /** A session for `username` without its password: the site's own doing (a saved login), never a visitor's. */
  signIn(username: string): string {
    // 160 random bits, as HN's 40 hex: never derived from anything another replica could know.
    const token = randomBytes(20).toString('hex');
    this.sessions.set(token, { user: username, requests: 0 });
    this.issued.add(`${username}&${token}`);
    return `${username}&${token}`;
  }

  /** Every session this replica issued or restored (the `user` cookie's value, and its token alone), ended or not: secrets of the run. */
  sessionSecrets(): string[] {
    const cookies = new Set(this.issued);
    for (const [token, session] of this.sessions) cookies.add(`${session.user}&${token}`);
    return [...cookies].flatMap((cookie) => [cookie, sessionToken(cookie)]);
  }

  /** A random password for `username` from now on: the one it had signs in no more. */
  rotatePassword(username: string): Account {
    const account = { username, password: `run-${randomBytes(16).toString('hex')}` };
    this.accounts.set(username, account);
    return account;
  }

  logout(cookie: string): void {
    this.sessions.delete(sessionToken(cookie));
  }

  session(cookie: string | undefined): Session | undefined {
    return cookie === undefined ? undefined : this.sessions.get(sessionToken(cookie));
  }

  expire(cookie: string): void {
    this.sessions.delete(sessionToken(cookie));
  }

  /** Whether `user` has `id` in `list` (voted, hidden, favorite). */
  has(list: UserList, user: string, id: string): boolean {
    return this.marks[list].get(user)?.has(id) ?? false;
  }

  /** Adds `id` to or removes it from the user's `list`; answers whether anything changed. */
  mark(list: UserList, user: string, id: string, add: boolean): boolean {
    let mine = this.marks[list].get(user);
    if (!mine) this.marks[list].set(user, (mine = new Set()));
    if (add) return mine.size !== mine.add(id).size;
    return mine.delete(id);
  }

  hasVoted(user: string, id: string): boolean {
    return this.has('votes', user, id);
  }

  /** Registers or removes a vote: HN's `how=up` / `how=un`. */
  vote(user: string, id: string, how: 'up' | 'un'): boolean {
    return this.mark('votes', user, id, how === 'up');
  }

  /** Votes on an item by all users: added to the captured points, as HN counts them. */
  votesOn(id: string): number {
    let count = 0;
    for (const mine of this.marks.votes.values()) if (mine.has(id)) count += 1;
    return count;
  }

  /** Sessions, every user's marks and posts as data: what `stateFile` keeps between processes. */
  toJSON(): PersistedState & UserMarks & Posts {
    return { sessions: Object.fromEntries(this.sessions), ...this.userMarks(false), ...structuredClone(this.posts), postCount: this.postCount };
  }

  /** A state file from before hidden and favorite items or posts were kept has votes only: the rest start empty (an old file's `sessionCount` is ignored). */
  restore(saved: PersistedState): void {
    for (const [token, session] of Object.entries(saved.sessions)) this.sessions.set(token, session);
    for (const list of userLists) for (const [user, ids] of Object.entries(saved[list] ?? {})) this.marks[list].set(user, new Set(ids));
    this.posts.comments.push(...(saved.comments ?? []));
    this.posts.submissions.push(...(saved.submissions ?? []));
    Object.assign(this.posts.profiles, saved.profiles);
    this.postCount = saved.postCount ?? 0;
  }

  /** Back to `start`'s marks and sessions, with an empty request log: a session issued since is gone, and no later one has its id. */
  reset(start: PersistedState): void {
    this.sessions.clear();
    for (const list of userLists) this.marks[list].clear();
    this.posts.comments.length = 0;
    this.posts.submissions.length = 0;
    for (const user of Object.keys(this.posts.profiles)) delete this.posts.profiles[user];
    this.requests.length = 0;
    this.restore(structuredClone(start));
  }

  truth(): SiteTruth {
    return { ...this.userMarks(true), ...structuredClone(this.posts), requests: this.requests.length };
  }

  /** Every list as plain data; `dropEmpty` leaves out users with nothing in a list, as the oracle wants it. */
  private userMarks(dropEmpty: boolean): UserMarks {
    const asData = (list: UserList) =>
      Object.fromEntries([...this.marks[list]].filter(([, ids]) => !dropEmpty || ids.size > 0).map(([user, ids]) => [user, [...ids]]));
    return Object.fromEntries(userLists.map((list) => [list, asData(list)])) as UserMarks;
  }
}

function sessionToken(cookie: string): string {
  return cookie.slice(cookie.indexOf('&') + 1);
}
