import type { BrowserContext } from '@playwright/test';
import { routeReplica } from './adapters/route.ts';
import { HN_ORIGIN, type Account, type ReplicaOptionsInput } from './options.ts';
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
  snapshot(): Promise<SiteSnapshot>;
}

/** The recorded Hacker News: the replica, served at the real origin inside the browser context. */
export function recordedHn(options: ReplicaOptionsInput = {}): Site & { replica: HnReplica } {
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
    attach: (context) => routeReplica(context, replica),
    snapshot: async () => ({ votes: replica.truth().votes, ranking }),
  };
}
