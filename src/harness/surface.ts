import type { Page } from '@playwright/test';
import { join } from 'node:path';
import { z } from 'zod';
import type { Agent, AgentResult } from '../core/agent.ts';
import { InputError, parseInput } from '../input.ts';
import type { LayerSpec } from '../layers/index.ts';
import { builtInBrowserToolNames, mcpToolList, mcpTools, openMcpBrowser, type McpBrowser, type McpTool } from '../tools/mcp.ts';
import { builtInHarness } from './agent.ts';
import { defineLayer } from './layer.ts';

/**
 * How the built-in harness's model reaches the browser: `cdp`, harness-eval's own browser tools
 * on Playwright's page (navigate, click by CSS selector…); `mcp`, Microsoft's Playwright MCP
 * server's tools on the same page (browser_navigate, browser_snapshot, browser_click by ref…).
 */
export const surfaceSchema = z.enum(['cdp', 'mcp']);
export type Surface = z.infer<typeof surfaceSchema>;

/** The default: the built-in harness's own tools, and what every run was before surfaces. */
export const DEFAULT_SURFACE: Surface = 'cdp';

/**
 * What runs a test's task: `agent` when one is given, else the built-in harness with `layers` on
 * `surface`. A surface is the built-in harness's: another agent reaches the browser its own way (a
 * command is given both HARNESS_CDP_URL and HARNESS_MCP_URL), so one given a surface is bad input.
 */
export function agentFor({ agent, surface, layers }: { agent: Agent | undefined; surface: unknown; layers: readonly LayerSpec[] }): Agent {
  const checked = parseInput(surfaceSchema, surface, 'surface');
  if (agent === undefined) return builtInHarnessOn(checked, layers);
  if (checked !== DEFAULT_SURFACE) {
    throw new InputError(`surface: only harness-eval's own harness takes its browser tools from a surface; the agent ${agent.name} reaches the browser its own way (a command agent is given both HARNESS_CDP_URL and HARNESS_MCP_URL): leave surface out beside it`);
  }
  return agent;
}

/** A stack's name in reports on `surface`: as it always was on `cdp`, the surface after it on another (`bare · mcp`), as layers are named. */
export function surfaceStackName(stack: string, surface: Surface): string {
  return surface === DEFAULT_SURFACE ? stack : `${stack} · ${surface}`;
}

/**
 * The built-in harness with `layers`, its model given the browser tools of `surface`. On `mcp`
 * the agent's condition says so (`{ surface: 'mcp' }`): its runs never pool with the `cdp` ones,
 * which keep the condition they always had.
 */
export function builtInHarnessOn(surface: Surface, layers: readonly LayerSpec[]): Agent {
  const agent = builtInHarness(layers);
  if (surface === 'cdp') return agent;
  // The surface's hooks run first (the stack's layers shape the MCP tools, as they would the built-in ones), but it is no layer of the stack.
  const onMcp = builtInHarness([mcpSurface(), ...layers]);
  return { ...agent, condition: { surface }, run: async (run) => outsideTheStack(await onMcp.run(run)) };
}

/** The run's result with the surface left out of its stack: it ran first, so it is the first name. */
function outsideTheStack(result: AgentResult): AgentResult {
  return {
    ...result,
    layers: result.layers.slice(1),
    trace: result.trace.map((event) => (event.type === 'run_start' ? { ...event, layers: event.layers.slice(1) } : event)),
  };
}

/**
 * The model's browser tools from Playwright MCP, on the attempt's page: each session's page (a
 * page reopened after a crash too) gets its own MCP browser at its first call, closed when the run
 * ends. The built-in browser tools stay, hidden: the harness's own calls (recovery's navigate, a
 * program's) still run, and a model that names one is told it is not offered.
 */
const mcpSurface = defineLayer({
  name: 'surface:mcp',
  create(_options, { outputDir }) {
    let listed: readonly McpTool[] = [];
    const browsers = new Map<Page, Promise<McpBrowser>>();
    const browserOn = (page: Page) => {
      const opened = browsers.get(page) ?? openMcpBrowser({ context: async () => page.context(), page, outputDir: join(outputDir, 'playwright-mcp'), images: false });
      browsers.set(page, opened);
      return opened;
    };
    return {
      async aroundAttempt(_run, attempts) {
        listed = await mcpToolList();
        try {
          return await attempts();
        } finally {
          await Promise.allSettled([...browsers.values()].map(async (opened) => (await opened).close()));
          browsers.clear();
        }
      },
      tools(run, offered) {
        const page = run.page;
        const builtIn = builtInBrowserToolNames(page);
        return [...mcpTools(listed, () => browserOn(page)), ...offered.map((tool) => (builtIn.has(tool.name) ? { ...tool, hidden: true } : tool))];
      },
    };
  },
});
