import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from '@playwright/test';
import { modelServer } from './model-server.ts';
import { collect, playwright, workspace } from './playwright-child.ts';
import { expect } from './support.ts';

/**
 * A model endpoint's limit on calls at once holds across a run's workers: a child run of four
 * workers (tests/fixtures/endpoints). Apart from tests/endpoints.spec.ts, whose tests start no child,
 * so they run beside the other tests instead of in the child runs' one-worker lane.
 */

test('concurrency 1 and four Playwright workers calling one endpoint: it never sees two requests at once', async () => {
  test.setTimeout(180_000);
  const server = await modelServer({ delayMs: 150 }, async () =>
    Response.json({ id: 'c', object: 'chat.completion', created: 0, model: 'gpt-test', choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: 'ok' } }] }),
  );
  const { dir, env } = workspace('endpoints-');
  try {
    const child = await playwright(['test', '-c', 'tests/fixtures/endpoints/playwright.config.ts'], { ...env, MODEL_SERVER: server.url });
    const results = collect(JSON.parse(readFileSync(join(dir, 'results.json'), 'utf8')));
    expect(results.map((result) => result.result.status), child.stdout).toEqual(['passed', 'passed', 'passed', 'passed']);
    // The four tests ran in workers of their own, at once.
    expect(new Set(results.map((result) => result.result.parallelIndex)).size).toBe(4);
    expect(server.requests).toBe(12);
    expect(server.maxInFlight).toBe(1);
  } finally {
    await server.close();
  }
});
