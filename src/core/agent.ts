import type { BrowserContext, Page } from '@playwright/test';
import { z } from 'zod';
import type { Model, ModelWaits, Usage } from './model.ts';
import type { Site, SiteAccount } from './site.ts';
import type { Postcondition, Task } from './task.ts';
import type { StopReason, TraceEvent } from './trace.ts';

/**
 * The agent contract: what runs a task. harness-eval's own harness is one agent; a user's
 * function, a command in any language and the control agents are others. Every agent is judged
 * the same way: the oracle reads the site before and after, never what the agent says or did.
 */

/** What an agent says at the end of a run: its word, which the oracle checks against the site. */
export const claimSchema = z.object({
  success: z.boolean(),
  summary: z.string(),
  /**
   * The answer to an information task, checked against the site's ground truth. Any JSON value is
   * kept as written; the run records a string as it is and anything else as its JSON text (42 as
   * `42`, true as `true`), which the oracle compares as it compares any answer.
   */
  answer: z.json().optional(),
});
export type AgentClaim = z.infer<typeof claimSchema>;

/** Whether an agent's code runs contained, so that it cannot reach the worker, its secrets or other runs; and, in one line, how or why not. */
export interface Containment {
  contained: boolean;
  reason: string;
}

/** harness-eval's own code (its harness, the controls): nothing untrusted runs, so nothing needs a sandbox. */
export const OWN_CODE: Containment = { contained: true, reason: "harness-eval's own code: no code of the agent under test runs" };

/** The model as an agent outside harness-eval reaches it: a gateway on 127.0.0.1 for this run only. */
export interface ModelEndpoint {
  /** The model's id as the run names it (`openai:gpt-4o-mini`, `scripted:diligent`). */
  id: string;
  /** OpenAI-compatible: `${baseURL}/chat/completions`. */
  baseURL: string;
  /** A token good for this run's gateway only: never the provider's real key. */
  apiKey: string;
  /** Ollama-compatible: `${ollamaHost}/api/chat`. */
  ollamaHost: string;
  /** Anthropic-compatible (the key as `x-api-key`): `${anthropicBaseURL}/v1/messages`. */
  anthropicBaseURL: string;
  /** Gemini-compatible (the key as `x-goog-api-key` or `?key=`): `${geminiBaseURL}/v1beta/models/{model}:generateContent`. */
  geminiBaseURL: string;
}

/** The site as an agent outside harness-eval reaches it. */
export interface SiteEndpoint {
  /** Where the site really is (its public origin, `https://example.com`): in `page` the site answers there. */
  origin: string;
  /** The site over plain HTTP on 127.0.0.1 (the replica, or a forwarder to the live site). */
  url: string;
  /** The site's account, only for an agent that opted in (`account: true`). */
  account?: SiteAccount;
}

/** What a function agent receives (`functionAgent(fn)`). */
export interface AgentInput {
  /** The task's prompt. */
  task: string;
  /** A page in the test's own context, on the site. */
  page: Page;
  site: SiteEndpoint;
  model: ModelEndpoint;
  /**
   * Aborted at the time limit: for the agent's own waits. Model calls need it not: the gateway ends
   * them at the time limit (503, not to be retried). The openai SDK adds a listener to a signal it
   * is given on every call and never removes it: one signal over more than 10 calls warns MaxListenersExceededWarning.
   */
  signal: AbortSignal;
  /** Records the agent's own steps in the run's trace (shown in the transcript, redacted). */
  trace: { record(name: string, data?: Record<string, z.core.util.JSONType>): void };
  /** The run's own folder. */
  outputDir: string;
}

/** A browser page the harness may use for one attempt; the caller owns the browser. */
export interface BrowserSession {
  page: Page;
  close(): Promise<void>;
}

export interface SessionOptions {
  /** A fresh context, never the test's own: a session reopened mid-attempt after the browser died (`recovery`). */
  fresh?: boolean;
}

/**
 * State of the caller's that belongs to the run, not to one process: the evaluation's start
 * snapshot, which a resumed run must be judged from. Saved with every step, given back on resume.
 */
export interface Carried {
  save(): unknown;
  restore(saved: unknown): void;
}

/** Everything the evaluation gives an agent for one run. Agents use what they need of it. */
export interface AgentRun {
  task: Task;
  /**
   * The task's postconditions bound to the run's start (`resolve`): what the oracle judges, and what
   * a harness checks before it claims (`verify`). Read each time: a resumed run binds them to its first start.
   */
  readonly postconditions: readonly Postcondition[];
  /** The site, attached to `context` (the browser reaches it at its real origin). */
  site: Site;
  /** The test's own browser context: Playwright's trace shows what happens in it. */
  context: BrowserContext;
  /** Opens the page of an attempt: the first in `context`, later ones (and any `fresh` one) in fresh contexts on the same site. */
  openSession(attempt: number, options?: SessionOptions): Promise<BrowserSession>;
  /** The model under test, ready to call (a cassette records or replays it). */
  model: Model;
  /** The run's clock of model waits: every call to `model` is given it, the gateway's too; the run records it and keeps it out of the agent's own time. */
  modelWaits?: ModelWaits;
  /** Values that must never reach a trace, an attachment or a log (API keys, the site's password). */
  secrets: readonly string[];
  /** Aborted at the time limit: the agent must stop; a run that does not is recorded from outside. */
  signal?: AbortSignal;
  /** The run's own folder (under Playwright, in the test's output folder). */
  outputDir: string;
  /** The absolute cap on iterations per attempt, whatever the layers (the harness's own default when absent). */
  maxIterations?: number;
  /** Wraps each iteration's actions, once the model has said what they are (a Playwright step). */
  onIteration?: (title: string, actions: () => Promise<void>) => Promise<void>;
  /** The evaluation's state that a resumed run needs (its start snapshot). */
  carried: Carried;
  /** Attaches a file to the run's test (a command's stdout and stderr); redacted by the agent first. */
  attach(name: string, body: string | Buffer, contentType: string): Promise<void>;
}

/**
 * One thing an agent tried against its containment, seen from outside it: a `limit` it hit (named
 * in `detail`: `processes`, `gateway calls`…), a `canary` (a decoy key or password) that reached the
 * gateway, the site or an artifact, a `control` message it forged or flooded, a `claim` written after
 * its main process ended or that could not be read, a `browser` navigation, request or download the
 * run's browser refused (another origin, a `file:` or `view-source:` URL, a loopback or metadata
 * address: `detail` names the URL), a `copy` of its work folder that could not be made whole (a name
 * past PATH_MAX, a special file, a folder over its limit).
 */
export const escapeAttemptSchema = z.object({ kind: z.enum(['limit', 'canary', 'control', 'claim', 'browser', 'copy']), detail: z.string() });
export type EscapeAttempt = z.infer<typeof escapeAttemptSchema>;

/** What a command agent's sandbox saw it try: processes it left running when its main process ended, and every other attempt. */
export const escapesSchema = z.object({ processesLeft: z.number().int().min(0), attempts: z.array(escapeAttemptSchema).optional() });
export type Escapes = z.infer<typeof escapesSchema>;

/**
 * What an agent reports about its run, the same shape for every agent so every cell reads alike:
 * `claimed` is its word, not the truth; a sandboxed one adds what it saw the agent try.
 */
export interface AgentResult {
  task: string;
  model: string;
  layers: string[];
  claimed: boolean;
  summary: string;
  stopReason: StopReason;
  iterations: number;
  attempts: number;
  tokens: Usage;
  wallMs: number;
  trace: TraceEvent[];
  /** The answer the claim gave (finish's `answer`), for an information task. */
  answer?: string;
  /** What a sandbox saw the agent try (processes it left running): a command agent in its sandbox only. */
  escapes?: Escapes;
}

export interface Agent {
  /** The agent's name in cells and reports: `harness-eval` for the built-in harness. */
  readonly name: string;
  /** What runs, as data (a command's argv and options; never its environment's values): runs pool into one cell only when it is equal. */
  readonly condition: Record<string, unknown>;
  /** The names of the layers it runs: only harness-eval's own harness has any (it runs the `layers` option). */
  readonly layers?: readonly string[];
  /** Checks the agent can run here (a command's program exists), before the run starts: an InputError fails the test, and no run is counted. */
  prepare?(): void | Promise<void>;
  /**
   * How its runs on `site` are contained, asked before a run starts; an InputError when it cannot run here as asked. Without it, a run is not contained.
   * `browser`: how the test's own browser is contained (what the built-in harness's model drives).
   */
  containment?(site: Site, browser: Containment): Containment;
  run(run: AgentRun): Promise<AgentResult>;
}
