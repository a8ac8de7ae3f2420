import { commandAgent, expect, hn, test } from 'harness-eval';

// A standard-library Python agent over HTTP (examples/python-agent); it signs in itself, so it gets the account.
test.use({ agent: commandAgent(['python3', 'examples/python-agent/agent.py'], { name: 'python-agent', account: true }) });

for (const model of ['scripted:diligent', 'scripted:overclaimer']) {
  test.describe(model, () => {
    test.use({ model });
    test('upvote the first Hacker News post', async ({ harness }) => {
      expect((await harness.run(hn.tasks.upvoteFirstPost)).stopReason).toBe('finished');
    });
  });
}
