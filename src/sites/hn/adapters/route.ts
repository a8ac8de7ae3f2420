import type { BrowserContext, Page, Route } from '@playwright/test';
import type { HopCheck } from '../../../core/site.ts';
import { HN_ORIGIN } from '../options.ts';
import { serveRoute } from '../../../http.ts';
import type { HnReplica } from '../replica.ts';

/** The replica served at the real origin inside a browser context. Nothing leaves the machine. */
export async function routeReplica(target: BrowserContext | Page, replica: HnReplica, origin = HN_ORIGIN): Promise<void> {
  await target.route(`${origin}/**`, (route) => fulfillFromReplica(route, replica, origin));
}

/** One routed request answered by the replica, its crash fault included; `check` judges each hop (`Site.serve`). */
export function fulfillFromReplica(route: Route, replica: HnReplica, origin = HN_ORIGIN, check?: HopCheck): Promise<void> {
  return serveRoute(route, (request) => replica.handle(request), origin, { crashes: replica.crashesPage, ...(check && { check }) });
}
