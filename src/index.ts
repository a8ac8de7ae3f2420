import { upvoted, upvotedAllMatching, upvotedTitled } from './eval/postconditions.ts';
import { upvoteAllMatching, upvoteFirstPost, upvoteTitled } from './eval/tasks.ts';
import { live } from './sites/hn/live.ts';
import { recorded } from './sites/hn/site.ts';

export { test, stackName, type Harness, type HarnessOptions, type RunRequest } from './playwright/fixtures.ts';
export { expect } from './playwright/matchers.ts';
export { matrix, type MatrixOptions } from './playwright/matrix.ts';
export { evaluateHarness, type EvaluateOptions, type RunRecord } from './playwright/evaluate.ts';
export { chromiumLaunchOptions } from './playwright/chromium.ts';
export { sharedBrowser, type SharedBrowser } from './playwright/shared-browser.ts';
export { runHarness, type BrowserSession, type RunResult } from './harness/run.ts';
export type { Layer, AttemptOutcome } from './harness/layer.ts';
export type { RunContext, Credentials, SiteFetch } from './harness/context.ts';
export type { TraceEvent, StopReason } from './harness/trace.ts';
export { context, guardrails, login, resolveLayers, retry, verify, type LayerSpec } from './layers/index.ts';
export { layerStacks } from './layers/stacks.ts';
export { createModel, type ModelSpec } from './models/registry.ts';
export {
  openCassette,
  readCassette,
  resolveModelCache,
  ReplayMissError,
  type Cassette,
  type CassetteFile,
  type CassetteOptions,
  type ModelCacheMode,
  type ModelCacheOptions,
} from './models/cassette.ts';
export type { Model, ChatRequest, ChatResponse, ChatMessage } from './models/types.ts';
export { judge } from './eval/oracle.ts';
export type { Evidence, Postcondition, Verdict } from './eval/postconditions.ts';
export type { Task } from './eval/tasks.ts';
export type { Site, SiteFactory, SiteIdle, StateChange } from './sites/site.ts';
export type { HnChange, HnSnapshot } from './sites/hn/snapshot.ts';
export type { LiveOptions } from './sites/hn/live.ts';

/** Hacker News: the recorded site, the live one, their postconditions and tasks. */
export const hn = { recorded, live, upvoted, upvotedAllMatching, upvotedTitled, tasks: { upvoteFirstPost, upvoteAllMatching, upvoteTitled } };
