import type { Page } from '@playwright/test';
import { z } from 'zod';
import type { SiteAccount } from './site.ts';

/** What an agent is told and what it says: the parts of the agent contract every agent shares. */

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
}

/** The site as an agent outside harness-eval reaches it. */
export interface SiteEndpoint {
  /** Where the site really is (`https://news.ycombinator.com`): in `page` the site answers there. */
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
  /** Aborted at the time limit. */
  signal: AbortSignal;
  /** Records the agent's own steps in the run's trace (shown in the transcript, redacted). */
  trace: { record(name: string, data?: Record<string, z.core.util.JSONType>): void };
  /** The run's own folder. */
  outputDir: string;
}
