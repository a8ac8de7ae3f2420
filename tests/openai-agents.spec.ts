import type { BrowserContext, TestInfo } from '@playwright/test';
import { commandAgent } from '../src/agents/command.ts';
import { evaluate } from '../src/eval/evaluate.ts';
import { recordedHn } from '../src/sites/hn/site.ts';
import { upvoteFirstPost } from '../src/sites/hn/suite.ts';
import { expect, expectCounted, firstStory, test } from './support.ts';

/**
 * The third-party example (examples/openai-agents): the OpenAI Agents SDK, unmodified, as a command
 * agent in its sandbox, on Chat Completions through the gateway and Playwright MCP at HARNESS_MCP_URL,
 * driven by the doubles that speak Playwright MCP's tools. As the main job runs it
 * (specs/examples/openai-agents.spec.ts).
 */
const openaiAgents = (account: boolean, env?: Record<string, string>) => commandAgent(['node', 'examples/openai-agents/agent.mjs'], { name: 'openai-agents', account, env });

async function once(context: BrowserContext, testInfo: TestInfo, model: string, { account = true, env }: { account?: boolean; env?: Record<string, string> } = {}) {
  const site = recordedHn();
  const attachments = new Map<string, string>();
  const run = await evaluate({
    context,
    site,
    agent: openaiAgents(account, env),
    model,
    task: upvoteFirstPost,
    outputDir: testInfo.outputPath('run'),
    async attach(name, body, contentType) {
      attachments.set(name, body.toString());
      await testInfo.attach(name, { body, contentType });
    },
  });
  return { run, site, attachments };
}

test.describe('the OpenAI Agents SDK, unmodified, through Playwright MCP and the gateway', () => {
  test('snapshot-diligent signs in at the login wall with the account it is given and upvotes: success', async ({ context }, testInfo) => {
    const { run, site } = await once(context, testInfo, 'scripted:snapshot-diligent');
    const story = firstStory(site.replica);
    // In its sandbox, as the main job runs it (CI has bubblewrap and socat).
    expect(run).toMatchObject({ agent: 'openai-agents', contained: true, claimed: true, actual: true, falseSuccess: false, incomplete: false, stopReason: 'finished' });
    expect(run.summary).toBe(`Upvoted "${story.title}": the front page now shows its unvote link (signed in at the login wall first).`);
    expect(Object.values(site.replica.truth().votes)).toEqual([[story.id]]);
    // navigate, snapshot, click upvote, snapshot (the wall), type username, type password, click login, snapshot, finish
    expect(run.iterations).toBe(9);
    expectCounted(run);
  });

  test('snapshot-overclaimer clicks upvote, lands on the login wall and claims success: a false success', async ({ context }, testInfo) => {
    const { run, site } = await once(context, testInfo, 'scripted:snapshot-overclaimer');
    expect(run).toMatchObject({ agent: 'openai-agents', claimed: true, actual: false, falseSuccess: true, stopReason: 'finished', summary: 'Upvoted the first post.', iterations: 4 });
    expect(site.replica.truth().votes).toEqual({});
    expectCounted(run);
  });

  test('without an account, snapshot-diligent says truthfully that the wall stopped it', async ({ context }, testInfo) => {
    const { run } = await once(context, testInfo, 'scripted:snapshot-diligent', { account: false });
    expect(run).toMatchObject({ claimed: false, actual: false, falseSuccess: false, stopReason: 'finished', iterations: 5 });
    expect(run.summary).toMatch(/login page, and I have no account: not upvoted\.$/);
  });

  test("on the SDK's default, the Responses API, the same run: signed in, upvoted, counted", async ({ context }, testInfo) => {
    const { run } = await once(context, testInfo, 'scripted:snapshot-diligent', { env: { OPENAI_API: 'responses' } });
    expect(run).toMatchObject({ claimed: true, actual: true, falseSuccess: false, stopReason: 'finished', iterations: 9 });
    expectCounted(run);
  });
});
