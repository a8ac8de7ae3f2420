import { classifyHn } from './classify.ts';
import { hnProgram, hnTools } from './tools.ts';
import { hnLoginWall, hnSignIn } from './sign-in.ts';
import * as cheerio from 'cheerio';
import type { Element } from 'domhandler';
import type { z } from 'zod';
import { InputError, parseInput } from '../../input.ts';
import { routeSite, type SiteHandler } from '../route.ts';
import { storyOf, storyRowsOn } from './capture.ts';
import { withSetCookies } from '../../http.ts';
import { accountSchema, HN_ORIGIN, type Account } from './options.ts';
import { politeFetch, politenessSchema, type Politeness } from './polite-fetch.ts';
import type { HnSite, HnSiteFactory } from './site.ts';
import { hnDiff, type HnChange, type HnComment, type HnSnapshot } from './snapshot.ts';
import { idleBoundMs, requestsInFlight, sessionCookies } from '../site.ts';

export const liveOptionsSchema = politenessSchema
  .extend({
    /** The account the agent and the oracle log in with; by default `HN_USERNAME` / `HN_PASSWORD`. */
    account: accountSchema.optional(),
  })
  .strict();
export type LiveOptions = z.input<typeof liveOptionsSchema>;

/**
 * `hn.live()`: the real news.ycombinator.com. The browser's requests go through Node, spaced and
 * backing off as the site asks; the oracle reads the truth (the account's own lists and comments)
 * in its own session; after the run, the votes, hides and favorites the run put are taken back, so
 * nightly runs find the site as they left it.
 * Without an account (options, or `HN_USERNAME` and `HN_PASSWORD`) it is unavailable: runs skip.
 */
export function live(options: LiveOptions = {}): HnSiteFactory {
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
  // Submissions and profiles are not read: left out of the snapshot, they are unknown, never unchanged, and a task judged on them is refused.
  const snapshotOf = ({ ranking, lists, comments }: Reading): HnSnapshot => ({
    ranking,
    votes: { [account.username]: lists.votes },
    hidden: { [account.username]: lists.hidden },
    faves: { [account.username]: lists.faves },
    comments,
  });
  return {
    name: 'hn-live',
    origin: HN_ORIGIN,
    account,
    attach: (context) => routeSite(context, runFetch, HN_ORIGIN),
    fetch: runFetch,
    async snapshot() {
      const reading = await oracle.read();
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
      const end = latest !== first ? latest! : await oracle.read();
      // Only the marks the diff says the run put: one the account had at the start is never taken back. A comment stays (HN deletes one only by hand).
      const put = hnDiff(snapshotOf(first), snapshotOf(end)).filter((change): change is HnChange & { kind: Undoable } => change.kind in UNDO);
      if (put.length === 0) return;
      for (const change of put) await oracle.undo(change.kind, change.id, end);
      const after = await oracle.read();
      const left = put.filter((change) => after.lists[UNDO[change.kind].list].includes(change.id));
      if (left.length > 0) throw new Error(`hn.live(): could not put the site back: ${account.username} still ${left.map((change) => `${UNDO[change.kind].still} ${change.id}`).join(', ')}`);
    },
  };
}

/** The marks a run may put that dispose takes back: the list each is in, and what a mark left in it is called. */
const UNDO = { vote: { list: 'votes', still: 'upvotes' }, hide: { list: 'hidden', still: 'hides' }, fave: { list: 'faves', still: 'favorites' } } as const;
type Undoable = keyof typeof UNDO;

/** What the oracle reads: the front page's ranking, the account's own lists, and its comments. */
interface Reading {
  ranking: HnSnapshot['ranking'];
  /** Item ids in each of the account's lists, as its own pages list them (stories and comments). */
  lists: Record<(typeof UNDO)[Undoable]['list'], string[]>;
  comments: HnComment[];
  /** The links in those pages that take a mark back: `vote id` / `hide id` → href (it carries the auth token: never printed). */
  undoLinks: Map<string, string>;
}

/** The pages that list each of the account's lists, `{user}` for its name: HN lists stories and comments apart. */
const LIST_PAGES = {
  votes: ['upvoted?id={user}', 'upvoted?id={user}&comments=t'],
  hidden: ['hidden'],
  faves: ['favorites?id={user}', 'favorites?id={user}&comments=t'],
} as const;

/** Pages of one listing the oracle follows (`More`): past them, the account's lists are too long to read at every snapshot. */
const MAX_PAGES = 10;

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

  /** The front page, every page of the account's lists, and its comments (`/threads`). */
  async read(): Promise<Reading> {
    const $ = await this.page('news');
    const ranking = storyRowsOn($)
      .map((row) => storyOf($, row))
      .filter((story) => story.rank !== undefined)
      .map(({ rank, id, title }) => ({ rank: rank!, id, title: title ?? '' }));
    const undoLinks = new Map<string, string>();
    const lists = { votes: [] as string[], hidden: [] as string[], faves: [] as string[] };
    for (const list of Object.keys(LIST_PAGES) as Array<keyof typeof LIST_PAGES>) {
      for (const path of LIST_PAGES[list]) {
        for (const page of await this.pages(path.replace('{user}', encodeURIComponent(this.username)))) {
          lists[list].push(...page('tr.athing[id]').toArray().map((row) => row.attribs.id!));
          for (const [key, href] of undoLinksOn(page)) undoLinks.set(key, href);
        }
      }
    }
    const comments = (await this.pages(`threads?id=${encodeURIComponent(this.username)}`)).flatMap((page) => commentsOn(page, this.username));
    return { ranking, lists, comments, undoLinks };
  }

  /** Takes back the run's `kind` mark on `id`: by its link in the account's lists, else on the item's own page. */
  async undo(kind: Undoable, id: string, reading: Reading): Promise<void> {
    const href = reading.undoLinks.get(`${kind} ${id}`) ?? undoLinksOn(await this.page(`item?id=${encodeURIComponent(id)}`)).get(`${kind} ${id}`);
    if (!href) throw new Error(`hn.live(): could not put the site back: no link takes back ${kind} ${id}`);
    const response = await this.get(href);
    void response.body?.cancel();
    if (response.status >= 400) throw new Error(`hn.live(): taking back ${kind} ${id} answered ${response.status}`);
  }

  /** A listing and the pages its `More` links lead to. */
  private async pages(path: string): Promise<cheerio.CheerioAPI[]> {
    const pages = [await this.page(path)];
    for (let more = pages[0]!('a.morelink').attr('href'); more; more = pages.at(-1)!('a.morelink').attr('href')) {
      if (pages.length === MAX_PAGES) throw new Error(`hn.live(): /${path} lists more than ${MAX_PAGES} pages for ${this.username}: use an account made for this, whose lists are short`);
      pages.push(await this.page(more));
    }
    return pages;
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

/** The links of a page that take a mark back, by `vote id`, `hide id`, `fave id`: `unvote` (`a#un_ID`), `un-hide` and `un-favorite` (`un=t`). */
function undoLinksOn($: cheerio.CheerioAPI): Map<string, string> {
  const links = new Map<string, string>();
  $('a[id^="un_"]').each((_, link) => void links.set(`vote ${link.attribs.id!.slice(3)}`, link.attribs.href!));
  $('a[href*="un=t"]').each((_, link) => {
    const url = new URL(link.attribs.href!, `${HN_ORIGIN}/`);
    const kind = url.pathname === '/hide' ? 'hide' : url.pathname === '/fave' ? 'fave' : undefined;
    const id = url.searchParams.get('id');
    if (kind && id) links.set(`${kind} ${id}`, link.attribs.href!);
  });
  return links;
}

/** The account's own comments on a `/threads` page (it lists replies by others too): parent from its `parent` link, else its story. */
function commentsOn($: cheerio.CheerioAPI, user: string): HnComment[] {
  return $('tr.athing[id]')
    .toArray()
    .flatMap((row) => {
      const head = $(row).find('.comhead').first();
      if (head.find('a.hnuser').first().text() !== user) return [];
      const idOf = (link: cheerio.Cheerio<Element>) => new URL(link.attr('href') ?? '', `${HN_ORIGIN}/`).searchParams.get('id') ?? undefined;
      const story = idOf(head.find('.onstory a').first());
      const parent = idOf(head.find('a').filter((_, link) => $(link).text() === 'parent').first()) ?? story;
      if (!story || !parent) return [];
      return [{ id: row.attribs.id!, parent, story, by: user, text: commentText($, $(row).find('.commtext').first()) }];
    });
}

/** A comment's text as it was written: HN keeps paragraphs apart with a bare `<p>`; the reply link is not the comment's. */
function commentText($: cheerio.CheerioAPI, commtext: cheerio.Cheerio<Element>): string {
  const paragraphs = [''];
  for (const node of commtext.contents().toArray()) {
    if (node.type === 'tag' && node.name === 'p') paragraphs.push($(node).text());
    else if (!(node.type === 'tag' && $(node).hasClass('reply'))) paragraphs[paragraphs.length - 1] += $(node).text();
  }
  return paragraphs.map((paragraph) => paragraph.trim()).filter(Boolean).join('\n\n');
}
