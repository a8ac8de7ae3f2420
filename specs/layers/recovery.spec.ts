import { expect, hn, test } from 'harness-eval';

// The classic vote on a replica whose page dies at the site's 2nd page request (the vote itself,
// which the site counts): the same diligent model, signed in, with and without `recovery`.
test.use({ model: 'scripted:diligent', site: hn.recorded({ startLoggedIn: true, faults: { crashAfter: 2 } }) });

test.describe('no recovery', () => {
  test.use({ layers: [], layerStack: 'crash-bare' });
  test('the run stops with error when the page dies: incomplete, unclaimed, though the site counted the vote', async ({ harness }) => {
    const run = await harness.run(hn.tasks.upvoteFirstPost);
    expect(run.stopReason).toBe('error');
    expect(run.incomplete).toBe(true);
    expect(run.claimed).toBe(false);
    expect(run.actual).toBe(true);
  });
});

test.describe('recovery', () => {
  test.use({ layers: ['recovery'], layerStack: 'crash-recovery' });
  test('the harness reopens the page signed in, the model checks the vote and claims it truthfully', async ({ harness }) => {
    const run = await harness.run(hn.tasks.upvoteFirstPost);
    expect(run.trace.filter((event) => event.type === 'harness_recovery')).toEqual([expect.objectContaining({ recovered: true })]);
    expect(run.incomplete).toBe(false);
    expect(run).toSucceed();
    expect(run).toHaveNoFalseSuccess();
  });
});
