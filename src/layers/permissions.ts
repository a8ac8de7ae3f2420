import { z } from 'zod';
import type { RunContext } from '../harness/context.ts';
import type { Layer } from '../harness/layer.ts';
import { parseInput } from '../input.ts';
import type { ToolCall } from '../models/types.ts';
import { HN_ORIGIN } from '../sites/hn/options.ts';
import { parseJsonObject } from '../text.ts';

export const permissionsOptions = z
  .object({
    /** `read-only` offers only the tools that look (finish is one of them); `act` offers them all. */
    profile: z.enum(['act', 'read-only']).default('act'),
    /** Where `navigate` may go. */
    origins: z.array(z.url({ protocol: /^https?$/ })).min(1).default([HN_ORIGIN]),
  })
  .strict();

/**
 * What the agent may do, decided by the harness and not by the model: a profile narrows the tools
 * offered, and every call is checked again when it is made, since a model can name a tool it was
 * never offered (or one a page told it about). `navigate` stays on the allowed origins, so an
 * instruction planted in a page cannot send the browser there, and the session with it.
 */
export function permissions(options: z.input<typeof permissionsOptions> = {}): Layer {
  const { profile, origins } = parseInput(permissionsOptions, options, 'layer permissions');
  const allowed = new Set(origins.map((origin) => new URL(origin).origin));
  return {
    name: 'permissions',
    tools(_run, offered) {
      return profile === 'read-only' ? offered.filter((tool) => tool.effect === 'read') : offered;
    },
    async aroundTool(run, call, next) {
      const reason = refusal(run, call, allowed);
      if (!reason) return next();
      run.record({ type: 'harness_denied', layer: 'permissions', callId: call.id, tool: call.name, reason });
      return { ok: false, kind: 'denied', error: `denied by the harness: ${reason}` };
    },
  };
}

/** Why the call is not allowed, or undefined when it is. */
function refusal(run: RunContext, call: ToolCall, allowed: ReadonlySet<string>): string | undefined {
  if (!run.tools.names.includes(call.name)) return `${call.name} is not one of the tools this run may use (${run.tools.names.join(', ')})`;
  if (call.name !== 'navigate') return undefined;
  const origin = originOf(call.arguments);
  // Arguments that do not parse are left to the tool, which rejects them without navigating.
  if (origin === undefined || allowed.has(origin)) return undefined;
  return `navigate to ${origin} is outside the allowed origins (${[...allowed].join(', ')})`;
}

function originOf(args: string): string | undefined {
  const url = parseJsonObject(args)?.url;
  if (typeof url !== 'string' || !URL.canParse(url)) return undefined;
  return new URL(url).origin;
}
