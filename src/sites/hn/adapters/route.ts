import type { BrowserContext, Page, Route } from '@playwright/test';
import type { HopCheck } from '../../../core/site.ts';
import { HN_ORIGIN } from '../options.ts';
import { serveRoute, type SiteHandler } from '../../../http.ts';
import type { HnReplica } from '../replica.ts';

/** Whether the page that asked for a response crashes instead of receiving it (a site's crash fault). */
export type CrashesPage = (response: Response) => boolean;

export type { SiteHandler } from '../../../http.ts';

/** The replica served at the real origin inside a browser context. Nothing leaves the machine. */
export async function routeReplica(target: BrowserContext | Page, replica: HnReplica, origin = HN_ORIGIN): Promise<void> {
  await target.route(`${origin}/**`, (route) => fulfillFromReplica(route, replica, origin));
}

/** One routed request answered by the replica, its crash fault included; `check` judges each hop (`Site.serve`). */
export function fulfillFromReplica(route: Route, replica: HnReplica, origin = HN_ORIGIN, check?: HopCheck): Promise<void> {
  return serveRoute(route, (request) => replica.handle(request), origin, { crashes: replica.crashesPage, ...(check && { check }) });
}

/**
 * Serves `origin` inside a browser context from `handler`: the replica's, or for the live site a
 * polite fetch, so every request the page sends goes through Node (spaced, and mockable). The
 * site's redirects are followed in Node (see serveRoute); the server and msw adapters answer real 302s.
 */
export async function routeSite(target: BrowserContext | Page, handler: SiteHandler, origin: string, crashes: CrashesPage = () => false): Promise<void> {
  await target.route(`${origin}/**`, (route) => serveRoute(route, handler, origin, { crashes }));
}
