import type { BrowserContext, Page } from '@playwright/test';
import type { CallToolResult, Tool as McpTool } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { browserTools } from './browser.ts';
import { defineTool, ToolError, type Tool } from './registry.ts';

export type { McpTool };

/**
 * Playwright MCP's tools that reach past the browser into the process serving them (the worker,
 * outside any sandbox): withheld from every client, with why.
 */
export const WITHHELD_TOOLS: Readonly<Record<string, string>> = {
  browser_run_code_unsafe: "it runs code in the server's own process",
  browser_file_upload: "it reads files of the server's machine",
  browser_close: "it closes the run's browser, which the run owns",
};

/** What Playwright MCP may keep in the run's folder: the worker's disk is outside any sandbox's limits, so a client looping on screenshots cannot fill it. */
export const MCP_OUTPUT_MAX_BYTES = 32 * 1024 * 1024;

/** Arguments that name files of the server's machine (to write a snapshot to, to drop into a page): left out of every schema, refused in every call. */
export const FILE_ARGUMENTS: readonly string[] = ['filename', 'paths'];

/** Playwright MCP's browser, gated: the tools it offers and one way to call them. */
export interface McpBrowser {
  /** The tools as MCP lists them, without the withheld ones and the file arguments. */
  readonly tools: readonly McpTool[];
  /** A call as MCP answers it: a tool refused here is an error result in Playwright MCP's own words, never a thrown error. */
  call(name: string, args: Record<string, unknown>, signal?: AbortSignal): Promise<CallToolResult>;
  close(): Promise<void>;
}

export interface McpBrowserOptions {
  /** The browser context it drives, asked for at its first call (a run's own Chromium starts only then). */
  context: () => Promise<BrowserContext>;
  /** The page it drives first, when its context holds others (an earlier run's, in the test's context): by default the context's first. */
  page?: Page;
  /** Where it writes what it saves unasked (screenshots, console logs, response bodies): the run's folder. */
  outputDir: string;
  /** The most it keeps there: past it the oldest files go (MCP_OUTPUT_MAX_BYTES by default). */
  outputMaxBytes?: number;
  /** Whether its answers carry images (a screenshot's); a text-only harness takes none. */
  images: boolean;
}

/**
 * Microsoft's Playwright MCP server (`@playwright/mcp`'s `createConnection`), in this process,
 * attached to a context of the run's: what it drives is what the oracle judges, and a route on
 * that context (the site, the harness's request checks) sees every request it makes. It is gated:
 * the withheld tools and the file arguments are out of reach, and what it writes unasked goes to
 * `outputDir`, up to `outputMaxBytes`. Snapshots come only from `browser_snapshot`: after an action
 * the server would write one to a file, which a sandboxed client could not read.
 */
export async function openMcpBrowser({ context, page, outputDir, outputMaxBytes = MCP_OUTPUT_MAX_BYTES, images }: McpBrowserOptions): Promise<McpBrowser> {
  const config = { outputDir, outputMaxSize: outputMaxBytes, webmcp: false, snapshot: { mode: 'none' }, imageResponses: images ? 'allow' : 'omit' } as const;
  const client = await connectPlaywrightMcp(config, context);
  try {
    const tools = gated((await client.listTools()).tools);
    const call = async (name: string, args: Record<string, unknown>, signal?: AbortSignal) => {
      const refused = refusal(name, args);
      if (refused) return { content: [{ type: 'text', text: `### Error\n${refused}` }], isError: true } satisfies CallToolResult;
      return (await client.callTool({ name, arguments: args }, undefined, { signal })) as CallToolResult;
    };
    if (page) await select(call, (await context()).pages().indexOf(page));
    return { tools, call, close: () => client.close() };
  } catch (error) {
    await client.close();
    throw error;
  }
}

/**
 * Brings the tab of the context's `index`th page forward, as a client would with browser_tabs: the
 * server's current tab is the context's first page. Listing first makes it take the context's pages as its tabs.
 */
async function select(call: McpBrowser['call'], index: number): Promise<void> {
  if (index === -1) throw new Error('the page to drive is not a page of the context it is given');
  if (index === 0) return;
  await call('browser_tabs', { action: 'list' });
  await call('browser_tabs', { action: 'select', index });
}

/** The gated tools of the installed Playwright MCP, read once per process: the same for every run, and known before any browser opens. */
export function mcpToolList(): Promise<readonly McpTool[]> {
  listed ??= connectPlaywrightMcp({}, () => Promise.reject(new Error('no browser: only the tools are listed'))).then(async (client) => {
    try {
      return gated((await client.listTools()).tools);
    } finally {
      await client.close();
    }
  });
  return listed;
}
let listed: Promise<readonly McpTool[]> | undefined;

type PlaywrightMcpConfig = NonNullable<Parameters<typeof import('@playwright/mcp').createConnection>[0]>;

/** A client of a fresh Playwright MCP server over an in-memory pair. The client declares no roots: the server's files stay where it was told. */
async function connectPlaywrightMcp(config: PlaywrightMcpConfig, context: () => Promise<BrowserContext>) {
  // Loaded when a run first uses MCP: a worker that never does never loads Playwright MCP's own Playwright.
  const [{ createConnection }, { Client }, { InMemoryTransport }] = await Promise.all([
    import('@playwright/mcp'),
    import('@modelcontextprotocol/sdk/client/index.js'),
    import('@modelcontextprotocol/sdk/inMemory.js'),
  ]);
  // Its types are its own Playwright's; the context is the test's (a newer one, the same protocol).
  const server = await createConnection(config, context as unknown as Parameters<typeof createConnection>[1]);
  const [serverSide, clientSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'harness-eval', version: '1' });
  await client.connect(clientSide);
  return client;
}

/** The tools without the withheld ones, and each schema without the file arguments. */
function gated(tools: readonly McpTool[]): McpTool[] {
  return tools
    .filter((tool) => !Object.hasOwn(WITHHELD_TOOLS, tool.name))
    .map((tool) => {
      const { properties = {}, required = [] } = tool.inputSchema;
      const kept = Object.fromEntries(Object.entries(properties).filter(([name]) => !FILE_ARGUMENTS.includes(name)));
      return { ...tool, inputSchema: { ...tool.inputSchema, properties: kept, required: required.filter((name) => !FILE_ARGUMENTS.includes(name)) } };
    });
}

/** Why a call is refused here, if it is: a withheld tool, or a file argument (the server answers the rest, an unknown tool too). */
function refusal(name: string, args: Record<string, unknown>): string | undefined {
  if (Object.hasOwn(WITHHELD_TOOLS, name)) return `${name} is not offered here: ${WITHHELD_TOOLS[name]}`;
  const files = FILE_ARGUMENTS.filter((argument) => Object.hasOwn(args, argument));
  if (files.length > 0) return `${name}: ${files.join(', ')} not accepted here: the server's files are out of the client's reach`;
  return undefined;
}

/** What an MCP answer says, as text: its text parts, one after another. */
export function resultText(result: CallToolResult): string {
  return result.content.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join('\n');
}

/** An MCP answer as a tool's result: its text, or for an error the server's message, not its `### Error` heading. */
export function mcpAnswer(result: CallToolResult): { ok: true; text: string } | { ok: false; error: string } {
  const text = resultText(result);
  return result.isError ? { ok: false, error: text.replace(/^### Error\n/, '') } : { ok: true, text };
}

/** The built-in browser tools' names: on the MCP surface they are kept for the harness's own calls (a layer's, a program's), not offered to the model. */
export function builtInBrowserToolNames(page: Page): ReadonlySet<string> {
  return new Set(browserTools(page, {}).map((tool) => tool.name).filter((name) => name !== 'finish'));
}

/**
 * The MCP tools as the built-in harness's tools: each takes its MCP schema (checked before the
 * call), answers `{ text }` (the page's words: what the `observations` layer marks untrusted), and
 * fails as a tool error with the server's message when MCP answers an error. `browser` opens the
 * run's MCP browser at the first call.
 */
export function mcpTools(tools: readonly McpTool[], browser: () => Promise<McpBrowser>): Tool[] {
  return tools.map((tool) =>
    defineTool({
      name: tool.name,
      description: tool.description ?? tool.annotations?.title ?? tool.name,
      parameters: z.fromJSONSchema(tool.inputSchema as z.core.JSONSchema.JSONSchema) as z.ZodType<Record<string, unknown>>,
      effect: tool.annotations?.readOnlyHint ? 'read' : 'act',
      output: z.object({ text: z.string() }),
      pageText: /^text$/,
      async execute(args) {
        const answer = mcpAnswer(await (await browser()).call(tool.name, args));
        if (!answer.ok) throw new ToolError(answer.error);
        return { text: answer.text };
      },
    }),
  );
}
