import { expect, hn, test } from 'harness-eval';

// The diligent model, already logged in, with and without stop-on-success: the same vote, fewer
// model calls and tokens when the harness ends the run once the task's postconditions hold as the session sees them.
test.use({ model: 'scripted:diligent', site: hn.recorded({ startLoggedIn: true }) });

test.describe('verified', () => {
  test.use({ layers: ['guardrails', 'verify'], layerStack: 'verified' });
  test('the model checks its vote, then finishes', async ({ harness }) => {
    const run = await harness.run(hn.tasks.upvoteFirstPost);
    expect(run).toSucceed();
    console.log(`stop-on-success off: ${run.iterations} iterations, ${JSON.stringify(run.tokens)} tokens`);
  });
});

test.describe('verified + stop-on-success', () => {
  test.use({ layers: ['guardrails', 'verify', 'stop-on-success'], layerStack: 'verified+stop-on-success' });
  test('the harness ends the run after the vote', async ({ harness }) => {
    const run = await harness.run(hn.tasks.upvoteFirstPost);
    expect(run).toSucceed();
    expect(run.trace.some((event) => event.type === 'tool_call' && event.name === 'finish' && event.by === 'harness')).toBe(true);
    console.log(`stop-on-success on: ${run.iterations} iterations, ${JSON.stringify(run.tokens)} tokens`);
  });
});
