import { z } from 'zod';
import type { RunView } from '../harness/context.ts';
import { defineLayer } from '../harness/layer.ts';
import type { ToolCall } from '../core/model.ts';
import { parseJsonObject } from '../text.ts';

export const permissionsOptions = z
  .object({
    /** `read-only` offers only the tools that look (finish is one of them); `act` offers them all. */
    profile: z.enum(['act', 'read-only']).default('act'),
    /** Where the browser may go and send requests (`navigate` included); by default the run's site alone. */
    origins: z.array(z.url({ protocol: /^https?$/ })).min(1).optional(),
  })
  .strict();

/**
 * What the agent may do, decided by the harness and not by the model: a profile narrows the tools
 * offered, and every call is checked again when it is made, since a model can name a tool it was
 * never offered (or one a page told it about). The browser stays on the allowed origins however
 * the page would leave them (`navigate`, a clicked link, a form, a redirect's every hop, a
 * script's request): every request the browser sends is checked, and one to another origin is not
 * sent and is recorded as a `harness_denied`, so an instruction planted in a page cannot send the
 * browser there, and the session with it.
 */
export const permissions = defineLayer({
  name: 'permissions',
  options: permissionsOptions,
  create({ profile, origins }) {
    /** Origins whose requests were reported once already, by attempt: a page's other requests to one are reported once, not one per image. */
    const reported = new Set<string>();
    return {
      tools(_run, offered) {
        return profile === 'read-only' ? offered.filter((tool) => tool.effect === 'read') : offered;
      },
      checkRequest(run, request) {
        const url = new URL(request.url);
        const allowed = allowedOrigins(run, origins);
        if (!/^(https?|wss?):$/.test(url.protocol) || allowed.has(url.origin)) return undefined;
        const what = request.redirected ? 'redirect' : request.navigation ? 'navigation' : `${request.resourceType} request`;
        const reason = `the page's ${what} to ${url.origin} is outside the allowed origins (${[...allowed].join(', ')})`;
        const key = `${run.attempt} ${url.origin}`;
        if (request.navigation || !reported.has(key)) {
          reported.add(key);
          run.record({ type: 'harness_denied', layer: 'permissions', callId: request.call?.id ?? '', tool: request.call?.name ?? 'browser', reason });
        }
        return { ok: false, kind: 'denied', error: `denied by the harness: ${reason}` };
      },
      async aroundTool(run, call, next) {
        const allowed = allowedOrigins(run, origins);
        const reason = refusal(run, call, allowed);
        if (reason) {
          run.record({ type: 'harness_denied', layer: 'permissions', callId: call.id, tool: call.name, reason });
          return { ok: false, kind: 'denied', error: `denied by the harness: ${reason}` };
        }
        const before = run.page.url();
        const outcome = await next();
        return (await takeBack(run, call, before, allowed)) ?? outcome;
      },
    };
  },
});

/** The origins the options list, else the run's site's. */
function allowedOrigins(run: RunView, origins: readonly string[] | undefined): ReadonlySet<string> {
  const listed = origins ?? (run.site && [run.site.origin]);
  if (!listed) throw new Error('layer permissions: origins: none given, and the run has no site to default to');
  return new Set(listed.map((origin) => new URL(origin).origin));
}

const offOrigins = (url: string, allowed: ReadonlySet<string>) => /^https?:/.test(url) && !allowed.has(new URL(url).origin);

/**
 * The one way out the check cannot hold: Playwright does not route the hop of a redirect the
 * network answered (another origin's server, not the site's), so a page that redirected off the
 * allowed origins is taken back where it was, and the call denied. The redirected request itself has been sent.
 */
async function takeBack(run: RunView, call: ToolCall, before: string, allowed: ReadonlySet<string>) {
  const landed = run.page.url();
  if (!offOrigins(landed, allowed)) return undefined;
  const back = offOrigins(before, allowed) ? 'about:blank' : before;
  await run.page.goto(back).catch(() => {});
  const reason = `the page went to ${new URL(landed).origin} (a redirect), outside the allowed origins (${[...allowed].join(', ')}); the harness took it back to ${back}`;
  run.record({ type: 'harness_denied', layer: 'permissions', callId: call.id, tool: call.name, reason });
  return { ok: false as const, kind: 'denied' as const, error: `denied by the harness: ${reason}` };
}

/** Why the call is not allowed, or undefined when it is. */
function refusal(run: RunView, call: ToolCall, allowed: ReadonlySet<string>): string | undefined {
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
