import type { BrowserContext } from '@playwright/test';
import type { StateChange } from './state.ts';

/** The account a run signs in with. */
export interface SiteAccount {
  username: string;
  password: string;
}

/** How the end snapshot's wait for the site went: `settled` false when the bound ran out first. */
export interface SiteIdle {
  settled: boolean;
  waitedMs: number;
  /** Requests of the run still unanswered when the wait ended. */
  pending: number;
}

/**
 * A site a harness runs against: where it is, how a browser reaches it, and its ground truth.
 * `State` is the site's whole state as its pack reads it (never sessions or logins: they are not
 * the task's work); `diff` lists what changed between two snapshots, in the pack's own terms.
 */
export interface Site<State = unknown, Change extends StateChange = StateChange> {
  readonly name: string;
  readonly origin: string;
  readonly account: SiteAccount;
  attach(context: BrowserContext): Promise<void>;
  /** The site's HTTP outside any browser (redirects not followed): how the harness signs in. */
  fetch(request: Request): Promise<Response>;
  snapshot(): Promise<State>;
  diff(start: State, end: State): Change[];
  /** Waits until the site has answered every request the run started, within a bound its own latency sets. */
  idle(): Promise<SiteIdle>;
  /**
   * The session tokens the site issued so far (a `user` cookie's value, and its token alone): made
   * during the run, so asked whenever something is redacted. They never reach a trace or report.
   */
  secrets?(): readonly string[];
  /**
   * A login made for one run of untrusted code (a command agent): the account with a random
   * password of this run; from then on the site's own password no longer signs in, so an agent
   * that found it elsewhere gets nowhere. Absent where a site cannot make one (the live site).
   */
  issueCredential?(): SiteAccount;
  /** Puts the site back after the run (the live site unvotes what the run voted), so the next run finds it as this one did. */
  dispose?(): Promise<void>;
}

/** How a spec or a matrix names a site: a fresh site (fresh state) is made for every run. */
export interface SiteFactory<State = unknown, Change extends StateChange = StateChange> {
  readonly name: string;
  /** What the site is, as data (capture, faults, starting state): runs pool into one cell only when it is equal. */
  readonly condition: Record<string, unknown>;
  create(): Site<State, Change>;
  /** Why this site cannot be used here (no account for the live site), or undefined: its runs skip with the reason. */
  unavailable?(): string | undefined;
}
