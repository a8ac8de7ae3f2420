import type { BrowserContext, Page } from '@playwright/test';
import { serveRoute, type SiteHandler } from '../http.ts';

/** Whether the page that asked for a response crashes instead of receiving it (a site's crash fault). */
export type CrashesPage = (response: Response) => boolean;

export type { SiteHandler } from '../http.ts';

/**
 * Serves `origin` inside a browser context from `handler` (a kit's app, a replica, or for a live
 * site a polite fetch), so every request the page sends there goes through Node: nothing leaves the
 * machine unless the handler sends it. The site's redirects are followed in Node (see serveRoute).
 */
export async function routeSite(target: BrowserContext | Page, handler: SiteHandler, origin: string, crashes: CrashesPage = () => false): Promise<void> {
  await target.route(`${origin}/**`, (route) => serveRoute(route, handler, origin, { crashes }));
}
