import type { TestInfo } from '@playwright/test';
import * as allure from 'allure-js-commons';
import { transcript } from '../harness/transcript.ts';
import type { TraceEvent } from '../core/trace.ts';

interface AllureRun {
  task: string;
  model: string;
  layers: string;
  site: string;
  trace: TraceEvent[];
}

/** When allure-playwright is a reporter: the run's cell as parameters and labels, its trace and transcript attached. */
export async function recordInAllure(testInfo: TestInfo, run: AllureRun): Promise<void> {
  if (!testInfo.config.reporter.some(([name]) => name.includes('allure-playwright'))) return;
  for (const key of ['task', 'model', 'layers', 'site'] as const) {
    await allure.parameter(key, run[key]);
    await allure.label(key, run[key]);
  }
  await allure.attachment('harness trace', JSON.stringify(run.trace, null, 2), 'application/json');
  await allure.attachment('transcript', transcript(run.trace), 'text/plain');
}
