import { createHmac } from 'node:crypto';
import type { Account } from './options.ts';

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

export interface PersistedState extends Partial<UserMarks> {
  sessions: Record<string, Session>;
  votes: Record<string, string[]>;
  sessionCount: number;
}

/** What really happened on the site, as the oracle reads it: never taken from a browser page. */
export interface SiteTruth extends UserMarks {
  requests: number;
}

/**
 * The replica's server-side state: accounts, sessions, each user's votes, hidden and favorite
 * items, and the request log. Tokens are HMACs over a secret derived from the fault seed, so a
 * replayed run sees the same pages.
 */
export class HnState {
  readonly accounts = new Map<string, Account>();
  readonly sessions = new Map<string, Session>();
  readonly marks: Record<UserList, Map<string, Set<string>>> = { votes: new Map(), hidden: new Map(), faves: new Map() };
  readonly requests: LoggedRequest[] = [];
  private readonly secret: string;
  private sessionCount = 0;

  constructor(account: Account, seed: number) {
    this.accounts.set(account.username, account);
    this.secret = `hn-replica:${seed}`;
  }

  /** The 40-hex token HN puts in vote, hide, flag and logout links, bound to user and item. */
  authToken(user: string, target: string): string {
    return createHmac('sha1', this.secret).update(`${user}\n${target}`).digest('hex');
  }

  login(username: string, password: string): string | undefined {
    const account = this.accounts.get(username);
    if (!account || account.password !== password) return undefined;
    const token = createHmac('sha1', this.secret).update(`session\n${username}\n${++this.sessionCount}`).digest('hex');
    this.sessions.set(token, { user: username, requests: 0 });
    return `${username}&${token}`;
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

  /** Sessions and every user's marks as data: what `stateFile` keeps between processes. */
  toJSON(): PersistedState & UserMarks {
    return { sessions: Object.fromEntries(this.sessions), ...this.userMarks(false), sessionCount: this.sessionCount };
  }

  /** A state file from before hidden and favorite items were kept has votes only: the rest start empty. */
  restore(saved: PersistedState): void {
    for (const [token, session] of Object.entries(saved.sessions)) this.sessions.set(token, session);
    for (const list of userLists) for (const [user, ids] of Object.entries(saved[list] ?? {})) this.marks[list].set(user, new Set(ids));
    this.sessionCount = saved.sessionCount;
  }

  /**
   * Back to `start`'s marks and sessions, with an empty request log. The session counter keeps
   * counting: a session ended by the reset never becomes valid again.
   */
  reset(start: PersistedState): void {
    this.sessions.clear();
    for (const list of userLists) this.marks[list].clear();
    this.requests.length = 0;
    const { sessionCount } = this;
    this.restore(structuredClone(start));
    this.sessionCount = Math.max(sessionCount, start.sessionCount);
  }

  truth(): SiteTruth {
    return { ...this.userMarks(true), requests: this.requests.length };
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
