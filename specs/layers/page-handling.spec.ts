import { expect, hn, test } from 'harness-eval';

// How pages reach the model: long outputs paged, and actions that wait for a quiet page.
test.describe('output', () => {
  test.use({ model: 'scripted:injectable', layers: ['guardrails', 'output'], layerStack: 'guardrails+output' });
  // The doubles never call more(): their cell shows what paging costs a model that cannot use it.
  test('long outputs come as a first page, with the rest behind more()', async ({ harness }) => {
    const run = await harness.run(hn.tasks.upvoteFirstPost);
    expect(run.trace.some((event) => event.type === 'harness_output' && event.tier === 'paged')).toBe(true);
    expect(run).toHaveNoFalseSuccess();
  });
});

test.describe('settle', () => {
  test.use({ model: 'scripted:diligent', layers: ['login', 'settle'], layerStack: 'login+settle' });
  test('every action waits for the page to settle, and the task still succeeds', async ({ harness }) => {
    const run = await harness.run(hn.tasks.upvoteFirstPost);
    expect(run.trace.filter((event) => event.type === 'harness_settle').length).toBeGreaterThanOrEqual(2);
    expect(run).toSucceed();
  });
});
