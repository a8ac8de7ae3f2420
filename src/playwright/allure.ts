import type { TestInfo } from '@playwright/test';
import * as allure from 'allure-js-commons';
import { Status } from 'allure-js-commons';
import { transcript } from '../harness/transcript.ts';
import type { TraceEvent } from '../core/trace.ts';
import { trajectorySteps, type Step } from '../export/atif.ts';

interface AllureRun {
  task: string;
  model: string;
  layers: string;
  site: string;
  trace: TraceEvent[];
}

/** When allure-playwright is a reporter: the run's cell as parameters and labels, its steps, its trace and transcript attached. */
export async function recordInAllure(testInfo: TestInfo, run: AllureRun): Promise<void> {
  if (!testInfo.config.reporter.some(([name]) => name.includes('allure-playwright'))) return;
  for (const key of ['task', 'model', 'layers', 'site'] as const) {
    await allure.parameter(key, run[key]);
    await allure.label(key, run[key]);
  }
  await recordSteps(run);
  await allure.attachment('harness trace', JSON.stringify(run.trace, null, 2), 'application/json');
  await allure.attachment('transcript', transcript(run.trace), 'text/plain');
}

/** The step that holds the run's trajectory. */
export const TRAJECTORY_STEP = 'trajectory (ATIF steps)';

/** Longest step name shown: a model's whole answer belongs in the trace, not in the step list. */
const STEP_NAME_CHARS = 200;

/**
 * The run's steps as its ATIF trajectory has them (`harness-eval export --format atif`): a model
 * step with its tokens as parameters and a step per tool call inside it, failed when the tool
 * answered an error; every other step as one line, failed when a call or the model failed there.
 */
async function recordSteps(run: AllureRun): Promise<void> {
  // One step holds them: beside the test's own steps (the harness's iterations), they read as the trajectory they are.
  await allure.step(TRAJECTORY_STEP, async () => {
    for (const step of trajectorySteps(run.trace, run.task, 0)) {
      const failed = new Set(step.extra?.failed_tool_calls);
      const name = stepName(step);
      if (step.source !== 'agent') {
        await allure.logStep(name, failed.size > 0 || step.extra?.error ? Status.FAILED : Status.PASSED);
        continue;
      }
      await allure.step(name, async (context) => {
        if (step.metrics?.prompt_tokens !== undefined) await context.parameter('prompt tokens', String(step.metrics.prompt_tokens));
        if (step.metrics?.completion_tokens !== undefined) await context.parameter('completion tokens', String(step.metrics.completion_tokens));
        for (const call of step.tool_calls ?? []) await allure.logStep(cut(`${call.function_name}(${JSON.stringify(call.arguments)})`), failed.has(call.tool_call_id) ? Status.FAILED : Status.PASSED);
      });
    }
  });
}

/** `3. agent: navigate, click` for a model step that only called tools; else its words' first line. */
function stepName(step: Step): string {
  const words = step.message.split('\n', 1)[0] || (step.tool_calls ?? []).map((call) => call.function_name).join(', ');
  return cut(`${step.step_id}. ${step.source}: ${words}`);
}

const cut = (text: string) => (text.length > STEP_NAME_CHARS ? `${text.slice(0, STEP_NAME_CHARS - 1)}…` : text);
