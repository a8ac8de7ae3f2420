import { expect, test } from '@playwright/test';
import { releaseIdentity, runIdentity } from '../src/agents/sandbox-identity.ts';

test('sandboxes open at once in one worker (trials) never share a uid; a closed one gives its uid back, taken last', () => {
  test.skip((process.getuid?.() ?? 0) !== 0, 'run uids are given as root only');
  // 64 a worker, those of its test browsers among them while they run (browser-sandbox.ts holds one a launcher for the worker's life).
  const open: ReturnType<typeof runIdentity>[] = [];
  for (let error: unknown; error === undefined && open.length <= 64; ) {
    try {
      open.push(runIdentity());
    } catch (refused) {
      error = refused;
      // One more at once would share a uid with an open one: refused, in one line.
      expect((refused as Error).message).toBe('a worker runs at most 64 sandboxes at once, each as a uid of its own: keep fewer trials in flight in one test');
    }
  }
  expect(open.length).toBeGreaterThan(60);
  expect(new Set(open.map((identity) => identity.uid)).size).toBe(open.length);
  expect(open.every((identity) => identity.own && identity.gid === identity.uid)).toBe(true);
  releaseIdentity(open[10]!);
  expect(runIdentity().uid).toBe(open[10]!.uid);
  for (const identity of open) releaseIdentity(identity);
  // Slots go round: the next is not the one just given back.
  const after = runIdentity();
  expect(after.uid).not.toBe(open[10]!.uid);
  releaseIdentity(after);
});
