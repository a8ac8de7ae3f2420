import { answered } from './eval/postconditions.ts';
import { titleRanked, upvoted, upvotedAllMatching, upvotedTitled } from './sites/hn/postconditions.ts';
import { hnSuite, taskNamed, titleOfRankThree, upvoteAllMatching, upvoteFirstPost, upvoteNeverPosted, upvoteTitled } from './sites/hn/suite.ts';
import { live } from './sites/hn/live.ts';
import { recorded } from './sites/hn/site.ts';
import { hnRiskRules } from './sites/hn/risk.ts';

export { attachRun, test, stackName, type Harness, type HarnessOptions, type RunRequest } from './playwright/fixtures.ts';
export { expect } from './playwright/matchers.ts';
export { matrix, type MatrixOptions } from './playwright/matrix.ts';
export { BUILT_IN_AGENT, claimSchema, type Agent, type AgentClaim, type AgentInput, type AgentResult, type AgentRun, type Containment, type ModelEndpoint, type SiteEndpoint } from './eval/agent.ts';
export { builtInHarness } from './harness/agent.ts';
export { foreignAgent, readClaim, type ForeignAgentOptions, type ForeignOutcome } from './agents/foreign.ts';
export { functionAgent, type FunctionAgentOptions } from './agents/function.ts';
export { commandAgent, type CommandAgentOptions } from './agents/command.ts';
export { evaluate, RUN_RECORD_VERSION, TaskNotApplicable, type EvaluateOptions, type RunRecord } from './eval/evaluate.ts';
export { chromiumLaunchOptions } from './playwright/chromium.ts';
export { sharedBrowser, type SharedBrowser } from './playwright/shared-browser.ts';
export { runHarness, type BrowserSession, type RunResult } from './harness/run.ts';
export { defineLayer, type AttemptOutcome, type Layer, type LayerDefinition, type LayerFactory, type LayerHooks, type LayerSetup, type LayerValue } from './harness/layer.ts';
export type { BrowserRequest, CallOptions, CallOrigin, Carried, Credentials, RequestRefusal, RunContext, SiteView, ToolLimits } from './harness/context.ts';
export { customEventSchema, traceEventSchema, type StopReason, type TraceEvent, type TraceEventBody, type TraceEventOf } from './harness/trace.ts';
export { transcript } from './harness/transcript.ts';
export { defineTool, ToolError, type Tool, type ToolOutcome, type ToolOutput } from './tools/registry.ts';
export type { Claim } from './tools/browser.ts';
export {
  approval,
  risk,
  budget,
  checkpoint,
  codeMode,
  context,
  durable,
  evidence,
  guardrails,
  layerFactories,
  login,
  observations,
  output,
  permissions,
  recovery,
  resolveLayers,
  retry,
  settle,
  stall,
  stopOnSuccess,
  subroutines,
  verify,
  vision,
  type LayerName,
  type LayerSpec,
} from './layers/index.ts';
export type { ApprovalCheck, ApprovalRequest } from './layers/approval.ts';
export { saveSubroutine, subroutineSchema, type JudgedRun, type Subroutine } from './layers/subroutines.ts';
export { ApprovalStore, argsHash, type ApprovalDecision, type ApprovalRequest as StoredApprovalRequest } from './harness/approvals.ts';
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
export type { Model, ChatRequest, ChatResponse, ChatMessage, ToolCall, Usage } from './models/types.ts';
export { judge } from './eval/oracle.ts';
export type { Evidence, Postcondition, Verdict } from './eval/postconditions.ts';
export { defineTask, taskTags, type Reference, type ReferenceOutcome, type Task, type TaskInput, type TaskTag } from './eval/tasks.ts';
export { liarAgent, nopAgent, referenceAgent } from './agents/controls.ts';
export { reportedRunSchema, type ReportedRun, type ReportedRunInput } from './report/types.ts';
export type { Site, SiteFactory, SiteIdle, StateChange } from './sites/site.ts';
export type { HnChange, HnSnapshot } from './sites/hn/snapshot.ts';
export type { LiveOptions } from './sites/hn/live.ts';

/**
 * Hacker News: the recorded site, the live one, their postconditions, `suite` (every task, versioned
 * and tagged) and `tasks` (each by name; `all` is the suite, `named(name)` one of it).
 */
export const hn = {
  recorded,
  live,
  upvoted,
  upvotedAllMatching,
  upvotedTitled,
  answered,
  titleRanked,
  /** A risk policy for the `risk` layer's `rules`. */
  riskRules: hnRiskRules,
  suite: hnSuite,
  tasks: { upvoteFirstPost, upvoteAllMatching, upvoteTitled, upvoteNeverPosted, titleOfRankThree, all: hnSuite, named: taskNamed },
};
