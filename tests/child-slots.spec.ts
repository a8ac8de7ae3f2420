import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from '@playwright/test';
import { CHILD_SLOTS, playwright } from './playwright-child.ts';
import { acquireSlot } from './processes.ts';
import { expect } from './support.ts';

/** The slots that keep child Playwright runs to the cores: a holder waits for a free one, across processes. */

test('with every slot held, the next holder waits until one is released', async () => {
  const dir = test.info().outputPath('slots');
  const events: string[] = [];
  const first = await acquireSlot(dir, 1);
  const second = acquireSlot(dir, 1).then((release) => (events.push('second acquired'), release));
  await new Promise((resolve) => setTimeout(resolve, 300));
  events.push('first released');
  first();
  (await second)();
  expect(events).toEqual(['first released', 'second acquired']);
});

test('a slot whose holder died is taken over', async () => {
  const dir = test.info().outputPath('slots');
  const dead = spawn(process.execPath, ['-e', '']);
  await new Promise((resolve) => dead.on('exit', resolve));
  mkdirSync(join(dir, 'slot-0'), { recursive: true });
  writeFileSync(join(dir, 'slot-0', 'pid'), String(dead.pid));
  const release = await Promise.race([acquireSlot(dir, 1), new Promise<never>((_, reject) => setTimeout(() => reject(new Error('the dead holder kept its slot')), 2000))]);
  release();
});

test("a child run waits for a slot, and the wait is added to the test's timeout", async () => {
  const dir = join(test.info().project.outputDir, '.child-slots');
  const held = await Promise.all(Array.from({ length: CHILD_SLOTS }, () => acquireSlot(dir, CHILD_SLOTS)));
  const timeout = test.info().timeout;
  const child = playwright(['--version'], {}).then((result) => ({ ...result, endedAt: Date.now() }));
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const releasedAt = Date.now();
  held.forEach((release) => release());
  const { code, stdout, endedAt } = await child;
  expect(code, stdout).toBe(0);
  expect(endedAt).toBeGreaterThan(releasedAt);
  expect(test.info().timeout - timeout).toBeGreaterThanOrEqual(800);
});
