import { expect, test } from '@playwright/test';
import { atMost } from '../src/queue.ts';

test('atMost(n) runs at most n pieces of work at once, starts the others in call order as those end, and a rejection frees its place', async () => {
  const pooled = atMost(2);
  let running = 0;
  let most = 0;
  const started: number[] = [];
  const work = (i: number) =>
    pooled(async () => {
      started.push(i);
      most = Math.max(most, ++running);
      await new Promise((resolve) => setTimeout(resolve, 5));
      running--;
      if (i === 1) throw new Error('one failed');
      return i;
    });
  const results = await Promise.allSettled([0, 1, 2, 3, 4].map(work));
  expect(most).toBe(2);
  expect(started).toEqual([0, 1, 2, 3, 4]);
  expect(results.map((result) => (result.status === 'fulfilled' ? result.value : (result.reason as Error).message))).toEqual([0, 'one failed', 2, 3, 4]);
});
