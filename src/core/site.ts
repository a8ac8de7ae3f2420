import type { BrowserContext, Page, Route } from '@playwright/test';
import type { StateChange } from './state.ts';
import type { Tool } from './tool.ts';

/**
 * What a site throws (from `snapshot`, a request) once it no longer answers because what serves it
 * is gone: a team's own app that exited. Once the agent's work began (or it claimed), the run is
 * still judged and counted: nothing the task asked for can be shown, and the site going down is a
 * side effect (an agent that brings its site down must not take its run out of the counts). Before
 * it, the run is left out as an error: the agent did nothing that could have.
 */
export class SiteDown extends Error {
  override name = 'SiteDown';
}

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

/** A request the browser (or the harness) makes to a site, as the site kit's classifier reads it. */
export interface SiteRequest {
  method: string;
  url: string;
  /** A form post's body, as sent (`application/x-www-form-urlencoded`). */
  body?: string;
}

/**
 * What a request does to the site's state, in the kit's words (on HN: `vote`, `unvote`, `hide`,
 * `fave`, `comment`, `submit`, `login`, …) and on what (`target`: an item's id; absent for a login). A
 * request that changes nothing (a page load) is no action. Approval, permissions, risk, evidence,
 * observations and stop-on-success all read actions, never URLs: the site kit alone knows them.
 */
export interface SiteAction {
  kind: string;
  target?: string;
  /** One line for a person: `vote on 46194762`, `complete todo 3`. */
  detail: string;
}

/** Asked before a request is sent to the site: a reason refuses it, and it is never sent. */
export type HopCheck = (request: SiteRequest) => Promise<string | undefined>;

/** A login form as a page shows it: where it posts, and its own fields (a `goto`), without the account's. */
export interface LoginWall {
  /** The form's absolute action URL. */
  action: string;
  fields: Array<[string, string]>;
}

/** How a sign-in went: whether the site set a session, and the page that only reads where the browser was sent next. */
export interface SignedIn {
  signedIn: boolean;
  /** An absolute URL on the site. */
  next: string;
}

/** A function of the site's in code mode's programs (`<kit>.<function>()`): a call of one of the site's tools. */
export interface SiteProgramFunction {
  /** The tool it calls, with the function's one argument (an object, `{}` when left out) as the tool's arguments. */
  tool: string;
  /** The output's field the function answers; the whole output when absent. */
  field?: string;
  /** What it answers, for the program's API description: `→ [{ id, title, done }], the items on the page`. */
  describe: string;
}

/** The site's own functions in code mode's programs, under one name (the kit's: `hn`). */
export interface SiteProgramApi {
  name: string;
  functions: Readonly<Record<string, SiteProgramFunction>>;
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
   * May be async: a real app makes the login over its own HTTP.
   */
  issueCredential?(): SiteAccount | Promise<SiteAccount>;
  /**
   * Answers one request the browser sent to the site's origin (a Playwright route), as `attach`'s
   * route does, following the site's redirects itself and putting the request and each hop to
   * `check` first: how the harness's request check judges every hop with the site's own faults in
   * place. Absent: the harness answers the request from `fetch`, hop by hop, with the same checks.
   */
  serve?(route: Route, check: HopCheck): Promise<void>;
  /** The action `request` would perform on the site, or undefined when it changes nothing. */
  classify(request: SiteRequest): SiteAction | undefined;
  /**
   * The login wall `page` shows (the site's login form, on the site's origin: a form posting
   * elsewhere is none), or undefined. Absent where the site has no login. What the `login` layer waits for.
   */
  loginWall?(page: Page): Promise<LoginWall | undefined>;
  /**
   * Signs `context` in as `account` from the harness's own HTTP client (`fetch`), never from the
   * page, so the password reaches no DOM, screenshot or Playwright trace; from `wall`'s form when
   * given. Answers `next`, a page that only reads, for the caller to send the browser to: what the
   * wall held back (an action in its `goto`) is not done, so the agent does it itself, through the same checks.
   */
  signIn?(context: BrowserContext, account: SiteAccount, wall?: LoginWall): Promise<SignedIn>;
  /**
   * Tools of the site's own the built-in harness offers beside its browser tools (a
   * listing reader), bound to the page the run drives. Absent: the browser tools alone.
   */
  tools?(page: Page): Tool[];
  /** The site's tools as code mode's programs call them, under the kit's name. */
  readonly program?: SiteProgramApi;
  /** Puts the site back after the run (a live site undoes what the run did), so the next run finds it as this one did. */
  dispose?(): Promise<void>;
}

/**
 * How a spec or a matrix names a site: a fresh site (fresh state) is made for every run. `create()`
 * may be async (it may start the app); it is called only for a run that goes ahead, and every site
 * it returns is disposed once, however the run ends.
 */
export interface SiteFactory<State = unknown, Change extends StateChange = StateChange> {
  readonly name: string;
  /** What the site is, as data (capture, faults, starting state): runs pool into one cell only when it is equal. */
  readonly condition: Record<string, unknown>;
  create(): Site<State, Change> | Promise<Site<State, Change>>;
  /** Why this site cannot be used here (no account for the live site), or undefined: its runs skip with the reason. */
  unavailable?(): string | undefined;
}

/** A factory that makes its sites at once (HN's, a replayed recording): a caller may use `create()`'s site without awaiting it. */
export type SyncSiteFactory<State = unknown, Change extends StateChange = StateChange> = Omit<SiteFactory<State, Change>, 'create'> & { create(): Site<State, Change> };
