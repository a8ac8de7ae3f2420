/**
 * `harness-eval/harness`: the built-in harness's parts, for code that drives it outside a spec
 * (`runHarness`) or reads what it wrote (the trace's schemas, `transcript`), and for new tools.
 */
export { runHarness, type BrowserSession, type RunHarnessOptions, type AgentResult } from './run.ts';
export type { CallOptions, CallOrigin, Carried, Credentials, RunContext, RunView, SiteView, ToolLimits, BrowserRequest, RequestRefusal } from './context.ts';
export { customEventSchema, traceEventSchema, type StopReason, type TraceEvent, type TraceEventBody, type TraceEventOf } from './trace.ts';
export { transcript } from './transcript.ts';
export { defineTool, ToolError, type Tool, type ToolOutcome, type ToolOutput } from '../tools/registry.ts';
