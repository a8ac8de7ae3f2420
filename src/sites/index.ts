/**
 * `harness-eval/sites`: what a site kit's author needs (docs/sites.md, "Writing a site kit"): the
 * contract's types, and the helpers every kit uses to serve its site in a browser context or over
 * plain HTTP, to wait for it to settle and to keep its session tokens secret; and the
 * postconditions over a kit's records its tasks are written with (docs/tasks.md).
 */
export { SiteDown } from '../core/site.ts';
export type { HopCheck, LoginWall, SignedIn, Site, SiteAccount, SiteAction, SiteFactory, SiteIdle, SiteProgramApi, SiteProgramFunction, SiteRequest, SyncSiteFactory } from '../core/site.ts';
export type { Tool, ToolOutput } from '../core/tool.ts';
export type { StateChange } from '../core/state.ts';
export type { Evidence, Postcondition, SessionView, Verdict } from '../core/task.ts';
export { idleBoundMs, requestsInFlight, sessionCookies } from './site.ts';
export { routeSite, type CrashesPage, type SiteHandler } from './route.ts';
export { recordSite, replayed, type RecordSiteOptions, type ReplayedOptions } from './record.ts';
export { forwardTo, freePort, proxySite, spawnApp, type AppInstance, type ProxySite, type ProxySiteOptions, type SpawnAppOptions, type SpawnedApp } from './app.ts';
export { serveSite, serveHttp, type HttpServer, type SiteServer } from '../serve.ts';
export { boundAtStart, notFound, type NotFound } from '../eval/postconditions.ts';
export { fieldChanged, nothingElseTouched, recordAdded, recordRemoved, type RecordPick, type Records } from '../eval/records.ts';
