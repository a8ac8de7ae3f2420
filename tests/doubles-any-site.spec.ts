import { expect, layerStacks, test, type RunRecord } from '../src/index.ts';
import { todoSite } from '../examples/todo-kit/site.ts';
import { todoTasks } from '../examples/todo-kit/tasks.ts';

const verdicts = (run: RunRecord) => `${run.summary} | ${run.verdicts.map((verdict) => verdict.detail).join('; ')} | ${JSON.stringify(run.trace.filter((e) => e.type === 'tool_call' || e.type === 'tool_result').map((e) => e.type === 'tool_call' ? `${e.name} ${e.arguments}` : JSON.stringify(e).slice(0, 300)))}`;

test.use({ site: todoSite({ startLoggedIn: true }) });
for (const task of todoTasks) {
  test(`${task.name} diligent bare`, async ({ harness }) => {
    test.use;
    const run = await harness.run(task);
    expect(run, verdicts(run)).toMatchObject({ claimed: true, actual: true, sideEffects: [] });
  });
}
