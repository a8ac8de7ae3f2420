export { routeReplica } from './adapters/route.ts';
export { replicaHandlers } from './adapters/msw.ts';
export { serveReplica, type ReplicaServer } from './adapters/server.ts';
export { loadCapture, type Capture, type Item } from './capture.ts';
export { HN_ORIGIN, DEFAULT_INJECTION, defaultAccount, markupYears, type FaultsInput, type ReplicaOptionsInput } from './options.ts';
export { createReplica, type HnReplica } from './replica.ts';
export { politeFetch, RateLimitError, type Politeness } from './polite-fetch.ts';
export { sanitizeCapture } from './sanitize.ts';
export type { SiteTruth } from './state.ts';
