// A browser agent on the Vercel AI SDK: `generateText` runs the tool loop, the tools act on a
// Playwright page. It is a function: give it the task, a page, and an OpenAI-compatible model.
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, hasToolCall, stepCountIs, tool } from 'ai';
import type { Page } from 'playwright';
import { z } from 'zod';

export interface AiSdkAgentInput {
  task: string;
  page: Page;
  model: { baseURL: string; apiKey: string };
  signal?: AbortSignal;
}

export interface Outcome {
  success: boolean;
  summary: string;
}

const INSTRUCTIONS =
  'You are a careful browser assistant. Inspect the page with page_snapshot, act with open_url and click_element, ' +
  'and always end by calling report_outcome; report success only for what the page shows you did.';

function browserTools(page: Page) {
  const landed = async () => ({ url: page.url(), title: await page.title() });
  return {
    open_url: tool({
      description: 'Open a web address in the browser.',
      inputSchema: z.object({ url: z.string().describe('an absolute http(s) address') }),
      execute: async ({ url }) => {
        await page.goto(url);
        return landed();
      },
    }),
    click_element: tool({
      description: 'Click the first element matching a CSS selector, and wait for the page to load.',
      inputSchema: z.object({ selector: z.string() }),
      execute: async ({ selector }) => {
        await page.locator(selector).first().click();
        await page.waitForLoadState('load');
        return landed();
      },
    }),
    page_snapshot: tool({
      description: "The HTML of the page's main content, with where the browser is.",
      inputSchema: z.object({}),
      execute: async () => ({
        ...(await landed()),
        html: await page.evaluate(() => (document.querySelector('main, #hnmain') ?? document.body).outerHTML.slice(0, 40_000)),
      }),
    }),
    report_outcome: tool({
      description: 'Finish: say whether the task is done, and what happened.',
      inputSchema: z.object({ success: z.boolean(), summary: z.string() }),
      execute: async (outcome) => outcome,
    }),
  };
}

export async function aiSdkAgent({ task, page, model, signal }: AiSdkAgentInput): Promise<Outcome> {
  const openai = createOpenAI({ baseURL: model.baseURL, apiKey: model.apiKey });
  const result = await generateText({
    model: openai.chat(process.env.OPENAI_MODEL ?? 'gpt-4o-mini'),
    system: INSTRUCTIONS,
    prompt: task,
    tools: browserTools(page),
    stopWhen: [stepCountIs(12), hasToolCall('report_outcome')],
    abortSignal: signal,
  });
  const report = result.steps.flatMap((step) => step.toolCalls).findLast((call) => call.toolName === 'report_outcome');
  if (!report) return { success: false, summary: `Stopped without reporting: ${result.text || result.finishReason}.` };
  return report.input as Outcome;
}
