import { expect, test } from 'harness-eval';
import { assignLoginBug } from './tasks.ts';

/**
 * The layers that act on what a request does (stop-on-success, approval, permissions) on the kit's
 * first task, driven by `scripted:diligent`: each does here what it does on Hacker News, through
 * the kit's classifier, its origin and its postconditions' session checks.
 */
test.use({ model: 'scripted:diligent' });

test.describe('stop-on-success', () => {
  test.use({ layers: ['guardrails', 'verify', 'stop-on-success'] });
  test('ends the run for the model once the postcondition checks out after an action', async ({ harness }) => {
    const run = await harness.run(assignLoginBug);
    expect(run).toMatchObject({ claimed: true, actual: true });
    expect(run.trace.some((event) => event.type === 'tool_call' && event.name === 'finish' && event.by === 'harness')).toBe(true);
  });
});

test.describe('approval', () => {
  test.use({ layers: ['approval'] });
  test('asks before assigning the ticket (a fetch() post, classified `assign`); denied, the ticket stays as it was and the denial is recorded', async ({ harness }) => {
    const run = await harness.run(assignLoginBug);
    expect(run).toMatchObject({ actual: false, sideEffects: [] });
    expect(run.trace.filter((event) => event.type === 'harness_approval').map((event) => event.decision)).toEqual(['denied']);
  });
});

test.describe('permissions', () => {
  test.use({ layers: ['permissions'] });
  test("lets the browser use the site's own origin by default", async ({ harness }) => {
    const run = await harness.run(assignLoginBug);
    expect(run.trace.filter((event) => event.type === 'harness_denied')).toEqual([]);
    expect(run).toMatchObject({ claimed: true, actual: true });
  });
});
