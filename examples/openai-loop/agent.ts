// A browser agent as many start one: the `openai` SDK's tool calling, Playwright, and a loop.
// Configuration comes from the environment: HARNESS_TASK (what to do), HARNESS_CDP_URL (a
// Chromium to drive), OPENAI_BASE_URL / OPENAI_API_KEY / OPENAI_MODEL (the model), and
// HARNESS_CLAIM_FILE (where the outcome goes, as JSON).
import { writeFileSync } from 'node:fs';
import OpenAI from 'openai';
import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import { chromium, type Page } from 'playwright';

const MAX_STEPS = 15;
const PAGE_LIMIT = 30_000;

interface Outcome {
  success: boolean;
  summary: string;
}

interface AgentTool {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
  execute(args: Record<string, unknown>, page: Page): Promise<unknown>;
}

const str = (description: string) => ({ type: 'string', description });

const tools: AgentTool[] = [
  {
    name: 'goto',
    description: 'Load a web address in the browser tab.',
    parameters: { type: 'object', properties: { url: str('absolute http(s) address') }, required: ['url'] },
    async execute({ url }, page) {
      await page.goto(String(url));
      return { url: page.url(), title: await page.title() };
    },
  },
  {
    name: 'click',
    description: 'Click an element of the current page, found by CSS selector.',
    parameters: { type: 'object', properties: { selector: str('CSS selector') }, required: ['selector'] },
    async execute({ selector }, page) {
      await page.locator(String(selector)).first().click();
      await page.waitForLoadState('load');
      return { url: page.url(), title: await page.title() };
    },
  },
  {
    name: 'page_html',
    description: 'The HTML of the current page body (scripts removed, cut to a limit).',
    parameters: { type: 'object', properties: {} },
    async execute(_args, page) {
      const html = await page.evaluate(() => {
        const body = document.body.cloneNode(true) as HTMLElement;
        body.querySelectorAll('script, style').forEach((node) => node.remove());
        return body.innerHTML;
      });
      return { url: page.url(), html: html.slice(0, PAGE_LIMIT) };
    },
  },
  {
    name: 'done',
    description: 'Stop and report. Set success to true only when the task is complete.',
    parameters: {
      type: 'object',
      properties: { success: { type: 'boolean' }, summary: str('what happened, in a sentence') },
      required: ['success', 'summary'],
    },
    async execute() {
      return 'reported';
    },
  },
];

const SYSTEM = [
  'You operate a web browser through tools to carry out what the user asks.',
  'Look at the page before you act; when you are finished, or stuck, call done.',
].join(' ');

function env(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
}

async function run(task: string, page: Page): Promise<Outcome> {
  const client = new OpenAI({ baseURL: process.env.OPENAI_BASE_URL, apiKey: env('OPENAI_API_KEY') });
  const offered: ChatCompletionTool[] = tools.map(({ name, description, parameters }) => ({ type: 'function', function: { name, description, parameters } }));
  const messages: ChatCompletionMessageParam[] = [
    { role: 'system', content: SYSTEM },
    { role: 'user', content: task },
  ];
  for (let step = 1; step <= MAX_STEPS; step++) {
    const completion = await client.chat.completions.create({ model: process.env.OPENAI_MODEL ?? 'gpt-4o-mini', messages, tools: offered });
    const reply = completion.choices[0]!.message;
    messages.push(reply);
    const calls = (reply.tool_calls ?? []).filter((call) => call.type === 'function');
    if (calls.length === 0) return { success: false, summary: reply.content ?? 'The model stopped without reporting.' };
    for (const call of calls) {
      const args = JSON.parse(call.function.arguments || '{}') as Record<string, unknown>;
      console.log(`step ${step}: ${call.function.name} ${call.function.arguments}`);
      if (call.function.name === 'done') return { success: args.success === true, summary: String(args.summary ?? '') };
      const tool = tools.find((candidate) => candidate.name === call.function.name);
      let result: unknown;
      try {
        result = tool ? await tool.execute(args, page) : { error: `no tool named ${call.function.name}` };
      } catch (error) {
        result = { error: error instanceof Error ? error.message.split('\n')[0] : String(error) };
      }
      messages.push({ role: 'tool', tool_call_id: call.id, content: JSON.stringify(result) });
    }
  }
  return { success: false, summary: `Gave up after ${MAX_STEPS} steps.` };
}

const browser = await chromium.connectOverCDP(env('HARNESS_CDP_URL'));
try {
  const context = browser.contexts()[0] ?? (await browser.newContext());
  const page = context.pages()[0] ?? (await context.newPage());
  const outcome = await run(env('HARNESS_TASK'), page);
  writeFileSync(env('HARNESS_CLAIM_FILE'), JSON.stringify(outcome));
  console.log(`claimed ${outcome.success ? 'success' : 'failure'}: ${outcome.summary}`);
} finally {
  await browser.close();
}
