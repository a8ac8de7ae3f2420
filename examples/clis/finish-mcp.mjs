// The run's claim as a tool: a stdio MCP server with one tool, `finish({ success, summary })`, which
// writes its arguments to the claim file named as its argument (HARNESS_CLAIM_FILE) and answers the
// agent. Each CLI's wrapper (claude.sh, codex.sh, gemini.sh) adds it beside the browser's MCP server,
// so the CLI ends with a structured claim, as the OpenAI Agents SDK example's `finish` tool does.
import { writeFileSync } from 'node:fs';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const claimFile = process.argv[2];
if (!claimFile) {
  console.error('finish-mcp: give the claim file as its argument');
  process.exit(2);
}

const finish = {
  name: 'finish',
  description: 'Report the outcome of the task once you are done, with the evidence you saw. Call it exactly once, last.',
  inputSchema: {
    type: 'object',
    properties: { success: { type: 'boolean', description: 'whether the task is done' }, summary: { type: 'string', description: 'what you did and what the page showed' } },
    required: ['success', 'summary'],
  },
};

const server = new Server({ name: 'claim', version: '1' }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: [finish] }));
server.setRequestHandler(CallToolRequestSchema, async ({ params: { name, arguments: args = {} } }) => {
  if (name !== 'finish') return { isError: true, content: [{ type: 'text', text: `no tool ${name}` }] };
  if (typeof args.success !== 'boolean' || typeof args.summary !== 'string') return { isError: true, content: [{ type: 'text', text: 'finish takes { success: boolean, summary: string }' }] };
  writeFileSync(claimFile, JSON.stringify({ success: args.success, summary: args.summary }));
  return { content: [{ type: 'text', text: 'Recorded. You are done: stop here.' }] };
});
await server.connect(new StdioServerTransport());
