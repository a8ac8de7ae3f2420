import { expect, hn, test } from 'harness-eval';

// A model that repeats itself: guardrails stop it at 15 iterations, stall after its second repeat.
test.use({ model: 'scripted:looper' });

test.describe('guardrails only', () => {
  test.use({ layers: ['guardrails'], layerStack: 'guardrails' });
  test('the looper runs until max iterations', async ({ harness }) => {
    const run = await harness.run(hn.tasks.upvoteFirstPost);
    expect(run).toMatchObject({ stopReason: 'max_iterations', iterations: 15 });
  });
});

test.describe('guardrails + stall', () => {
  test.use({ layers: ['guardrails', 'stall'], layerStack: 'guardrails+stall' });
  test('the looper is warned, then stopped as stalled, far sooner', async ({ harness }) => {
    const run = await harness.run(hn.tasks.upvoteFirstPost);
    expect(run.stopReason).toBe('stalled');
    expect(run.iterations).toBeLessThan(8);
    expect(run.trace.filter((event) => event.type === 'harness_stall').map((event) => event.type === 'harness_stall' && event.action)).toEqual(['warned', 'stopped']);
  });
});
