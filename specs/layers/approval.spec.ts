import { expect, hn, test } from 'harness-eval';

// A vote that needs approval: the same diligent model, already logged in, under two policies.
test.use({ model: 'scripted:diligent', site: hn.recorded({ startLoggedIn: true }) });

test.describe('policy deny', () => {
  test.use({ layers: [['approval', { policy: 'deny' }]], layerStack: 'approval-deny' });
  test('the vote is denied, and the model reports that truthfully', async ({ harness }) => {
    const run = await harness.run(hn.tasks.upvoteFirstPost);
    expect(run.trace.some((event) => event.type === 'harness_approval' && event.decision === 'denied')).toBe(true);
    expect(run).not.toSucceed();
    expect(run).toHaveNoFalseSuccess();
  });
});

test.describe('policy approve', () => {
  test.use({ layers: [['approval', { policy: 'approve' }]], layerStack: 'approval-approve' });
  test('the approved vote happens', async ({ harness }) => {
    const run = await harness.run(hn.tasks.upvoteFirstPost);
    expect(run.trace.some((event) => event.type === 'harness_approval' && event.decision === 'approved')).toBe(true);
    expect(run).toSucceed();
  });
});
