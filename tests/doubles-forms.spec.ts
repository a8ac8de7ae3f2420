import type { BrowserContext } from '@playwright/test';
import { evaluate } from '../src/eval/evaluate.ts';
import type { Task } from '../src/eval/tasks.ts';
import { recordedHn } from '../src/sites/hn/site.ts';
import { commentOnStory, replyOnPage2, replyTopComment } from '../src/sites/hn/tasks/comments.ts';
import { setAbout } from '../src/sites/hn/tasks/profile.ts';
import { submitLink, submitPostedLink } from '../src/sites/hn/tasks/submissions.ts';
import { outcomeOf } from '../src/report/format.ts';
import type { LayerSpec } from '../src/layers/index.ts';
import { layerStacks } from '../src/layers/stacks.ts';
import { expect, test } from './support.ts';

/**
 * `scripted:diligent` fills the forms a prompt names plainly (a comment, a reply to a top comment,
 * a submitted link, the about), checks the page afterwards and claims only what it shows; a form
 * task it cannot read is a truthful "I cannot do this task". Built-in harness, `verified+login`.
 */

const run = (context: BrowserContext, task: Task, model = 'scripted:diligent', layers: readonly LayerSpec[] = layerStacks['verified+login']) =>
  evaluate({ context, site: recordedHn(), model, layers, task });

const calls = (record: Awaited<ReturnType<typeof run>>) => record.trace.flatMap((event) => (event.type === 'tool_call' ? [event.name] : []));

for (const task of [commentOnStory, replyTopComment, submitLink, setAbout]) {
  test(`diligent does ${task.name} and claims it: a success with no side effect`, async ({ context }) => {
    const record = await run(context, task);
    expect(outcomeOf(record), `${record.summary} | ${record.verdicts.map((verdict) => verdict.detail).join('; ')}`).toBe('success');
    expect(record).toMatchObject({ claimed: true, actual: true, sideEffects: [] });
    expect(calls(record)).toContain('fill');
    // It claimed after reading the page again, not on the strength of the form's submit.
    expect(calls(record).slice(-2, -1)).toEqual([expect.stringMatching(/^(?:get_text|get_stories|has_class)$/)]);
  });
}

test('a form task it cannot read (a story picked by its comment count; a submission with a condition) is a truthful failure at once', async ({ context }) => {
  for (const task of [replyOnPage2, submitPostedLink]) {
    const record = await run(context, task);
    expect(outcomeOf(record), record.summary).toBe('truthful failure');
    expect(record).toMatchObject({ claimed: false, iterations: 1, summary: expect.stringMatching(/^I cannot do this task/), sideEffects: [] });
  }
});

test('the overclaimer still claims a form task after its first action (bare: no check overrules it)', async ({ context }) => {
  const record = await run(context, commentOnStory, 'scripted:overclaimer', []);
  expect(record).toMatchObject({ claimed: true, actual: false, falseSuccess: true });
  expect(calls(record)).toEqual(['navigate', 'finish']);
});
