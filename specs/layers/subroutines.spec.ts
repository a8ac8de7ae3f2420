import { rmSync } from 'node:fs';
import { expect, hn, test } from 'harness-eval';
import { saveSubroutine } from 'harness-eval/layers';

// Recorded once on the 2025 markup by the diligent model under verified+login, saved only because
// the oracle confirmed the run, then replayed on the 2025, 2020 and 2017 markups (classes differ by
// era; the elements are the same): model calls per cell.
// The file's tests run in order, in one worker: the replays need the saved subroutine.
test.describe.configure({ mode: 'serial' });
const dir = 'test-results/specs/subroutines';
const task = hn.tasks.upvoteFirstPost;
const stack = (replay: boolean) => ['guardrails', 'verify', 'login', ['subroutines', { dir, replay }]] as const;
test.use({ model: 'scripted:diligent' });

test.describe('record on 2025', () => {
  test.use({ layers: [...stack(false)], layerStack: 'verified+login+subroutines-record', site: hn.recorded({ faults: { markupYear: 2025 } }) });
  test('the model does the task; the oracle confirms it; its steps are saved', async ({ harness }) => {
    rmSync(dir, { recursive: true, force: true });
    const run = await harness.run(task);
    expect(run).toSucceed();
    saveSubroutine(run, { task, dir });
    console.log(`subroutines recorded on 2025: ${run.iterations} model calls`);
  });
});

for (const year of [2025, 2020, 2017] as const) {
  test.describe(`replay on ${year}`, () => {
    test.use({ layers: [...stack(true)], layerStack: 'verified+login+subroutines', site: hn.recorded({ faults: { markupYear: year } }) });
    test(`the subroutine replays on the ${year} markup`, async ({ harness }) => {
      const run = await harness.run(task);
      const replay = run.trace.find((event) => event.type === 'harness_subroutine');
      expect(replay).toBeDefined();
      expect(run).toSucceed();
      // The same links in the same rows, restyled by era: the routine replays whole, with no model call.
      expect(replay).toMatchObject({ replayed: 6, of: 6 });
      expect(run.iterations).toBe(0);
      console.log(`subroutines ${year}: ${run.iterations} model calls, ${JSON.stringify(replay)}`);
    });
  });
}
