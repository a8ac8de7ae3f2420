import type { BrowserContext, Page } from '@playwright/test';
import { InputError } from '../input.ts';
import type { Carried } from '../harness/context.ts';
import type { BrowserSession, RunResult, SessionOptions } from '../harness/run.ts';
import type { LoopOptions } from '../harness/loop.ts';
import type { Model } from '../models/types.ts';
import type { Containment } from '../core/agent.ts';
import type { Escapes } from '../core/run.ts';
import type { Site } from '../core/site.ts';
import type { Task } from '../core/task.ts';

export { BUILT_IN_AGENT } from '../core/run.ts';
export { claimSchema, OWN_CODE } from '../core/agent.ts';
export type { AgentClaim, AgentInput, Containment, ModelEndpoint, SiteEndpoint } from '../core/agent.ts';

/**
 * The agent contract: what runs a task. harness-eval's own harness is one agent; a user's
 * function, a command in any language and the control agents are others. Every agent is judged
 * the same way: the oracle reads the site before and after, never what the agent says or did.
 */

/** Everything the evaluation gives an agent for one run. Agents use what they need of it. */
export interface AgentRun {
  task: Task;
  /** The site, attached to `context` (the browser reaches it at its real origin). */
  site: Site;
  /** The test's own browser context: Playwright's trace shows what happens in it. */
  context: BrowserContext;
  /** Opens the page of an attempt: the first in `context`, later ones (and any `fresh` one) in fresh contexts on the same site. */
  openSession(attempt: number, options?: SessionOptions): Promise<BrowserSession>;
  /** The model under test, ready to call (a cassette records or replays it). */
  model: Model;
  /** Values that must never reach a trace, an attachment or a log (API keys, the site's password). */
  secrets: readonly string[];
  /** Aborted at the time limit: the agent must stop; a run that does not is recorded from outside. */
  signal?: AbortSignal;
  /** The run's own folder (under Playwright, in the test's output folder). */
  outputDir: string;
  maxIterations?: LoopOptions['maxIterations'];
  onIteration?: LoopOptions['onIteration'];
  /** The evaluation's state that a resumed run needs (its start snapshot). */
  carried: Carried;
  /** Attaches a file to the run's test (a command's stdout and stderr); redacted by the agent first. */
  attach(name: string, body: string | Buffer, contentType: string): Promise<void>;
}

/** What a run of an agent returns: the same shape for every agent, so every cell reads alike; a sandboxed one adds what it saw the agent try. */
export type AgentResult = RunResult & { escapes?: Escapes };

export interface Agent {
  /** The agent's name in cells and reports: `harness-eval` for the built-in harness. */
  readonly name: string;
  /** What runs, as data (a command's argv and options; never its environment's values): runs pool into one cell only when it is equal. */
  readonly condition: Record<string, unknown>;
  /** The names of the layers it runs: only harness-eval's own harness has any (it runs the `layers` option). */
  readonly layers?: readonly string[];
  /** Checks the agent can run here (a command's program exists), before the run starts: an InputError fails the test, and no run is counted. */
  prepare?(): void | Promise<void>;
  /** How its runs on `site` are contained, asked before a run starts; an InputError when it cannot run here as asked. Without it, a run is not contained. */
  containment?(site: Site): Containment;
  run(run: AgentRun): Promise<AgentResult>;
}

/** Layers belong to the built-in harness: another agent given some is bad input, named in one line. */
export function checkLayersApply(agent: Agent, layers: readonly unknown[]): void {
  if (agent.layers === undefined && layers.length > 0) {
    throw new InputError(`layers: only harness-eval's own harness runs layers; the agent ${agent.name} was given ${layers.length} (set layers: [] beside the agent)`);
  }
}

