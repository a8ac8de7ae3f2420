import { z } from 'zod';
import { createHash } from 'node:crypto';
import { InputError, parseInput } from '../input.ts';
import type { Agent, AgentClaim, AgentInput, Containment } from '../core/agent.ts';
import { foreignAgent, readClaim } from './foreign.ts';
import { gatewayOptionsSchema } from './gateway.ts';

export const functionAgentOptionsSchema = z
  .object({
    /**
     * The agent's name in cells, and what it is: runs of agents with one name pool into one cell.
     * Without it, the agent is named after its function (`fn.name`, else `function-agent`) and told
     * apart by its source: two different functions are two cells, in every worker alike.
     */
    name: z.string().min(1).optional(),
    /** Give the agent the site's account in `input.site.account`. */
    account: z.boolean().default(false),
    /** The run's model gateway: `{ maxBodyBytes }`. */
    gateway: gatewayOptionsSchema.optional(),
  })
  .strict();
export type FunctionAgentOptions = z.input<typeof functionAgentOptionsSchema>;

/** A function runs in the test's own process, with its keys: it is trusted code, never contained. Untrusted code is a command agent's. */
const IN_PROCESS: Containment = { contained: false, reason: "not contained: trusted code (a function agent runs in the test's process)" };

/**
 * A TypeScript function as the agent: it gets the task, a page on the site, the site over HTTP and
 * the model through the run's gateway, and returns its claim. What it returns is checked: anything
 * but a claim is no claim (with the reason); a throw ends the run with stopReason `error`.
 */
export function functionAgent(fn: (input: AgentInput) => Promise<AgentClaim>, options: FunctionAgentOptions = {}): Agent {
  if (typeof fn !== 'function') throw new InputError(`functionAgent(): expected a function (input) => claim, got ${fn === null ? 'null' : typeof fn}`);
  const { name: given, account, gateway } = parseInput(functionAgentOptionsSchema, options, 'functionAgent() options');
  const name = given ?? (fn.name || 'function-agent');
  // Its source's hash, not a count: every worker loads its own copy of the config, and counts differ with what each loads.
  const source = given === undefined ? { source: createHash('sha256').update(fn.toString()).digest('hex').slice(0, 16) } : {};
  return foreignAgent({ name, condition: { agent: 'function', name, ...source, account }, account, gateway, containment: () => IN_PROCESS }, async (input) =>
    readClaim(await fn(input), `the value ${name} returned`),
  );
}
