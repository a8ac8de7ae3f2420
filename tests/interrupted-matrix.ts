import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { HARNESS_RUN_ATTACHMENT } from '../src/playwright/fixtures.ts';
import { runRecordSchema } from '../src/report/types.ts';
import { collect, playwright } from './playwright-child.ts';

/**
 * The matrix of tests/fixtures/resume/ until `inFlight` of the looker's runs wait, then interrupted
 * as Ctrl-C does (tests/interrupt.spec.ts, tests/resume.spec.ts): each test's status and runs.
 */
export async function interruptedMatrix(env: Record<string, string>, dir: string, inFlight = 2) {
  const stalled = join(dir, 'stalled');
  mkdirSync(stalled, { recursive: true });
  let poll: NodeJS.Timeout | undefined;
  const child = await playwright(['test', '-c', 'tests/fixtures/resume/playwright.config.ts'], { ...env, STALL_DIR: stalled }, (_stdout, kill) => {
    poll ??= setInterval(() => {
      if (readdirSync(stalled).length < inFlight) return;
      clearInterval(poll);
      kill('SIGINT');
    }, 100);
  });
  clearInterval(poll);
  const results = collect(JSON.parse(readFileSync(env.JSON_OUT!, 'utf8'))).map(({ title, project, result }) => ({
    title,
    project,
    status: result.status as string,
    runs: (result.attachments as Array<{ name: string; body?: string }>).filter((attachment) => attachment.name === HARNESS_RUN_ATTACHMENT).map((attachment) => runRecordSchema.parse(JSON.parse(Buffer.from(attachment.body!, 'base64').toString()))),
  }));
  return { child, results };
}
