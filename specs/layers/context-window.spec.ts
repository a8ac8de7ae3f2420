import { expect, hn, test, type LayerSpec, type TraceEvent } from 'harness-eval';

// A long run's prompt: budget keeps it under the window; checkpoint saves and restarts it.

const promptTokens = (trace: TraceEvent[]) => trace.flatMap((event) => (event.type === 'harness_prompt_tokens' ? [event.tokens] : []));
const withBudget: LayerSpec[] = ['guardrails', ['budget', { window: 2000 }]];
const withCheckpoint: LayerSpec[] = ['guardrails', 'login', ['checkpoint', { window: 3000 }]];

test.describe('budget', () => {
  test.use({ model: 'scripted:injectable' });
  // As [value, options]: Playwright would read ['guardrails', [...]] itself as a value and options.
  test.use({ layers: [withBudget, { scope: 'test' }], layerStack: 'guardrails+budget' });
  test('pages that would overflow the window are trimmed: every prompt stays within it', async ({ harness }) => {
    const run = await harness.run(hn.tasks.upvoteFirstPost);
    const tokens = promptTokens(run.trace);
    expect(tokens.length).toBe(run.iterations);
    for (const count of tokens) expect(count).toBeLessThanOrEqual(1800);
    expect(run.trace.some((event) => event.type === 'harness_prompt_tokens' && event.dropped > 0)).toBe(true);
  });
});

test.describe('checkpoint', () => {
  test.use({ model: 'scripted:diligent' });
  // As [value, options] again, for the same reason.
  test.use({ layers: [withCheckpoint, { scope: 'test' }], layerStack: 'guardrails+login+checkpoint' });
  test('the conversation is saved to a checkpoint file, restarted from a summary, and the task still done', async ({ harness }) => {
    const run = await harness.run(hn.tasks.upvoteFirstPost);
    expect(run.trace.some((event) => event.type === 'harness_checkpoint')).toBe(true);
    expect(run).toSucceed();
  });
});

// Seed 000's trimContext against the default compaction, with a cap low enough to fire on this task.
for (const compaction of ['half', 'trim-context'] as const) {
  test.describe(`compaction ${compaction}`, () => {
    test.use({ model: 'scripted:diligent' });
    test.use({ layers: [[['guardrails', { maxMessages: 8, compaction }], 'login', 'verify'], { scope: 'test' }], layerStack: `guardrails(${compaction})+login+verify` });
    test(`past 8 messages the conversation is compacted (${compaction}), and the run is judged as any other`, async ({ harness }) => {
      const run = await harness.run(hn.tasks.upvoteFirstPost);
      const compactions = run.trace.filter((event) => event.type === 'harness_compaction');
      expect(compactions.length).toBeGreaterThan(0);
      if (compaction === 'trim-context') for (const event of compactions) expect(event.after).toBeLessThanOrEqual(4);
    });
  });
}
