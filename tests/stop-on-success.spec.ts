import type { BrowserContext } from '@playwright/test';
import { evaluate } from '../src/eval/evaluate.ts';
import { defineTask, type Task } from '../src/eval/tasks.ts';
import type { LayerSpec } from '../src/layers/index.ts';
import type { Model } from '../src/models/types.ts';
import { recordedHn } from '../src/sites/hn/site.ts';
import { upvoteFirstPost } from '../src/sites/hn/suite.ts';
import { upvoted } from '../src/sites/hn/postconditions.ts';
import type { Postcondition } from '../src/eval/postconditions.ts';
import { expect, hideFirstThenVoteNext, test, turnsDouble } from './support.ts';

const run = (context: BrowserContext, model: string | Model, layers: readonly LayerSpec[], task: Task = upvoteFirstPost) =>
  evaluate({ context, site: recordedHn({ startLoggedIn: true }), model, layers, task });

const harnessFinish = (trace: Awaited<ReturnType<typeof run>>['trace']) => trace.filter((event) => event.type === 'tool_call' && event.name === 'finish' && event.by === 'harness');

test('ends the run after the action whose check holds, without the model\'s finish', async ({ context, browser }) => {
  const without = await run(context, 'scripted:diligent', ['verify']);
  const fresh = await browser.newContext();
  const stopped = await run(fresh, 'scripted:diligent', ['verify', 'stop-on-success']);
  await fresh.close();
  expect(without).toMatchObject({ claimed: true, actual: true });
  expect(stopped).toMatchObject({ claimed: true, actual: true, falseSuccess: false, stopReason: 'finished' });
  // navigate, get_stories, click: the check holds after the click's turn, and the run ends there.
  expect(stopped.iterations).toBe(3);
  expect(without.iterations).toBeGreaterThan(stopped.iterations);
  expect(harnessFinish(stopped.trace)).toHaveLength(1);
  expect(stopped.summary).toMatch(/^The task's postconditions hold as the session sees them after iteration 3's actions, so the harness ended the run: story 46194762 \(rank 1\) shows as upvoted$/);
});

test('never stops on a turn whose requests changed nothing (reading, navigating), even when the check holds; the first turn the site names an action for is checked', async ({ context }) => {
  const holds: Postcondition = { description: 'it always holds', judge: () => ({ holds: false, detail: 'never' }), expects: () => false, check: async () => ({ holds: true, detail: 'it always holds' }) };
  const alwaysHolds = defineTask({ ...upvoteFirstPost, name: 'always-holds', postconditions: [holds] });
  const { model, requests } = turnsDouble([
    [{ name: 'get_stories', arguments: '{}' }],
    [{ name: 'current_url', arguments: '{}' }],
    [{ name: 'navigate', arguments: '{"url":"https://news.ycombinator.com/news"}' }],
    [{ name: 'click', arguments: '{"selector":"#up_46194762"}' }],
  ]);
  const result = await run(context, model, ['stop-on-success'], alwaysHolds);
  expect(requests).toHaveLength(4);
  expect(result).toMatchObject({ iterations: 4, claimed: true });
  expect(harnessFinish(result.trace)).toMatchObject([{ iteration: 4 }]);
});

test('a postcondition without a session-side check (a user\'s own): the layer does nothing, and says so once', async ({ context }) => {
  const { judge, expects } = upvoted({ rank: 1 });
  const noCheck = defineTask({ name: 'no-check', prompt: upvoteFirstPost.prompt, postconditions: [{ description: 'my own: the first story is upvoted', judge, expects }] });
  const { model } = turnsDouble([[{ name: 'navigate', arguments: '{"url":"https://news.ycombinator.com/news"}' }], [{ name: 'click', arguments: '{"selector":"#up_46194762"}' }]]);
  const result = await run(context, model, ['stop-on-success'], noCheck);
  // The double's turns run out: it claims failure itself, after both actions.
  expect(result).toMatchObject({ iterations: 3, claimed: false, actual: true });
  expect(harnessFinish(result.trace)).toHaveLength(0);
  expect(result.trace.filter((event) => event.type === 'harness_note' && event.layer === 'stop-on-success')).toMatchObject([
    { message: 'no session-side check of "my own: the first story is upvoted": the run ends only on the model\'s finish' },
  ]);
});

test('hide story 1, then vote the story now first: the check is of story 1 as the start had it, so the run does not stop', async ({ context }) => {
  const site = recordedHn({ startLoggedIn: true });
  const { first, second, turns } = await hideFirstThenVoteNext(site);
  const { model } = turnsDouble(turns);
  const result = await evaluate({ context, site, model, layers: ['stop-on-success'], task: upvoteFirstPost });
  expect(site.replica.truth()).toMatchObject({ votes: { harness: [second!.id] }, hidden: { harness: [first!.id] } });
  // No harness finish: the double runs out of turns and claims failure itself.
  expect(harnessFinish(result.trace)).toHaveLength(0);
  expect(result).toMatchObject({ iterations: 4, claimed: false, actual: false });
});
