import { classifyHn } from './classify.ts';
import { hnProgram, hnTools } from './tools.ts';
import { hnLoginWall, hnSignIn } from './sign-in.ts';
import * as cheerio from 'cheerio';
import type { z } from 'zod';
import { InputError, parseInput } from '../../input.ts';
import { routeSite, type SiteHandler } from '../route.ts';
import { storyOf, storyRowsOn } from './capture.ts';
import { withSetCookies } from '../../http.ts';
import { accountSchema, HN_ORIGIN, type Account } from './options.ts';
import { politeFetch, politenessSchema, type Politeness } from './polite-fetch.ts';
import type { HnSite } from './site.ts';
import { hnDiff, type HnChange, type HnSnapshot } from './snapshot.ts';
import { idleBoundMs, requestsInFlight, sessionCookies } from '../site.ts';
import type { SiteFactory } from '../../core/site.ts';

export const liveOptionsSchema = politenessSchema
  .extend({
    /** The account the agent and the oracle log in with; by default `HN_USERNAME` / `HN_PASSWORD`. */
    account: accountSchema.optional(),
  })
  .strict();
export type LiveOptions = z.input<typeof liveOptionsSchema>;

/**
 * `hn.live()`: the real news.ycombinator.com. The browser's requests go through Node, spaced and
 * backing off as the site asks; the oracle reads the truth in its own session; after the run,
 * what the run voted is unvoted, so nightly runs find the site as they left it.
 * Without an account (options, or `HN_USERNAME` and `HN_PASSWORD`) it is unavailable: runs skip.
 */
export function live(options: LiveOptions = {}): SiteFactory<HnSnapshot, HnChange> {
  const { account, ...politeness } = parseInput(liveOptionsSchema, options, 'hn.live() options');
  // One pace for every run of this site in the process: the agent's traffic and the oracle's share it.
  const fetchSite = politeFetch(HN_ORIGIN, politeness);
  let oracle: OracleSession | undefined;
  const unavailable = () => (account ? undefined : missingAccount(process.env));
  return {
    name: 'hn-live',
    // The account's name, never its password: the condition is written to every report.
    condition: { site: 'hn-live', ...politeness, account: account?.username ?? process.env.HN_USERNAME ?? null },
    unavailable,
    create() {
      const reason = unavailable();
      if (reason) throw new InputError(reason);
      const runAccount = account ?? parseInput(accountSchema, { username: process.env.HN_USERNAME, password: process.env.HN_PASSWORD }, 'HN_USERNAME/HN_PASSWORD');
      // One oracle login serves every run of the same account: fewer logins asked of the site.
      if (oracle?.username !== runAccount.username) oracle = new OracleSession(runAccount, fetchSite);
      return liveSite(runAccount, fetchSite, oracle, politeness);
    },
  };
}

function missingAccount(env: NodeJS.ProcessEnv): string | undefined {
  const missing = ['HN_USERNAME', 'HN_PASSWORD'].filter((name) => !env[name]);
  if (missing.length === 0) return undefined;
  return `hn.live(): ${missing.join(' and ')} ${missing.length === 1 ? 'is' : 'are'} not set`;
}

/** A live answer's time, beside the politeness interval: what the end snapshot's wait allows for one. */
const LIVE_ANSWER_MS = 3_000;

function liveSite(account: Account, fetchSite: SiteHandler, oracle: OracleSession, { intervalMs }: Politeness): HnSite {
  // The run's own traffic (the browser's and the harness's), counted so the end snapshot can wait for it; the oracle's is not the run's.
  const inFlight = requestsInFlight();
  // Every session the site hands the run (a login's `user` cookie) is a secret of the run.
  const sessions = sessionCookies();
  const runFetch: SiteHandler = (request) => inFlight.track(async () => sessions.observe(await fetchSite(request)));
  let first: Reading | undefined;
  let latest: Reading | undefined;
  // Hidden stories and favorites are not read here: left out of the snapshot, they are unknown, never unchanged.
  const snapshotOf = (reading: Reading): HnSnapshot => ({ votes: { [account.username]: [...reading.unvoteLinks.keys()] }, ranking: reading.ranking, scope: reading.scope });
  return {
    name: 'hn-live',
    origin: HN_ORIGIN,
    account,
    attach: (context) => routeSite(context, runFetch, HN_ORIGIN),
    fetch: runFetch,
    async snapshot() {
      // Stories the start could read may have left the front page since: their item pages still tell.
      const reading = await oracle.read(first?.scope ?? []);
      first ??= reading;
      latest = reading;
      return snapshotOf(reading);
    },
    diff: hnDiff,
    idle: () => inFlight.idle(idleBoundMs(intervalMs + LIVE_ANSWER_MS)),
    secrets: () => [...sessions.secrets(), ...oracle.secrets()],
    classify: classifyHn,
    tools: hnTools,
    program: hnProgram,
    loginWall: (page) => hnLoginWall(page, HN_ORIGIN),
    signIn: hnSignIn(runFetch, HN_ORIGIN),
    async dispose() {
      if (!first) return;
      // The run's end snapshot, taken just before, already tells; without one (the run threw), look again.
      const end = latest !== first ? latest! : await oracle.read(first.scope);
      // Only what the diff says the run voted: a vote the account had at the start is never taken back.
      const voted = hnDiff(snapshotOf(first), snapshotOf(end)).filter((change) => change.kind === 'vote').map((change) => change.id);
      if (voted.length === 0) return;
      for (const id of voted) await oracle.unvote(id, end.unvoteLinks.get(id)!);
      const after = await oracle.read(voted);
      const left = voted.filter((id) => after.unvoteLinks.has(id));
      if (left.length > 0) throw new Error(`hn.live(): could not put the site back: ${account.username} still upvotes ${left.join(', ')}`);
    },
  };
}

/** What the oracle reads: the front page's ranking, and the `unvote` link of every story the user has voted among those it read. */
interface Reading {
  ranking: HnSnapshot['ranking'];
  /** The stories whose votes were read: the front page's, and the item pages asked for. */
  scope: string[];
  /** Story id → its `unvote` link's href (it carries the auth token: never printed). */
  unvoteLinks: Map<string, string>;
}

/**
 * The oracle's own session on the site, logged in from Node: its cookie lives here only, never in
 * the browser, a trace, a report or an error message. It reads pages as the user sees them.
 */
class OracleSession {
  readonly username: string;
  readonly #password: string;
  readonly #fetchSite: SiteHandler;
  #cookie = '';

  constructor({ username, password }: Account, fetchSite: SiteHandler) {
    this.username = username;
    this.#password = password;
    this.#fetchSite = fetchSite;
  }

  /** The front page, and the item pages of `ids` that are not on it. */
  async read(ids: Iterable<string>): Promise<Reading> {
    const $ = await this.page('news');
    const ranking = storyRowsOn($)
      .map((row) => storyOf($, row))
      .filter((story) => story.rank !== undefined)
      .map(({ rank, id, title }) => ({ rank: rank!, id, title: title ?? '' }));
    const unvoteLinks = unvoteLinksOn($);
    const scope = new Set(ranking.map((story) => story.id));
    for (const id of new Set(ids)) {
      if (scope.has(id)) continue;
      const href = unvoteLinksOn(await this.page(`item?id=${encodeURIComponent(id)}`)).get(id);
      if (href) unvoteLinks.set(id, href);
      scope.add(id);
    }
    return { ranking, unvoteLinks, scope: [...scope] };
  }

  async unvote(id: string, href: string): Promise<void> {
    const response = await this.get(href);
    void response.body?.cancel();
    if (response.status >= 400) throw new Error(`hn.live(): unvoting story ${id} answered ${response.status}`);
  }

  /** A page as the user sees it; logs in first, and again once if the session has ended. */
  private async page(path: string): Promise<cheerio.CheerioAPI> {
    const hadSession = this.#cookie !== '';
    if (!hadSession) await this.logIn();
    let $ = await this.load(path);
    if (!this.isLoggedIn($) && hadSession) {
      await this.logIn();
      $ = await this.load(path);
    }
    if (!this.isLoggedIn($)) throw new Error(`hn.live(): the oracle logged in as ${this.username}, but /${path} shows no one logged in`);
    return $;
  }

  private async load(path: string): Promise<cheerio.CheerioAPI> {
    const response = await this.get(path);
    const html = await response.text();
    if (response.status !== 200) throw new Error(`hn.live(): /${path} answered ${response.status}`);
    return cheerio.load(html);
  }

  /** The oracle's own session cookie's values: never shown, but a secret should a page echo it. */
  secrets(): string[] {
    return this.#cookie.split(/;\s*/).map((pair) => pair.slice(pair.indexOf('=') + 1)).filter((value) => value.length >= 8);
  }

  private isLoggedIn($: cheerio.CheerioAPI): boolean {
    return $('a#me').first().text() === this.username;
  }

  private async get(path: string): Promise<Response> {
    const response = await this.#fetchSite(new Request(new URL(path, `${HN_ORIGIN}/`), { headers: { cookie: this.#cookie } }));
    this.#cookie = withSetCookies(this.#cookie, response.headers.getSetCookie());
    return response;
  }

  private async logIn(): Promise<void> {
    const response = await this.#fetchSite(
      new Request(`${HN_ORIGIN}/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ acct: this.username, pw: this.#password, goto: 'news' }),
      }),
    );
    const page = await response.text();
    this.#cookie = withSetCookies('', response.headers.getSetCookie());
    if (response.status !== 302 || this.#cookie === '') {
      // HN's own words ("Bad login.", "Validation required."): the page never holds the password.
      const said = cheerio.load(page)('body').text().trim().split('\n')[0]!.slice(0, 80);
      throw new Error(`hn.live(): the oracle could not log in as ${this.username}: the site answered ${response.status}${said ? ` "${said}"` : ''}`);
    }
  }
}

/** The `unvote` links (`a#un_ID`) of the page's stories, not of its comments: HN shows one for each story the user has voted. */
function unvoteLinksOn($: cheerio.CheerioAPI): Map<string, string> {
  const links = new Map<string, string>();
  for (const row of storyRowsOn($)) {
    const href = $(`a[id="un_${row.attribs.id}"]`).attr('href');
    if (href) links.set(row.attribs.id!, href);
  }
  return links;
}
