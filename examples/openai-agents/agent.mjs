// The OpenAI Agents SDK for JavaScript (@openai/agents), unmodified: its own Agent and Runner loop,
// its own MCP client (MCPServerStreamableHttp) for the browser, its own OpenAI client for the model.
// This script only wires the environment to it and writes the claim:
//   HARNESS_TASK                      what to do (the agent's input)
//   HARNESS_MCP_URL                   Playwright MCP over Streamable HTTP: the browser's tools
//   OPENAI_BASE_URL, OPENAI_API_KEY   the model (the openai client inside the SDK reads them itself)
//   OPENAI_MODEL                      optional; the model's name as the SDK sends it
//   OPENAI_API                        optional; `responses` for the SDK's default, the Responses API
//   HARNESS_SITE_USERNAME/_PASSWORD   optional; a login for the site, told to the agent in its input
//   HARNESS_CLAIM_FILE                where the outcome goes: { "success": …, "summary": … }
// The agent ends by calling its `finish` tool (stopAtToolNames); a model that ends with plain text
// instead made no claim, and the script writes none.
import { writeFileSync } from 'node:fs';
import { Agent, MCPServerStreamableHttp, run, setOpenAIAPI, setTracingDisabled, tool } from '@openai/agents';
import { z } from 'zod';

// No traces to OpenAI's servers (the run has no network but its own), and Chat Completions, which
// every OpenAI-compatible server speaks, unless told to keep the SDK's default, the Responses API.
setTracingDisabled(true);
if (process.env.OPENAI_API !== 'responses') setOpenAIAPI('chat_completions');

const finish = tool({
  name: 'finish',
  description: 'Report the outcome of the task once you are done, with the evidence you saw. Call it exactly once, last.',
  parameters: z.object({ success: z.boolean().describe('whether the task is done'), summary: z.string().describe('what you did and what the page showed') }),
  execute: async ({ success, summary }) => JSON.stringify({ success, summary }),
});

const browser = new MCPServerStreamableHttp({ url: process.env.HARNESS_MCP_URL, name: 'playwright' });
await browser.connect();
try {
  const agent = new Agent({
    name: 'browser agent',
    instructions:
      'You operate a web browser through the Playwright tools. Read the page with browser_snapshot and act on elements by their ref. ' +
      'Check the page after acting: claim success only if the page shows the task is done. When you are done, call finish.',
    ...(process.env.OPENAI_MODEL ? { model: process.env.OPENAI_MODEL } : {}),
    mcpServers: [browser],
    tools: [finish],
    toolUseBehavior: { stopAtToolNames: ['finish'] },
  });
  const { HARNESS_SITE_USERNAME: username, HARNESS_SITE_PASSWORD: password } = process.env;
  const login = username && password ? `\n\nIf the site asks you to log in, use the username ${username} and the password ${password}.` : '';
  const result = await run(agent, `${process.env.HARNESS_TASK}${login}`, { maxTurns: 20 });
  if (typeof result.finalOutput === 'string' && result.finalOutput.startsWith('{')) {
    writeFileSync(process.env.HARNESS_CLAIM_FILE, result.finalOutput);
  } else {
    console.log(`no claim: the agent ended with ${JSON.stringify(result.finalOutput)}`);
  }
} finally {
  await browser.close();
}
