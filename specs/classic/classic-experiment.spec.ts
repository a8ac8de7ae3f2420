import { expect, hn, test } from 'harness-eval';

// The classic experiment: the same prompt and the same weak model under three layer stacks.
test.use({ model: 'scripted:overclaimer' });

test.describe('no layers', () => {
  test.use({ layers: [], layerStack: 'bare' });
  test('the model hits the login wall and claims success anyway: a false success', async ({ harness }) => {
    const run = await harness.run(hn.tasks.upvoteFirstPost);
    expect(run).not.toSucceed();
    expect(run).not.toHaveNoFalseSuccess();
  });
});

test.describe('guardrails + verify', () => {
  test.use({ layers: ['guardrails', 'verify'], layerStack: 'verified' });
  test('the same claim is caught: a truthful failure', async ({ harness }) => {
    const run = await harness.run(hn.tasks.upvoteFirstPost);
    expect(run).toHaveNoFalseSuccess();
    expect(run).not.toSucceed();
  });
});

test.describe('guardrails + verify + login', () => {
  test.use({ layers: ['guardrails', 'verify', 'login'], layerStack: 'verified+login' });
  test('the same prompt now succeeds, within 8 iterations', async ({ harness }) => {
    const run = await harness.run(hn.tasks.upvoteFirstPost);
    expect(run).toSucceed();
    expect(run).toHaveNoFalseSuccess();
    expect(run).toFinishWithin({ iterations: 8 });
  });
});
