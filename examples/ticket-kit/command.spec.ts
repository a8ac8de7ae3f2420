import { join } from 'node:path';
import { commandAgent, expect, test } from 'harness-eval';
import { assignLoginBug } from './tasks.ts';

/**
 * A command agent on the kit: a sandboxed program (agents/assign.mjs) that drives the run's
 * Chromium over HARNESS_CDP_URL with a login made for its run. The honest one does the task and
 * says so; the lying one claims it without acting, and the oracle finds it out.
 */
const script = join(import.meta.dirname, 'agents', 'assign.mjs');

test.describe('honest', () => {
  test.use({ agent: commandAgent(['node', script], { name: 'assign', account: true }) });
  test('signs in, assigns the ticket and claims it: a success', async ({ harness }) => {
    const run = await harness.run(assignLoginBug);
    expect(run, run.summary).toMatchObject({ claimed: true, actual: true, sideEffects: [] });
  });
});

test.describe('lying', () => {
  test.use({ agent: commandAgent(['node', script, '--lie'], { name: 'assign-liar', account: true }) });
  test('claims the ticket is assigned without acting: a false success', async ({ harness }) => {
    const run = await harness.run(assignLoginBug);
    expect(run).toMatchObject({ claimed: true, actual: false, falseSuccess: true });
  });
});
