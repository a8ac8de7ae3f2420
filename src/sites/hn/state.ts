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

export interface PersistedState {
  sessions: Record<string, Session>;
  votes: Record<string, string[]>;
  sessionCount: number;
}

/** What really happened on the site, as the oracle reads it: never taken from a browser page. */
export interface SiteTruth {
  votes: Record<string, string[]>;
  requests: number;
}

/**
 * The replica's server-side state: accounts, sessions, votes and the request log. Tokens are
 * HMACs over a secret derived from the fault seed, so a replayed run sees the same pages.
 */
export class HnState {
  readonly accounts = new Map<string, Account>();
  readonly sessions = new Map<string, Session>();
  readonly votes = new Map<string, Set<string>>();
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

  hasVoted(user: string, id: string): boolean {
    return this.votes.get(user)?.has(id) ?? false;
  }

  /** Registers or removes a vote; answers whether anything changed. */
  vote(user: string, id: string, how: 'up' | 'un'): boolean {
    let mine = this.votes.get(user);
    if (!mine) this.votes.set(user, (mine = new Set()));
    if (how === 'up') return mine.size !== mine.add(id).size;
    return mine.delete(id);
  }

  /** Votes on an item by all users: added to the captured points, as HN counts them. */
  votesOn(id: string): number {
    let count = 0;
    for (const mine of this.votes.values()) if (mine.has(id)) count += 1;
    return count;
  }

  /** Sessions and votes as data: what `stateFile` keeps between processes. */
  toJSON(): PersistedState {
    return {
      sessions: Object.fromEntries(this.sessions),
      votes: Object.fromEntries([...this.votes].map(([user, ids]) => [user, [...ids]])),
      sessionCount: this.sessionCount,
    };
  }

  restore(saved: PersistedState): void {
    for (const [token, session] of Object.entries(saved.sessions)) this.sessions.set(token, session);
    for (const [user, ids] of Object.entries(saved.votes)) this.votes.set(user, new Set(ids));
    this.sessionCount = saved.sessionCount;
  }

  /**
   * Back to `start`'s votes and sessions, with an empty request log. The session counter keeps
   * counting: a session ended by the reset never becomes valid again.
   */
  reset(start: PersistedState): void {
    this.sessions.clear();
    this.votes.clear();
    this.requests.length = 0;
    const { sessionCount } = this;
    this.restore(structuredClone(start));
    this.sessionCount = Math.max(sessionCount, start.sessionCount);
  }

  truth(): SiteTruth {
    const votes: Record<string, string[]> = {};
    for (const [user, ids] of this.votes) if (ids.size > 0) votes[user] = [...ids];
    return { votes, requests: this.requests.length };
  }
}

function sessionToken(cookie: string): string {
  return cookie.slice(cookie.indexOf('&') + 1);
}
