import { answered } from './eval/postconditions.ts';
import { hnBuilders } from './sites/hn/builders.ts';
import { hnSuite, taskNamed, titleOfRankThree, upvoteAllMatching, upvoteFirstPost, upvoteNeverPosted, upvoteTitled } from './sites/hn/suite.ts';
import { live } from './sites/hn/live.ts';
import { recorded } from './sites/hn/site.ts';
import { hnRiskRules } from './sites/hn/risk.ts';

// The main entry: what a spec author needs. The rest is under subpaths, each typed and documented:
// harness-eval/layers (every layer, the approval store, subroutines), harness-eval/models (models
// and cassettes), harness-eval/harness (runHarness, the trace, tools), harness-eval/sites (writing
// a site kit), harness-eval/hn (the Hacker News kit's parts), harness-eval/reporter.

// Playwright: the fixtures, the matchers, a matrix (as projects, or as cells a spec runs as tests), the browser.
export { attachRun, test, stackName, type Harness, type HarnessOptions, type RunRequest } from './playwright/fixtures.ts';
export { expect } from './playwright/matchers.ts';
export { cells, CELLS_ENV, layerPlan, matrix, matrixWorkers, MEMORY_MB, WORKERS_METADATA, type Cell, type CellOptions, type LayerPlanKind, type MatrixOptions, type MatrixWorkers } from './playwright/matrix.ts';
export { chromiumLaunchOptions } from './playwright/chromium.ts';
export { sharedBrowser, type SharedBrowser } from './playwright/shared-browser.ts';

// Agents: the built-in harness, a user's own (a function, a command in any language), the controls.
export { BUILT_IN_AGENT, claimSchema, type Agent, type AgentClaim, type AgentInput, type AgentResult, type AgentRun, type Containment, type ModelEndpoint, type SiteEndpoint } from './eval/agent.ts';
export { builtInHarness } from './harness/agent.ts';
export { foreignAgent, readClaim, type ForeignAgentOptions, type ForeignOutcome } from './agents/foreign.ts';
export { functionAgent, type FunctionAgentOptions } from './agents/function.ts';
export { commandAgent, type CommandAgentOptions } from './agents/command.ts';
export { acpAgent, type AcpAgentOptions } from './agents/acp.ts';
export { liarAgent, nopAgent, referenceAgent } from './agents/controls.ts';

// Tasks and their postconditions; the pipeline and the oracle.
export { defineTask, taskTags, type Reference, type ReferenceOutcome, type SessionView, type Task, type TaskInput, type TaskInstance, type TaskTag } from './eval/tasks.ts';
export { boundAtStart, notFound, type Evidence, type NotFound, type Postcondition, type Verdict } from './eval/postconditions.ts';
export { evaluate, TaskNotApplicable, type EvaluateOptions } from './eval/evaluate.ts';
export { RUN_RECORD_VERSION, type RunRecord } from './core/run.ts';
export { judge } from './eval/oracle.ts';

// Layers and tools: named stacks, and how to write a layer or a tool of your own.
export { defineLayer, type Layer, type LayerValue, type LayerSpec, type LayerName } from './layers/index.ts';
export { layerStacks } from './layers/stacks.ts';
export { defineTool, ToolError, type Tool } from './tools/registry.ts';
export type { RunView } from './harness/context.ts';
export type { StopReason, TraceEvent } from './harness/trace.ts';
export type { Claim } from './tools/browser.ts';

// Models: by name, or any object with `id` and `chat`.
export { createModel, type ModelSpec } from './models/registry.ts';
export type { Model, ChatRequest, ChatResponse, ChatMessage, ToolCall, Usage } from './models/types.ts';

// Sites: the contract (harness-eval/sites has the helpers for writing a kit) and Hacker News, the default kit.
export type { Site, SiteAction, SiteFactory, SiteIdle, SiteRequest, StateChange } from './sites/index.ts';
export type { HnChange, HnSnapshot } from './sites/hn/snapshot.ts';
export type { LiveOptions } from './sites/hn/live.ts';

/**
 * Hacker News: the recorded site, the live one, their postconditions, `suite` (every task, versioned
 * and tagged) and `tasks` (each by name; `all` is the suite, `named(name)` one of it).
 */
export const hn = {
  recorded,
  live,
  /** upvoted, unvoted, hidden, unhidden, favorited, unfavorited, commented, submitted, profileSet, upvotedAllMatching, upvotedTitled, titleRanked (docs/tasks.md). */
  ...hnBuilders,
  answered,
  /** A risk policy for the `risk` layer's `rules`. */
  riskRules: hnRiskRules,
  suite: hnSuite,
  tasks: { upvoteFirstPost, upvoteAllMatching, upvoteTitled, upvoteNeverPosted, titleOfRankThree, all: hnSuite, named: taskNamed },
};
