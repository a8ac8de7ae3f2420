import { classifyHn } from './classify.ts';
import { hnProgram, hnTools } from './tools.ts';
import { hnLoginWall, hnSignIn } from './sign-in.ts';
import { basename, extname, resolve } from 'node:path';
import type { BrowserContext } from '@playwright/test';
import { fulfillFromReplica, routeReplica } from './adapters/route.ts';
import { HN_ORIGIN, parseReplicaOptions, type ReplicaOptionsInput } from './options.ts';
import { createReplica, type HnReplica } from './replica.ts';
import { hnDiff, type HnChange, type HnSnapshot } from './snapshot.ts';
import type { Site, SyncSiteFactory } from '../../core/site.ts';

export type { Site, SiteFactory } from '../site.ts';
export type { HnChange, HnSnapshot } from './snapshot.ts';

/** A Hacker News site: its snapshots are `HnSnapshot`s, its changes the `HnChange` kinds (votes, hides, favorites, comments, submissions, profiles). */
export type HnSite = Site<HnSnapshot, HnChange>;

/** HN's factories make their sites at once: a test may call `create()` without awaiting it. */
export type HnSiteFactory = SyncSiteFactory<HnSnapshot, HnChange>;

/**
 * `hn.recorded()`: the replica on the project's fixture pages, or on any capture, with faults.
 * Options are checked here, when a config or spec names the site, not when a test runs.
 */
export function recorded({ startLoggedIn = false, ...options }: RecordedOptions = {}): HnSiteFactory {
  const parsed = parseReplicaOptions(options);
  const varied = options.capture !== undefined || options.faults !== undefined || options.stateFile !== undefined || options.account !== undefined || startLoggedIn;
  // Every option with its default, so that two spellings of one site are one cell. The account's
  // name only: the condition is written to reports, a password never is. The stateFile by its path,
  // not its content: runs change the content, and each worker loads the config at its own moment.
  const condition = {
    site: 'hn-recorded',
    capture: parsed.capture === undefined ? null : resolve(parsed.capture),
    faults: parsed.faults,
    account: parsed.account.username,
    startLoggedIn,
    stateFile: parsed.stateFile === undefined ? null : resolve(parsed.stateFile),
  };
  // A capture is named by its file (`front-2019.html`: `front-2019`), as its user knows it.
  const name = parsed.capture !== undefined ? basename(parsed.capture, extname(parsed.capture)) : varied ? 'hn-recorded-custom' : 'hn-recorded';
  return { name, condition, create: () => recordedHn({ ...options, startLoggedIn }) };
}

export interface RecordedOptions extends ReplicaOptionsInput {
  /** The browser starts with the account's session cookie, as a saved login would give it. */
  startLoggedIn?: boolean;
}

/** The recorded Hacker News: the replica, served at the real origin inside the browser context. */
export function recordedHn({ startLoggedIn, ...options }: RecordedOptions = {}): HnSite & { replica: HnReplica } {
  const replica = createReplica(options);
  return {
    name: 'hn-recorded',
    origin: HN_ORIGIN,
    account: replica.options.account,
    replica,
    async attach(context: BrowserContext) {
      await routeReplica(context, replica);
      if (!startLoggedIn) return;
      // Signed in by the site itself: a login made for the run may have replaced the password.
      await context.addCookies([{ name: 'user', value: replica.state.signIn(replica.options.account.username), url: HN_ORIGIN }]);
    },
    issueCredential: () => replica.state.rotatePassword(replica.options.account.username),
    fetch: (request) => replica.handle(request),
    serve: (route, check) => fulfillFromReplica(route, replica, HN_ORIGIN, check),
    snapshot: async () => replica.snapshot(),
    diff: hnDiff,
    idle: () => replica.idle(),
    secrets: () => replica.state.sessionSecrets(),
    classify: classifyHn,
    tools: hnTools,
    program: hnProgram,
    loginWall: (page) => hnLoginWall(page, HN_ORIGIN),
    signIn: hnSignIn((request) => replica.handle(request), HN_ORIGIN),
  };
}
