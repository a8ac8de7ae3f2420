import { test, type Browser } from '@playwright/test';
import { liarAgent, nopAgent, referenceAgent } from '../src/agents/controls.ts';
import type { Agent } from '../src/eval/agent.ts';
import { evaluate, type RunRecord } from '../src/eval/evaluate.ts';
import type { Task } from '../src/eval/tasks.ts';
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
