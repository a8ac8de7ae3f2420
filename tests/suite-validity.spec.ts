import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { test, type Browser, type TestInfo } from '@playwright/test';
import { liarAgent, nopAgent, referenceAgent } from '../src/agents/controls.ts';
import type { Agent } from '../src/eval/agent.ts';
import { evaluate, type RunRecord } from '../src/eval/evaluate.ts';
import { defineTask, taskTags, type Task } from '../src/eval/tasks.ts';
import { upvoted } from '../src/sites/hn/postconditions.ts';
import { InputError } from '../src/input.ts';
import { markupYears } from '../src/sites/hn/options.ts';
import { createReplica } from '../src/sites/hn/replica.ts';
import { recordedHn, type RecordedOptions } from '../src/sites/hn/site.ts';
import { hnSuite } from '../src/sites/hn/suite.ts';
import { expect, referenceDir } from './support.ts';

/**
 * Each task of the suite is valid on each markup era the replica serves: the reference makes it
 * actual with no side effect (an infeasible task: it finds nothing, changes nothing and says so),
 * the nop is not actual and claims nothing, the liar is not actual and so a false success. A task
 * that needs what a capture lacks is skipped there, with its own reason. The same on every real
 * front-page capture in ../shared/hn-reference (when it is there).
 */

/** Where a run starts: a markup era of the fixture capture, or a real capture (../shared/hn-reference). */
type Start = { label: string; options: RecordedOptions };

/** One control's run of `task` on a fresh replica, in a browser context of its own. */
async function controlRun(browser: Browser, agent: Agent, task: Task, start: Start, outputDir: string): Promise<RunRecord> {
  const context = await browser.newContext();
  try {
    return await evaluate({ context, site: recordedHn(start.options), agent, model: 'scripted:diligent', task, outputDir });
  } finally {
    await context.close();
  }
}

const oracleSaid = (run: RunRecord) => `${run.verdicts.map((verdict) => verdict.detail).join('; ')}; side effects: ${run.sideEffects.map((change) => change.detail).join(', ') || 'none'}; ${run.summary}`;

/** The reference, the nop and the liar on `task` from `start`: the task is valid there only if each ends as it must. */
async function checkControls(browser: Browser, task: Task, start: Start, testInfo: TestInfo): Promise<void> {
  const notApplicable = task.whyNotApplicable?.(await recordedHn(start.options).snapshot());
  test.skip(notApplicable !== undefined, `not applicable: ${task.name} on ${start.label}: ${notApplicable}`);
  const run = (agent: Agent) => controlRun(browser, agent, task, start, testInfo.outputPath(agent.name));
  const [reference, nop, liar] = [await run(referenceAgent()), await run(nopAgent()), await run(liarAgent())];
  const outcomes = { reference: reference.actual, nop: nop.actual, liar: liar.actual };
  console.log(`${start.label} ${task.name}: actual ${JSON.stringify(outcomes)}, liar false success ${liar.falseSuccess}`);

  if (task.tags.includes('infeasible')) {
    expect(reference, `the reference made the infeasible ${task.name} actual, or claimed it: ${oracleSaid(reference)}`).toMatchObject({ actual: false, claimed: false });
  } else {
    expect(reference, `the reference did not make ${task.name} actual: ${oracleSaid(reference)}`).toMatchObject({ actual: true, claimed: true, falseSuccess: false });
  }
  expect(reference.sideEffects, oracleSaid(reference)).toEqual([]);
  expect(nop, `doing nothing: ${oracleSaid(nop)}`).toMatchObject({ actual: false, claimed: false, falseFailure: false, sideEffects: [] });
  expect(liar, `a liar counted as a success on ${task.name}: ${oracleSaid(liar)}`).toMatchObject({ actual: false, claimed: true, falseSuccess: true, sideEffects: [] });
}

for (const markupYear of markupYears) {
  test.describe(`${markupYear} markup`, () => {
    const start = { label: `the ${markupYear} capture`, options: { faults: { markupYear } } };
    for (const task of hnSuite) test(`${task.name} (revision ${task.revision})`, ({ browser }, testInfo) => checkControls(browser, task, start, testInfo));
  });
}

/**
 * The real captures the replica can start the suite from: a front page (its tasks start at
 * /news). Any other capture (an item page) is listed with why, and its tasks are not run there.
 */
const captures = existsSync(referenceDir) ? readdirSync(referenceDir).filter((name) => name.endsWith('.html')).sort() : [];
function unservedWhy(name: string): string | undefined {
  try {
    const ranked = [...createReplica({ capture: join(referenceDir, name) }).capture.items.values()].some((item) => item.rank !== undefined);
    return ranked ? undefined : "it ranks no story (an item page): the suite's tasks start on the front page";
  } catch (error) {
    return `the replica cannot read it: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`;
  }
}

test('the real captures the suite runs on, and why the others are not', () => {
  test.skip(!existsSync(referenceDir), 'no ../shared/hn-reference beside the project');
  for (const name of captures) console.log(`${name}: ${unservedWhy(name) ?? 'served: every task that applies runs there'}`);
  expect(captures.filter((name) => !unservedWhy(name)).length).toBeGreaterThan(0);
});

for (const name of captures.filter((capture) => !unservedWhy(capture))) {
  test.describe(`capture ${name}`, () => {
    const start = { label: name, options: { capture: join(referenceDir, name) } };
    for (const task of hnSuite) test(`${task.name} (revision ${task.revision})`, ({ browser }, testInfo) => checkControls(browser, task, start, testInfo));
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
    // The mix the issue asks for: every kind of task is in the suite.
    for (const tag of taskTags) expect(perTag[tag], `no task is tagged ${tag}`).toBeGreaterThan(0);
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
    expect(bad({ postconditions: [{ description: 'no check' }] })).toBe('task upvote-it: postconditions.0: expected a postcondition { description, judge(evidence), expects(change, evidence) }');
    expect(bad({ name: 'Upvote It' })).toBe('task Upvote It: name: expected lower-case words joined by "-" (upvote-first-post)');
    // Left out, a revision is 1 and the tags are none.
    expect(defineTask({ name: 'upvote-it', prompt: 'Upvote it.', postconditions: [upvoted({ rank: 1 })] })).toMatchObject({ revision: 1, tags: [] });
  });
});
