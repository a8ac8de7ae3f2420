import { existsSync, readFileSync } from 'node:fs';
import { uniformFloat64 } from 'pure-rand/distribution/uniformFloat64';
import { xoroshiro128plus } from 'pure-rand/generator/xoroshiro128plus';
import { assets } from './assets.ts';
import { loadCapture, type Capture } from './capture.ts';
import { commentListPage, commentRoutes, commentsIn, commentViews } from './comments.ts';
import { HN_ORIGIN, parseReplicaOptions, type ReplicaOptions, type ReplicaOptionsInput } from './options.ts';
import { voteOf } from './classify.ts';
import { loginPage, notices } from './pages.ts';
import type { HnSnapshot } from './snapshot.ts';
import { formOf, html, pageNumberOf, redirect, safeGoto, type Pages, type Routes, type Visitor } from './routing.ts';
import { listingRoutes } from './listings.ts';
import { submissionRoutes, submittedItem, submittedItemPage } from './submissions.ts';
import { HnState, type SiteTruth, type UserList } from './state.ts';
import { renderTemplate, type PageView, type Template } from './template.ts';
import { karmaCounter, userRoutes } from './users.ts';
import { idleBoundMs, requestsInFlight } from '../site.ts';
import type { SiteIdle } from '../../core/site.ts';
import { writeFileAtomic } from '../../text.ts';
import { cookieHeaderPairs, parseCookies } from '../../http.ts';

/** Bodies larger than this are refused: HN's forms are a few fields. */
export const MAX_BODY_BYTES = 64 * 1024;

export interface HnReplica {
  readonly options: ReplicaOptions;
  readonly capture: Capture;
  readonly state: HnState;
  /** The whole site: a fetch-style handler that every adapter (route, server, msw) wraps. */
  handle(request: Request): Promise<Response>;
  truth(): SiteTruth;
  /**
   * The whole state a run can change, as the oracle reads it: every user's votes, hides and
   * favorites, comments, submissions and profiles (sessions are not the task's work), and the front
   * pages' stories by rank as listed now (captured points plus votes).
   */
  snapshot(): HnSnapshot;
  /**
   * Back to the start, as if just created: the votes, hides, favorites and sessions it began with (a `stateFile`'s,
   * or none), an empty request log, and the faults' counters and 502 draws from the start.
   */
  reset(): void;
  /** Waits until every request that reached the handler is answered, at most `idleBoundMs(latencyMs)`. */
  idle(): Promise<SiteIdle>;
  /** Whether the page that asked for `response` dies instead of receiving it (the `crashAfter` fault): the browser adapter closes it. */
  crashesPage(response: Response): boolean;
}

export function createReplica(input: ReplicaOptionsInput = {}): HnReplica {
  const options = parseReplicaOptions(input);
  const { faults, account } = options;
  const capture = loadCapture(options.capture, faults);
  // HN's ids only grow: what users post here comes after everything captured.
  const firstNewId = Math.max(0, ...[...capture.items.keys()].map(Number).filter(Number.isSafeInteger)) + 1;
  const state = new HnState(account, faults.seed, firstNewId);
  if (options.stateFile && existsSync(options.stateFile)) state.restore(JSON.parse(readFileSync(options.stateFile, 'utf8')));
  // A copy: sessions count their requests in place.
  const started = structuredClone(state.toJSON());
  const ranked = [...capture.items.values()].filter((item) => item.rank !== undefined).sort((a, b) => a.rank! - b.rank!);
  let rng = xoroshiro128plus(faults.seed);
  let pageRequests = 0;
  /** The answer the `crashAfter` fault keeps from its page: one at most, since the count passes N once. */
  const crashing = new WeakSet<Response>();
  const saveState = () => {
    if (options.stateFile) writeFileAtomic(options.stateFile, JSON.stringify(state.toJSON()));
  };
  const inFlight = requestsInFlight();
  /** A captured item, or a story submitted on the replica. */
  const itemOf = (id: string) => capture.items.get(id) ?? submittedItem(state, id);
  const karma = karmaCounter({ capture, state });

  /** The page as `visitor` sees it; a listing shows the rows `lists` picks, by default all but the ones the visitor hid. */
  const view = (visitor: Visitor, lists?: (id: string) => boolean): PageView => {
    const user = visitor.session?.user;
    const has = (list: UserList) => (id: string) => (user ? state.has(list, user, id) : false);
    const hidden = has('hidden');
    return {
      style: capture.style,
      user: user ? { name: user, karma: karma(user), logoutAuth: state.authToken(user, 'logout') } : undefined,
      voted: has('votes'),
      hidden,
      faved: has('faves'),
      lists: lists ?? ((id) => !hidden(id)),
      points: (id) => (itemOf(id)?.points ?? 0) + state.votesOn(id),
      auth: (id) => state.authToken(user ?? '', id),
      ...commentViews(state),
    };
  };

  const page = (template: Template, visitor: Visitor, lists?: (id: string) => boolean) => html(renderTemplate(template, view(visitor, lists)));
  const pages: Pages = { capture, state, karma, page };

  /**
   * HN's hide and favorite links: `id`, the item's `auth` token, `un=t` to take it back. Logged
   * out, the login page (nothing is done after logging in); a wrong or missing token, a plain
   * "Unknown." and no change. Hiding is for stories; favorites are for stories and comments.
   * HN's script hides in the background (`snip-story`, with `onop` for `goto`): an empty answer, no redirect.
   */
  const markItem = (list: 'hidden' | 'faves', url: URL, visitor: Visitor): Response => {
    const id = url.searchParams.get('id') ?? '';
    const background = url.pathname === '/snip-story' || url.searchParams.get('js') === 't';
    const back = url.searchParams.get('goto') ?? url.searchParams.get('onop');
    const goto = back !== null ? safeGoto(back) : `item?id=${id}`;
    const item = itemOf(id);
    if (!item || (list === 'hidden' && item.kind !== 'story')) return html(notices.noSuchItem);
    const user = visitor.session?.user;
    if (!user) return html(loginPage(goto));
    if (url.searchParams.get('auth') !== state.authToken(user, id)) return html(notices.unknown);
    state.mark(list, user, id, url.searchParams.get('un') !== 't');
    return background ? new Response('', { status: 200 }) : redirect(goto);
  };

  const vote = (url: URL, visitor: Visitor): Response => {
    const { id, how, goto: back, by } = voteOf(url.searchParams);
    const goto = safeGoto(back);
    const item = itemOf(id);
    if (!item) return html(notices.noSuchItem);
    // A job ad takes no votes: HN's refusal, whoever asks.
    if ((how !== 'up' && how !== 'un') || item.job) return html(notices.cantVote);
    const user = visitor.session?.user;
    if (!user) {
      // Logging in from this page completes the vote, as on HN: the form's goto is this vote.
      return html(loginPage(`vote?id=${id}&how=${how}&goto=${goto}`, notices.mustLogin));
    }
    if (url.searchParams.get('auth') !== state.authToken(user, id) || (by !== null && by !== user)) return html(notices.cantVote);
    state.vote(user, id, how);
    return url.searchParams.get('js') === 't' ? new Response('', { status: 200 }) : redirect(goto);
  };

  const login = async (request: Request): Promise<Response> => {
    const form = await formOf(request);
    const goto = safeGoto(form.get('goto'));
    if (form.get('creating') === 't') return html(notices.noAccounts);
    const cookie = state.login(form.get('acct') ?? '', form.get('pw') ?? '');
    if (!cookie) return html(loginPage(goto, notices.badLogin));
    const secure = new URL(request.url).protocol === 'https:' ? '; Secure' : '';
    const setCookie = `user=${cookie}; Path=/; Max-Age=31536000; SameSite=Lax${secure}`;
    const pending = pendingVote(goto);
    const pendingItem = pending && itemOf(pending.id);
    if (pending && pendingItem && !pendingItem.job) {
      state.vote(form.get('acct')!, pending.id, pending.how);
      return redirect(pending.goto, setCookie);
    }
    return redirect(goto, setCookie);
  };

  const logout = (url: URL, visitor: Visitor): Response => {
    const goto = safeGoto(url.searchParams.get('goto'));
    const user = visitor.session?.user;
    if (!user || url.searchParams.get('auth') !== state.authToken(user, 'logout')) return redirect(goto);
    state.logout(visitor.cookie!);
    return redirect(goto, 'user=; Path=/; Max-Age=0');
  };

  /** The core pages: listings, items, login, and the links that vote, hide and favorite. */
  const core: Routes = {
    '/': { GET: (_, url, visitor) => frontPage(url, visitor) },
    '/news': { GET: (_, url, visitor) => frontPage(url, visitor) },
    // Before 2014 page 2 of the front page was `news2`.
    '/news2': { GET: (_, __, visitor) => page(capture.frontPages[1] ?? capture.emptyPage, visitor) },
    '/item': {
      GET(_, url, visitor) {
        const id = url.searchParams.get('id') ?? '';
        const template = capture.itemPage(id) ?? submittedItemPage(pages, id);
        return template ? page(template, visitor) : html(notices.noSuchItem);
      },
    },
    '/login': { GET: (_, url) => html(loginPage(safeGoto(url.searchParams.get('goto')))), POST: login },
    '/logout': { GET: (_, url, visitor) => logout(url, visitor) },
    '/vote': { GET: (_, url, visitor) => vote(url, visitor) },
    '/hide': { GET: (_, url, visitor) => markItem('hidden', url, visitor) },
    '/snip-story': { GET: (_, url, visitor) => markItem('hidden', url, visitor) },
    '/fave': { GET: (_, url, visitor) => markItem('faves', url, visitor) },
    '/hidden': {
      GET(_, __, visitor) {
        const user = visitor.session?.user;
        if (!user) return html(loginPage('hidden'));
        return page(capture.listPage('hidden', 'hidden'), visitor, (id) => state.has('hidden', user, id));
      },
    },
    '/favorites': {
      GET(_, url, visitor) {
        // Anyone's favorites are public on HN, logged in or not.
        const owner = url.searchParams.get('id') ?? '';
        if (!state.accounts.has(owner)) return html(notices.noSuchUser);
        if (url.searchParams.get('comments') === 't') return commentListPage(pages, commentsIn(pages, 'faves', owner), `${owner}'s favorite comments`, `favorites?id=${owner}&comments=t`, visitor);
        return page(capture.listPage(`${owner}'s favorites`, `favorites?id=${owner}`), visitor, (id) => state.has('faves', owner, id));
      },
    },
  };
  const frontPage = (url: URL, visitor: Visitor) => {
    return page(capture.frontPages[pageNumberOf(url) - 1] ?? capture.emptyPage, visitor);
  };
  const routes: Routes = { ...core, ...userRoutes(pages), ...commentRoutes(pages), ...listingRoutes(pages), ...submissionRoutes(pages) };

  const route = async (request: Request, url: URL, visitor: Visitor): Promise<Response> => {
    const handlers = Object.hasOwn(routes, url.pathname) ? routes[url.pathname] : undefined;
    if (!handlers) return html(notices.unknown, request.method === 'POST' ? 405 : 200);
    const handler = request.method === 'POST' ? handlers.POST : handlers.GET;
    return handler ? handler(request, url, visitor) : html(notices.unknown, 405);
  };

  const faultResponse = (): Response | undefined => {
    if (faults.rateLimitAfter !== undefined && pageRequests > faults.rateLimitAfter) {
      return html(notices.rateLimited, 503);
    }
    if (faults.errorRate > 0 && uniformFloat64(rng) < faults.errorRate) {
      return html('<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center></body></html>', 502);
    }
    return undefined;
  };

  const visitorOf = (request: Request): Visitor => {
    const cookie = readCookie(request.headers.get('cookie'), 'user');
    const session = state.session(cookie);
    if (!session) return { cookie };
    session.requests += 1;
    if (faults.sessionExpiresAfter !== undefined && session.requests > faults.sessionExpiresAfter) {
      state.expire(cookie!);
      return { cookie };
    }
    return { cookie, session };
  };

  return {
    options,
    capture,
    state,
    truth: () => state.truth(),
    snapshot() {
      const { votes, hidden, faves, comments, submissions, profiles } = state.truth();
      const { commentsAdded } = commentViews(state);
      const ranking = ranked.map(({ rank, id, title, site, url, points, author, comments: count, time, job, closed }) => ({
        ...{ rank: rank!, id, title: title ?? '', site, url, by: author, comments: count === undefined ? undefined : count + commentsAdded(id), time, job, closed },
        ...(points === undefined ? {} : { points: points + state.votesOn(id) }),
      }));
      return { votes, hidden, faves, ranking: JSON.parse(JSON.stringify(ranking)), comments: [...structuredClone(capture.comments), ...comments], submissions, profiles };
    },
    reset() {
      state.reset(started);
      rng = xoroshiro128plus(faults.seed);
      pageRequests = 0;
      saveState();
    },
    idle: () => inFlight.idle(idleBoundMs(faults.latencyMs)),
    handle: (request) => inFlight.track(() => answer(request)),
    crashesPage: (response) => crashing.has(response),
  };

  /** The whole site, one request at a time: static files, then latency, faults and routes. */
  async function answer(request: Request): Promise<Response> {
    const url = new URL(request.url);
    const method = request.method;
    const asset = assets.get(url.pathname);
    if (asset && (method === 'GET' || method === 'HEAD')) {
      return new Response(method === 'HEAD' ? null : asset.body, { headers: { 'content-type': asset.type, 'cache-control': 'max-age=3600' } });
    }
    const number = (pageRequests += 1);
    if (faults.latencyMs > 0) await new Promise((resolve) => setTimeout(resolve, faults.latencyMs));
    const visitor = visitorOf(request);
    let response: Response;
    if (!['GET', 'HEAD', 'POST'].includes(method)) response = html(notices.unknown, 405);
    else if (Number(request.headers.get('content-length') ?? 0) > MAX_BODY_BYTES) response = html('Request too large.', 413);
    else response = faultResponse() ?? (await route(request, url, visitor));
    // Every page request counts against its session (the expiry fault), so every one is kept.
    saveState();
    state.requests.push({
      at: Date.now(),
      method,
      path: (url.pathname + url.search).replace(/([?&])auth=[^&]*/g, '$1auth=…'),
      user: visitor.session?.user,
      status: response.status,
    });
    const answered = method === 'HEAD' ? new Response(null, response) : response;
    if (number === faults.crashAfter) crashing.add(answered);
    return answered;
  }
}


function pendingVote(goto: string): { id: string; how: 'up' | 'un'; goto: string } | undefined {
  const url = new URL(goto, HN_ORIGIN);
  const how = url.searchParams.get('how');
  const id = url.searchParams.get('id');
  if (url.pathname !== '/vote' || !id || (how !== 'up' && how !== 'un')) return undefined;
  return { id, how, goto: safeGoto(url.searchParams.get('goto')) };
}

function readCookie(header: string | null, name: string): string | undefined {
  return parseCookies(cookieHeaderPairs(header)).get(name) || undefined;
}
