import { expect, hn, test } from 'harness-eval';

// Claims must cite the calls that show them: the overclaimer cites nothing, the diligent model does.
test.use({ layers: ['login', 'evidence'], layerStack: 'login+evidence' });

test.describe('overclaimer', () => {
  test.use({ model: 'scripted:overclaimer' });
  test('an uncited claim is rejected, even though the vote happened', async ({ harness }) => {
    const run = await harness.run(hn.tasks.upvoteFirstPost);
    expect(run.trace.some((event) => event.type === 'harness_evidence' && !event.ok)).toBe(true);
    expect(run.claimed).toBe(false);
    expect(run).toHaveNoFalseSuccess();
  });
});

test.describe('diligent', () => {
  test.use({ model: 'scripted:diligent' });
  test('a cited claim stands', async ({ harness }) => {
    const run = await harness.run(hn.tasks.upvoteFirstPost);
    expect(run.trace.some((event) => event.type === 'harness_evidence' && event.ok)).toBe(true);
    expect(run).toSucceed();
  });
});
