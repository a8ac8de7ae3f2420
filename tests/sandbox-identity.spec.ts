import { expect, test } from '@playwright/test';
import { releaseIdentity, runIdentity } from '../src/agents/sandbox-identity.ts';

test('sandboxes open at once in one worker (trials) never share a uid; a closed one gives its uid back, taken last', () => {
  test.skip((process.getuid?.() ?? 0) !== 0, 'run uids are given as root only');
  const open = Array.from({ length: 64 }, () => runIdentity());
  expect(new Set(open.map((identity) => identity.uid)).size).toBe(64);
  expect(open.every((identity) => identity.own && identity.gid === identity.uid)).toBe(true);
  // A 65th at once would share a uid with an open one: refused, in one line.
  expect(() => runIdentity()).toThrow('a worker runs at most 64 sandboxes at once, each as a uid of its own: keep fewer trials in flight in one test');
  releaseIdentity(open[10]!);
  expect(runIdentity().uid).toBe(open[10]!.uid);
  for (const identity of open) releaseIdentity(identity);
  // Slots go round: the next is not the one just given back.
  const after = runIdentity();
  expect(after.uid).not.toBe(open[10]!.uid);
  releaseIdentity(after);
});
