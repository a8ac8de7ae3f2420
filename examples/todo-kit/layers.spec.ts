import { expect, test } from 'harness-eval';
import { todoDiligent } from './doubles.ts';
import { markFirstGroceryDone } from './tasks.ts';

/**
 * The layers that act on what a request does (stop-on-success, approval, permissions) on the kit's
 * first task, driven by the diligent double. Each expects what the layer does on Hacker News; each
 * is marked to fail, with what the layer still assumes of HN.
 */
test.use({ model: todoDiligent });

test.describe('stop-on-success', () => {
  test.use({ layers: ['guardrails', 'verify', 'stop-on-success'] });
  test('ends the run for the model once the postcondition checks out after an action', async ({ harness }) => {
    test.fail(true, "stop-on-success runs only a task's own `verify` (from the HN origin by default), not its postconditions' check(session)");
    const run = await harness.run(markFirstGroceryDone);
    expect(run).toMatchObject({ claimed: true, actual: true });
    expect(run.trace.some((event) => event.type === 'tool_call' && event.name === 'finish' && event.by === 'harness')).toBe(true);
  });
});

test.describe('approval', () => {
  test.use({ layers: ['approval'] });
  test('asks before marking an item done; denied, the item stays as it was and the denial is recorded', async ({ harness }) => {
    test.fail(true, "approval asks only about HN's votes (a click on a `vote?…` link, a navigate to /vote), not the site kit's classify(request)");
    const run = await harness.run(markFirstGroceryDone);
    expect(run).toMatchObject({ actual: false, sideEffects: [] });
    expect(run.trace.filter((event) => event.type === 'harness_approval').map((event) => event.decision)).toEqual(['denied']);
  });
});

test.describe('permissions', () => {
  test.use({ layers: ['permissions'] });
  test("lets the browser use the site's own origin by default", async ({ harness }) => {
    test.fail(true, "permissions' origins default to HN's origin, not the run's site's origins");
    const run = await harness.run(markFirstGroceryDone);
    expect(run.trace.filter((event) => event.type === 'harness_denied')).toEqual([]);
    expect(run).toMatchObject({ claimed: true, actual: true });
  });
});
