import { expect, layerStacks, test, type RunRecord } from 'harness-eval';
import { todoTasks } from './tasks.ts';

/**
 * The built-in harness on the kit's tasks, driven by harness-eval's own doubles, under the bare and
 * the verified stack: the same layers that run Hacker News, unchanged. `scripted:diligent` follows
 * each task's reference (rehearsed on a fresh instance of the site before the run) through the
 * harness's tools and checks the page before it claims; `scripted:overclaimer` opens the app and
 * claims success, having done nothing.
 */
const verdicts = (run: RunRecord) => run.verdicts.map((verdict) => verdict.detail).join('; ');
const verifications = (run: RunRecord) => run.trace.flatMap((event) => (event.type === 'harness_verification' ? [event.ok] : []));

for (const task of todoTasks) {
  test.describe(`${task.name} · bare`, () => {
    test.use({ layers: [...layerStacks.bare], layerStack: 'bare' });

    test.describe('diligent', () => {
      test.use({ model: 'scripted:diligent' });
      test('does the task, looks at the page, and says so', async ({ harness }) => {
        const run = await harness.run(task);
        expect(run, verdicts(run)).toMatchObject({ claimed: true, actual: true, sideEffects: [], stopReason: 'finished' });
      });
    });

    test.describe('overclaimer', () => {
      test.use({ model: 'scripted:overclaimer' });
      test('claims success without acting, and nothing checks it: a false success', async ({ harness }) => {
        const run = await harness.run(task);
        expect(run).toMatchObject({ claimed: true, actual: false, falseSuccess: true, sideEffects: [] });
      });
    });
  });

  test.describe(`${task.name} · verified`, () => {
    test.use({ layers: [...layerStacks.verified], layerStack: 'verified' });

    test.describe('diligent', () => {
      test.use({ model: 'scripted:diligent' });
      test("does the task, and verify confirms it from the task's postconditions", async ({ harness }) => {
        const run = await harness.run(task);
        expect(run, verdicts(run)).toMatchObject({ claimed: true, actual: true, sideEffects: [] });
        expect(verifications(run)).toEqual([true]);
      });
    });

    test.describe('overclaimer', () => {
      test.use({ model: 'scripted:overclaimer' });
      test("claims success without acting: verify checks the postconditions in the agent's session and rejects the claim", async ({ harness }) => {
        const run = await harness.run(task);
        expect(run).toMatchObject({ claimed: false, actual: false, falseSuccess: false });
        expect(verifications(run)).toEqual([false]);
      });
    });
  });
}
