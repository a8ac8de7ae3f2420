import type { BrowserContext, Route } from '@playwright/test';
import { z } from 'zod';
import type { RunContext } from '../harness/context.ts';
import { defineLayer } from '../harness/layer.ts';
import type { ToolCall } from '../core/model.ts';
import { HN_ORIGIN } from '../sites/hn/options.ts';
import { parseJsonObject } from '../text.ts';

export const permissionsOptions = z
  .object({
    /** `read-only` offers only the tools that look (finish is one of them); `act` offers them all. */
    profile: z.enum(['act', 'read-only']).default('act'),
    /** Where the browser may go and send requests (`navigate` included). */
    origins: z.array(z.url({ protocol: /^https?$/ })).min(1).default([HN_ORIGIN]),
  })
  .strict();

/**
 * What the agent may do, decided by the harness and not by the model: a profile narrows the tools
 * offered, and every call is checked again when it is made, since a model can name a tool it was
 * never offered (or one a page told it about). The browser stays on the allowed origins however
 * the page would leave them (`navigate`, a clicked link, a form, a redirect, a script's request):
 * its traffic is routed through the harness, which blocks every request to another origin and
 * records a `harness_denied`, so an instruction planted in a page cannot send the browser there,
 * and the session with it.
 */
export const permissions = defineLayer({
  name: 'permissions',
  options: permissionsOptions,
  create({ profile, origins }) {
    const allowed = new Set(origins.map((origin) => new URL(origin).origin));
    /** The calls in progress, innermost last (a program's call inside run_program): what a blocked request is charged to. */
    const calling: ToolCall[] = [];
    /** The contexts whose traffic is guarded (one per attempt), with their handler. */
    const guarded = new Map<BrowserContext, (route: Route) => Promise<void>>();

    const guardTraffic = async (run: RunContext) => {
      const context = run.page.context();
      if (guarded.has(context)) return;
      const reported = new Set<string>();
      const handler = async (route: Route) => {
        const request = route.request();
        const url = new URL(request.url());
        if (!/^(https?|wss?):$/.test(url.protocol) || allowed.has(url.origin)) return route.fallback();
        const navigation = request.isNavigationRequest();
        // Every navigation is reported; a page's other requests to an origin once, not one per image.
        if (navigation || !reported.has(url.origin)) {
          reported.add(url.origin);
          const call = calling.at(-1);
          const what = navigation ? 'navigation' : `${request.resourceType()} request`;
          run.record({ type: 'harness_denied', layer: 'permissions', callId: call?.id ?? '', tool: call?.name ?? 'browser', reason: `the page's ${what} to ${url.origin} is outside the allowed origins (${[...allowed].join(', ')})` });
        }
        // A navigation answered 204 No Content leaves the page where it was (an aborted one would show an error page).
        if (navigation) await route.fulfill({ status: 204 });
        else await route.abort('blockedbyclient');
      };
      // Registered after the site's own route, so it is asked first; an allowed request falls back to the site's.
      guarded.set(context, handler);
      await context.route('**/*', handler);
    };

    return {
      tools(_run, offered) {
        return profile === 'read-only' ? offered.filter((tool) => tool.effect === 'read') : offered;
      },
      async aroundAttempt(_run, attempt) {
        try {
          return await attempt();
        } finally {
          // The test's context outlives the run: the guard goes with it (a closed context has none to remove).
          for (const [context, handler] of guarded) await context.unroute('**/*', handler).catch(() => {});
          guarded.clear();
        }
      },
      async beforeModel(run) {
        await guardTraffic(run);
      },
      async aroundTool(run, call, next) {
        await guardTraffic(run);
        const reason = refusal(run, call, allowed);
        if (reason) {
          run.record({ type: 'harness_denied', layer: 'permissions', callId: call.id, tool: call.name, reason });
          return { ok: false, kind: 'denied', error: `denied by the harness: ${reason}` };
        }
        calling.push(call);
        const before = run.page.url();
        try {
          const outcome = await next();
          return (await takeBack(run, call, before, allowed)) ?? outcome;
        } finally {
          calling.splice(calling.lastIndexOf(call), 1);
        }
      },
    };
  },
});

const offOrigins = (url: string, allowed: ReadonlySet<string>) => /^https?:/.test(url) && !allowed.has(new URL(url).origin);

/**
 * The one way out the route cannot hold: Playwright does not intercept the hop of a redirect the
 * network answered, so a page that redirected off the allowed origins is taken back where it was,
 * and the call denied. The redirected request itself has been sent.
 */
async function takeBack(run: RunContext, call: ToolCall, before: string, allowed: ReadonlySet<string>) {
  const landed = run.page.url();
  if (!offOrigins(landed, allowed)) return undefined;
  const back = offOrigins(before, allowed) ? 'about:blank' : before;
  await run.page.goto(back).catch(() => {});
  const reason = `the page went to ${new URL(landed).origin} (a redirect), outside the allowed origins (${[...allowed].join(', ')}); the harness took it back to ${back}`;
  run.record({ type: 'harness_denied', layer: 'permissions', callId: call.id, tool: call.name, reason });
  return { ok: false as const, kind: 'denied' as const, error: `denied by the harness: ${reason}` };
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
