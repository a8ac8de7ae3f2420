import { mkdirSync } from 'node:fs';
import { upvoteFirstPost } from '../src/sites/hn/suite.ts';
import { evaluate, INTERRUPTED_DETAIL } from '../src/eval/evaluate.ts';
import { recordedHn } from '../src/sites/hn/site.ts';
import { commandAgent } from '../src/agents/command.ts';
import { functionAgent } from '../src/agents/function.ts';
import { ModelError, type Model } from '../src/models/types.ts';
import { expect, runAgent, test, turnsDouble } from './support.ts';

test('a site that stops answering after the run keeps the run, unjudged and excluded as an error, saying why', async ({ context }) => {
  const site = recordedHn();
  let snapshots = 0;
  const failing = { ...site, snapshot: () => (snapshots++ === 0 ? site.snapshot() : Promise.reject(new Error('the site is gone'))) };
  const { model } = turnsDouble([[{ name: 'finish', arguments: JSON.stringify({ success: true, summary: 'Upvoted it.' }) }]]);
  const record = await evaluate({ context, site: failing, model, layers: [], task: upvoteFirstPost });
  expect(record).toMatchObject({ claimed: true, incomplete: true, judged: false, actual: false, stopReason: 'error', verdicts: [] });
  expect(record.summary).toBe('Upvoted it.; the site could not be judged after the run: the site is gone');
  // The site failed, not the agent: the run is counted apart, never in a rate.
  expect(record.excluded).toEqual({ reason: 'error', detail: 'the site could not be judged after the run: the site is gone' });
});

test.describe('a run that errors before its agent did anything is excluded as an error; one that errors after acting is judged', () => {
  const before = (summary: string, stopReason = 'error') => ({ reason: 'error', detail: `the run ended in ${stopReason} before the agent did any work (no model call answered, no request to the site): ${summary}` });

  test('a command agent whose script is not there (python3 agents/nothere.py): excluded, not a truthful failure', async ({ context }, testInfo) => {
    const cwd = testInfo.outputPath('project');
    mkdirSync(cwd, { recursive: true });
    const { result } = await runAgent(context, testInfo, commandAgent(['python3', 'agents/nothere.py'], { cwd }));
    expect(result).toMatchObject({ claimed: false, stopReason: 'error', iterations: 0, judged: true, actual: false });
    expect(result.excluded).toEqual(before('claimed nothing: exited with code 2 and wrote no claim file'));
  });

  test('a command agent that reads the site, asks the model or connects to its browser, then exits non-zero without a claim: judged, not excluded', async ({ context }, testInfo) => {
    const exitsAfter = (source: string) => commandAgent([process.execPath, '-e', `(async () => { ${source}; process.exit(3); })()`]);
    const read = await runAgent(context, testInfo, exitsAfter(`await fetch(process.env.HARNESS_SITE_URL + '/news')`));
    expect(read.result).toMatchObject({ stopReason: 'error', judged: true, summary: 'claimed nothing: exited with code 3 and wrote no claim file' });
    expect(read.result.excluded).toBeUndefined();
    const asked = await runAgent(
      context,
      testInfo,
      exitsAfter(`await fetch(process.env.OPENAI_BASE_URL + '/chat/completions', { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer ' + process.env.OPENAI_API_KEY }, body: JSON.stringify({ model: 'any', messages: [{ role: 'user', content: 'hi' }] }) })`),
    );
    expect(asked.result).toMatchObject({ stopReason: 'error', iterations: 1 });
    expect(asked.result.excluded).toBeUndefined();
    // A CDP client that connected to its browser has acted too, before any page it opens.
    const connected = await runAgent(context, testInfo, exitsAfter(`await fetch(process.env.HARNESS_CDP_URL + '/json/version')`));
    expect(connected.result).toMatchObject({ stopReason: 'error', judged: true });
    expect(connected.result.excluded).toBeUndefined();
  });

  test('a function agent that throws at once is excluded; one that loads its page first is judged', async ({ context }, testInfo) => {
    const atOnce = await runAgent(context, testInfo, functionAgent(async () => Promise.reject(new Error('no such module')), { name: 'throws' }));
    expect(atOnce.result.excluded).toEqual(before('claimed nothing: the agent failed: no such module'));
    const afterPage = await runAgent(
      context,
      testInfo,
      functionAgent(
        async ({ page, site }) => {
          await page.goto(`${site.origin}/news`);
          throw new Error('lost');
        },
        { name: 'loads-then-throws' },
      ),
    );
    expect(afterPage.result).toMatchObject({ stopReason: 'error', judged: true });
    expect(afterPage.result.excluded).toBeUndefined();
  });

  test("the built-in harness whose model's endpoint fails on the first call is excluded; one that failed after an answer is judged", async ({ context }) => {
    const down: Model = { id: 'test:down', chat: () => Promise.reject(new ModelError('network', 'connect ECONNREFUSED 127.0.0.1:9')) };
    const never = await evaluate({ context, site: recordedHn(), model: down, layers: [], task: upvoteFirstPost });
    expect(never).toMatchObject({ stopReason: 'model_error', iterations: 0 });
    expect(never.excluded).toEqual(before('connect ECONNREFUSED 127.0.0.1:9', 'model_error'));
    const { model: once } = turnsDouble([[{ name: 'navigate', arguments: JSON.stringify({ url: 'https://news.ycombinator.com/news' }) }]]);
    let calls = 0;
    const fails: Model = { id: 'test:fails-later', chat: (request) => (calls++ === 0 ? once.chat(request) : down.chat(request)) };
    const later = await evaluate({ context, site: recordedHn(), model: fails, layers: [], task: upvoteFirstPost });
    expect(later).toMatchObject({ stopReason: 'model_error', iterations: 1 });
    expect(later.excluded).toBeUndefined();
  });
});

test('a run the runner stopped (interrupted) is recorded, excluded as interrupted, whatever it had done', async ({ context }, testInfo) => {
  const controller = new AbortController();
  const agent = functionAgent(
    async ({ page, site, signal }) => {
      await page.goto(`${site.origin}/news`);
      controller.abort('interrupted');
      // It honours the stop: the run returns, and is still no outcome of the agent's.
      if (!signal.aborted) await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
      return { success: true, summary: 'stopped' };
    },
    { name: 'stopped' },
  );
  const { result } = await runAgent(context, testInfo, agent, { signal: controller.signal });
  expect(result).toMatchObject({ incomplete: true, judged: true, stopReason: 'error', claimed: true, summary: 'stopped' });
  expect(result.excluded).toEqual({ reason: 'interrupted', detail: INTERRUPTED_DETAIL });
});
