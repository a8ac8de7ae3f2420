import { commandAgent, expect, hn, test } from 'harness-eval';

// A plain openai-SDK + Playwright loop (examples/openai-loop), a command driving the run's Chromium over CDP.
test.use({ agent: commandAgent(['node', '--import', 'tsx', 'examples/openai-loop/agent.ts'], { name: 'openai-loop' }) });

for (const model of ['scripted:diligent', 'scripted:overclaimer']) {
  test.describe(model, () => {
    test.use({ model });
    test('upvote the first Hacker News post', async ({ harness }) => {
      expect((await harness.run(hn.tasks.upvoteFirstPost)).stopReason).toBe('finished');
    });
  });
}
