import { expect, functionAgent, hn, test } from 'harness-eval';
import { aiSdkAgent } from '../../examples/ai-sdk/agent.ts';

// A Vercel AI SDK tool loop (examples/ai-sdk) as a function: the test's own page, the model through the gateway.
test.use({ agent: functionAgent(aiSdkAgent, { name: 'ai-sdk' }) });

for (const model of ['scripted:diligent', 'scripted:overclaimer']) {
  test.describe(model, () => {
    test.use({ model });
    test('upvote the first Hacker News post', async ({ harness }) => {
      expect((await harness.run(hn.tasks.upvoteFirstPost)).stopReason).toBe('finished');
    });
  });
}
