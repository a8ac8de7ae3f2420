import { commandAgent, expect, hn, test } from 'harness-eval';

// The OpenAI Agents SDK (examples/openai-agents), unmodified: its Agent/Runner loop on Chat Completions
// through the gateway, the browser through Playwright MCP (HARNESS_MCP_URL); a command, sandboxed where
// the machine allows. The snapshot- doubles answer in Playwright MCP's own tools; diligent signs in with
// the account it is given, overclaimer claims the vote the login wall stopped.
test.use({ agent: commandAgent(['node', 'examples/openai-agents/agent.mjs'], { name: 'openai-agents', account: true }) });

for (const model of ['scripted:snapshot-diligent', 'scripted:snapshot-overclaimer']) {
  test.describe(model, () => {
    test.use({ model });
    test('upvote the first Hacker News post', async ({ harness }) => {
      expect((await harness.run(hn.tasks.upvoteFirstPost)).stopReason).toBe('finished');
    });
  });
}
