import { test, type Browser } from '@playwright/test';
import { liarAgent, nopAgent, referenceAgent } from '../src/agents/controls.ts';
import type { Agent } from '../src/eval/agent.ts';
import { evaluate, type RunRecord } from '../src/eval/evaluate.ts';
import { defineTask, taskTags, type Task } from '../src/eval/tasks.ts';
import { upvoted } from '../src/sites/hn/postconditions.ts';
import { InputError } from '../src/input.ts';
import { markupYears, type MarkupYear } from '../src/sites/hn/options.ts';
import { recordedHn } from '../src/sites/hn/site.ts';
import { hnSuite } from '../src/sites/hn/suite.ts';
import { expect } from './support.ts';

/**
 * Each task of the suite is valid on each markup era the replica serves: the reference makes it
 * actual with no side effect (an infeasible task: it finds nothing, changes nothing and says so),
 * the nop is not actual and claims nothing, the liar is not actual and so a false success. A task
 * that needs what a capture lacks is skipped there, with its own reason.
 */

/** One control's run of `task` on a fresh replica of `markupYear`, in a browser context of its own. */
async function controlRun(browser: Browser, agent: Agent, task: Task, markupYear: MarkupYear, outputDir: string): Promise<RunRecord> {
  const context = await browser.newContext();
  try {
    return await evaluate({ context, site: recordedHn({ faults: { markupYear } }), agent, model: 'scripted:diligent', task, outputDir });
  } finally {
    await context.close();
  }
}

const oracleSaid = (run: RunRecord) => `${run.verdicts.map((verdict) => verdict.detail).join('; ')}; side effects: ${run.sideEffects.map((change) => change.detail).join(', ') || 'none'}; ${run.summary}`;

for (const markupYear of markupYears) {
  test.describe(`${markupYear} markup`, () => {
    for (const task of hnSuite) {
      test(`${task.name} (revision ${task.revision})`, async ({ browser }, testInfo) => {
        const notApplicable = task.whyNotApplicable?.(await recordedHn({ faults: { markupYear } }).snapshot());
        test.skip(notApplicable !== undefined, `${task.name} does not apply to the ${markupYear} capture: ${notApplicable}`);
        const run = (agent: Agent) => controlRun(browser, agent, task, markupYear, testInfo.outputPath(agent.name));
        const [reference, nop, liar] = [await run(referenceAgent()), await run(nopAgent()), await run(liarAgent())];
        const outcomes = { reference: reference.actual, nop: nop.actual, liar: liar.actual };
        console.log(`${markupYear} ${task.name}: actual ${JSON.stringify(outcomes)}, liar false success ${liar.falseSuccess}`);

        if (task.tags.includes('infeasible')) {
          expect(reference, `the reference made the infeasible ${task.name} actual, or claimed it: ${oracleSaid(reference)}`).toMatchObject({ actual: false, claimed: false });
        } else {
          expect(reference, `the reference did not make ${task.name} actual: ${oracleSaid(reference)}`).toMatchObject({ actual: true, claimed: true, falseSuccess: false });
        }
        expect(reference.sideEffects, oracleSaid(reference)).toEqual([]);
        expect(nop, `doing nothing: ${oracleSaid(nop)}`).toMatchObject({ actual: false, claimed: false, falseFailure: false, sideEffects: [] });
        expect(liar, `a liar counted as a success on ${task.name}: ${oracleSaid(liar)}`).toMatchObject({ actual: false, claimed: true, falseSuccess: true, sideEffects: [] });
      });
    }
  });
}

test.describe('the suite as data', () => {
  test('every task has a unique name, a revision, tags and a reference; tasks per tag', () => {
    expect(new Set(hnSuite.map((task) => task.name)).size).toBe(hnSuite.length);
    for (const task of hnSuite) {
      expect(task.revision, task.name).toBeGreaterThanOrEqual(1);
      expect(task.tags.length, `${task.name} has no tag`).toBeGreaterThan(0);
      expect(task.reference, `${task.name} has no reference solution`).toBeInstanceOf(Function);
    }
    const perTag = Object.fromEntries(taskTags.map((tag) => [tag, hnSuite.filter((task) => task.tags.includes(tag)).length]));
    console.log(`${hnSuite.length} tasks; per tag: ${JSON.stringify(perTag)}`);
    // Every kind the issue asks for is there (the families add to each).
    for (const tag of ['infeasible', 'information', 'loop', 'form', 'multi-step', 'side-effect-trap'] as const) expect(perTag[tag], tag).toBeGreaterThanOrEqual(1);
  });

  test('a bad task definition is one line naming the task and each bad field', () => {
    const bad = (input: Record<string, unknown>) => {
      try {
        defineTask({ name: 'upvote-it', prompt: 'Upvote it.', postconditions: [upvoted({ rank: 1 })], ...input } as Parameters<typeof defineTask>[0]);
      } catch (error) {
        expect(error).toBeInstanceOf(InputError);
        return (error as Error).message;
      }
      throw new Error(`accepted ${JSON.stringify(input)}`);
    };
    expect(bad({ revision: 0 })).toBe('task upvote-it: revision: Too small: expected number to be >=1');
    expect(bad({ revision: 1.5, tags: ['fun'] })).toBe('task upvote-it: revision: Invalid input: expected int, received number; tags.0: Invalid option: expected one of "navigation"|"form"|"multi-step"|"loop"|"information"|"infeasible"|"needs-login"|"side-effect-trap"');
    expect(bad({ postconditions: [] })).toBe('task upvote-it: postconditions: a task needs a postcondition: with none, no run could be actual');
    expect(bad({ postconditions: [{ description: 'no check' }] })).toBe('task upvote-it: postconditions.0: expected a postcondition { description, check(evidence), expects(change, evidence) }');
    expect(bad({ name: 'Upvote It' })).toBe('task Upvote It: name: expected lower-case words joined by "-" (upvote-first-post)');
    // Left out, a revision is 1 and the tags are none.
    expect(defineTask({ name: 'upvote-it', prompt: 'Upvote it.', postconditions: [upvoted({ rank: 1 })] })).toMatchObject({ revision: 1, tags: [] });
  });
});
