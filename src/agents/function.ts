import type { Agent, AgentClaim, AgentInput } from '../eval/agent.ts';

export interface FunctionAgentOptions {
  /** The agent's name in cells (default `function`, or the function's own name). */
  name?: string;
  /** Give the agent the site's account in `input.site.account`. */
  account?: boolean;
}

/** CONTRACT STUB (helper C implements): a TypeScript function as the agent; it returns its claim. */
export function functionAgent(_fn: (input: AgentInput) => Promise<AgentClaim>, _options: FunctionAgentOptions = {}): Agent {
  throw new Error('functionAgent: not implemented yet');
}
