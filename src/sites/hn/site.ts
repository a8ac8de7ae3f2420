import type { BrowserContext } from '@playwright/test';
import { routeReplica } from './adapters/route.ts';
import { HN_ORIGIN, parseReplicaOptions, type Account, type ReplicaOptionsInput } from './options.ts';
import { createReplica, type HnReplica } from './replica.ts';

/** The site's real state as the oracle reads it: votes per user and the front page's ranking. */
export interface SiteSnapshot {
  votes: Record<string, string[]>;
  ranking: Array<{ rank: number; id: string; title: string }>;
}

/** A site a harness runs against: where it is, how a browser reaches it, and its ground truth. */
export interface Site {
  readonly name: string;
  readonly origin: string;
  readonly account: Account;
  attach(context: BrowserContext): Promise<void>;
  /** The site's HTTP outside any browser (redirects not followed): how the harness signs in. */
  fetch(request: Request): Promise<Response>;
  snapshot(): Promise<SiteSnapshot>;
  /** Puts the site back after the run (the live site unvotes what the run voted), so the next run finds it as this one did. */
  dispose?(): Promise<void>;
}

/** How a spec or a matrix names a site: a fresh site (fresh state) is made for every run. */
export interface SiteFactory {
  readonly name: string;
  /** What the site is, as data (capture, faults, starting state): runs pool into one cell only when it is equal. */
  readonly condition: Record<string, unknown>;
  create(): Site;
  /** Why this site cannot be used here (no account for the live site), or undefined: its runs skip with the reason. */
  unavailable?(): string | undefined;
}

/**
 * `hn.recorded()`: the replica on the project's fixture pages, or on any capture, with faults.
 * Options are checked here, when a config or spec names the site, not when a test runs.
 */
export function recorded({ startLoggedIn, ...options }: RecordedOptions = {}): SiteFactory {
  parseReplicaOptions(options);
  const varied = options.capture !== undefined || options.faults !== undefined || startLoggedIn;
  return { name: varied ? 'hn-recorded-custom' : 'hn-recorded', condition: { site: 'hn-recorded', ...options, startLoggedIn }, create: () => recordedHn({ ...options, startLoggedIn }) };
}

export interface RecordedOptions extends ReplicaOptionsInput {
  /** The browser starts with the account's session cookie, as a saved login would give it. */
  startLoggedIn?: boolean;
}

/** The recorded Hacker News: the replica, served at the real origin inside the browser context. */
export function recordedHn({ startLoggedIn, ...options }: RecordedOptions = {}): Site & { replica: HnReplica } {
  const replica = createReplica(options);
  const ranking = [...replica.capture.items.values()]
    .filter((item) => item.rank !== undefined)
    .map((item) => ({ rank: item.rank!, id: item.id, title: item.title ?? '' }))
    .sort((a, b) => a.rank - b.rank);
  return {
    name: 'hn-recorded',
    origin: HN_ORIGIN,
    account: replica.options.account,
    replica,
    async attach(context) {
      await routeReplica(context, replica);
      if (!startLoggedIn) return;
      const { username, password } = replica.options.account;
      await context.addCookies([{ name: 'user', value: replica.state.login(username, password)!, url: HN_ORIGIN }]);
    },
    fetch: (request) => replica.handle(request),
    snapshot: async () => ({ votes: replica.truth().votes, ranking }),
  };
}
