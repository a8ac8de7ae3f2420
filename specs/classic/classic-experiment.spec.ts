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
  test('the same prompt now succeeds: the harness only signs in, the model goes back and votes itself, in six iterations', async ({ harness }) => {
    const run = await harness.run(hn.tasks.upvoteFirstPost);
    expect(run).toSucceed();
    expect(run).toHaveNoFalseSuccess();
    expect(run).toFinishWithin({ iterations: 6 });
    // As in the talk: the login handler signs in and hands back a page that reads; the vote is the model's own click after it.
    const login = run.trace.findIndex((event) => event.type === 'harness_auto_login' && event.ok);
    expect(login).toBeGreaterThan(-1);
    const signedIn = run.trace[login]!;
    expect(signedIn.type === 'harness_auto_login' && new URL(signedIn.to).pathname).not.toBe('/vote');
    const votes = run.trace.filter((event) => event.type === 'tool_result' && event.name === 'click' && event.ok && /#up_\d+/.test(String(event.output?.clicked)));
    const lastVote = votes.at(-1)!;
    expect(lastVote.seq).toBeGreaterThan(signedIn.seq);
    const call = run.trace.find((event) => event.type === 'tool_call' && event.callId === (lastVote.type === 'tool_result' && lastVote.callId));
    expect(call).toMatchObject({ type: 'tool_call', name: 'click', by: 'model' });
  });
});
