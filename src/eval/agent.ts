import { InputError } from '../input.ts';
import type { Agent } from '../core/agent.ts';

export { BUILT_IN_AGENT } from '../core/run.ts';
export { claimSchema, OWN_CODE } from '../core/agent.ts';
export type { Agent, AgentClaim, AgentInput, AgentResult, AgentRun, Containment, ModelEndpoint, SiteEndpoint } from '../core/agent.ts';

/** Layers belong to the built-in harness: another agent given some is bad input, named in one line. */
export function checkLayersApply(agent: Agent, layers: readonly unknown[]): void {
  if (agent.layers === undefined && layers.length > 0) {
    throw new InputError(`layers: only harness-eval's own harness runs layers; the agent ${agent.name} was given ${layers.length} (set layers: [] beside the agent)`);
  }
}

