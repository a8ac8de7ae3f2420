import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { listenLocal } from '../loopback.ts';
import type { TraceEventBody } from '../core/trace.ts';
import { mcpAnswer, type McpBrowser } from '../tools/mcp.ts';

/** A run's browser over MCP's Streamable HTTP, for an agent of its own (a command's `HARNESS_MCP_URL`). */
export interface McpEndpoint {
  /** `http://127.0.0.1:PORT/mcp`: what an MCP client's Streamable HTTP transport takes. */
  url: string;
  close(): Promise<void>;
}

/** MCP sessions open at once: each is a Playwright MCP server of its own; an agent needs one, a few at most. */
export const MAX_MCP_SESSIONS = 8;

/**
 * Serves `open`'s MCP browser (openMcpBrowser: Playwright MCP on the run's browser, gated) over
 * Streamable HTTP on 127.0.0.1, one MCP browser per session, opened at the session's first
 * request and closed with it. It answers only at `/mcp`, only under its own Host (a page the
 * agent opened cannot reach it by a rebound name), and at most `maxSessions` sessions at once.
 * Each tool call and its result go to `record` (the run's trace), `by: 'agent'`.
 */
export async function serveMcp(open: () => Promise<McpBrowser>, { maxSessions = MAX_MCP_SESSIONS, record }: { maxSessions?: number; record?: (event: TraceEventBody) => void } = {}): Promise<McpEndpoint> {
  // Loaded with the first run that serves MCP: the SDK's server and its HTTP transport.
  const [{ Server }, { StreamableHTTPServerTransport }, { CallToolRequestSchema, ListToolsRequestSchema }] = await Promise.all([
    import('@modelcontextprotocol/sdk/server/index.js'),
    import('@modelcontextprotocol/sdk/server/streamableHttp.js'),
    import('@modelcontextprotocol/sdk/types.js'),
  ]);
  type Transport = InstanceType<typeof StreamableHTTPServerTransport>;
  const sessions = new Map<string, Transport>();
  /** Sessions begun (an initialize in progress) or open: what the cap counts. */
  let live = 0;
  /** Tool calls made, over every session: each is named in the trace by its number. */
  let calls = 0;
  /** Each ended session's MCP browser, closing: the endpoint's close waits for them. */
  const closing: Array<Promise<void>> = [];

  /** A session's server: the MCP browser's tools, each call to it. */
  const session = () => {
    const server = new Server({ name: 'harness-eval Playwright MCP', version: '1' }, { capabilities: { tools: {} } });
    let browser: Promise<McpBrowser> | undefined;
    const mcp = () => (browser ??= open());
    server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: [...(await mcp()).tools] }));
    server.setRequestHandler(CallToolRequestSchema, async ({ params: { name, arguments: args = {} } }, { signal }) => {
      // Each call in the run's trace, as the built-in harness records its own: its result is what the agent saw.
      const callId = `mcp-${++calls}`;
      const started = performance.now();
      const ended = (answer: { ok: true; text: string } | { ok: false; error: string }) =>
        record?.({ type: 'tool_result', callId, name, ...(answer.ok ? { ok: true, output: { text: answer.text } } : answer), ms: Math.round(performance.now() - started) });
      record?.({ type: 'tool_call', callId, name, arguments: JSON.stringify(args), by: 'agent' });
      try {
        const result = await (await mcp()).call(name, args, signal);
        ended(mcpAnswer(result));
        return result;
      } catch (error) {
        ended({ ok: false, error: error instanceof Error ? error.message : String(error) });
        throw error;
      }
    });
    const close = async () => {
      const opened = await browser?.catch(() => undefined);
      await opened?.close();
    };
    return { server, close };
  };

  const begin = async (request: IncomingMessage, response: ServerResponse) => {
    if (live >= maxSessions) return refuse(response, 503, `at most ${maxSessions} MCP sessions at once: close one (DELETE) first`);
    live += 1;
    const { server, close } = session();
    const transport: Transport = new StreamableHTTPServerTransport({ sessionIdGenerator: randomUUID, onsessioninitialized: (id) => void sessions.set(id, transport) });
    transport.onclose = () => {
      live -= 1;
      if (transport.sessionId) sessions.delete(transport.sessionId);
      closing.push(close());
    };
    await server.connect(transport);
    await transport.handleRequest(request, response);
    // Not an initialize (the transport answered 400): no session began.
    if (transport.sessionId === undefined) await transport.close();
  };

  let hosts: string[] = [];
  const http = createServer((request, response) => {
    if (!hosts.includes(request.headers.host ?? '')) return refuse(response, 403, `Host must be one of ${hosts.join(', ')}`);
    if (new URL(request.url ?? '/', 'http://localhost').pathname !== '/mcp') return refuse(response, 404, 'MCP is served at /mcp');
    const id = request.headers['mcp-session-id'];
    const existing = typeof id === 'string' ? sessions.get(id) : undefined;
    if (id !== undefined && !existing) return refuse(response, 404, 'Session not found');
    (existing ? existing.handleRequest(request, response) : begin(request, response)).catch((error: unknown) => refuse(response, 500, error instanceof Error ? error.message : String(error)));
  });
  const port = await listenLocal(http);
  hosts = [`127.0.0.1:${port}`, `localhost:${port}`];
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    async close() {
      await Promise.allSettled([...sessions.values()].map((transport) => transport.close()));
      await Promise.allSettled(closing);
      http.closeAllConnections();
      await new Promise((resolve) => http.close(resolve));
    },
  };
}

/** A refusal as MCP's Streamable HTTP transport answers one: a JSON-RPC error with no id. */
function refuse(response: ServerResponse, status: number, message: string): void {
  if (response.headersSent) return void response.end();
  response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }));
}
