/**
 * `npm run bench:context`: prompt tokens per model call over a 15-iteration run of a model that
 * keeps re-reading the page (navigate, then get_text ×14 on the recorded front page, ~1,000 tokens
 * a read), with no layers and with `context` + `budget` on a small model's 2,048-token window.
 * Target: flat with the layers, the prompt of call 15 at most 1.5 × that of call 3, the first to
 * carry the page's text. Call 1 holds only the system prompt and the task (call 2 adds the
 * navigation), which no run that reads a page can stay near: its ratio is printed for reference.
 */
import { chromium, type Browser } from '@playwright/test';
import { upvoteFirstPost } from '../src/sites/hn/suite.ts';
import type { LayerValue } from '../src/harness/layer.ts';
import { messageCounter, promptTokens } from '../src/harness/tokens.ts';
import { budget } from '../src/layers/budget.ts';
import { context } from '../src/layers/context.ts';
import type { Model } from '../src/models/types.ts';
import { chromiumLaunchOptions } from '../src/playwright/chromium.ts';
import { evaluate } from '../src/eval/evaluate.ts';
import { HN_ORIGIN } from '../src/sites/hn/options.ts';
import { recordedHn } from '../src/sites/hn/site.ts';
// `scripted:<name>` resolves to HN's doubles once the shell registers them, as the fixtures do.
import '../src/playwright/doubles.ts';

const ITERATIONS = 15;
const KEEP_LAST = 8;
const WINDOW = 2048;
const TARGET = 1.5;
/** The first call whose prompt holds a page's text: the base of the target. */
const FIRST_READ = 3;

/** A model that navigates once and then reads the page on every turn; it records each prompt's size. */
async function reader(): Promise<{ model: Model; prompts: number[] }> {
  const id = 'scripted:reader';
  const count = await messageCounter(id);
  const prompts: number[] = [];
  const model: Model = {
    id,
    async chat({ messages }) {
      prompts.push(promptTokens(messages, count));
      const [name, args] = prompts.length === 1 ? ['navigate', { url: `${HN_ORIGIN}/news` }] : ['get_text', {}];
      return { message: { content: null, toolCalls: [{ id: `call${prompts.length}`, name, arguments: JSON.stringify(args) }] }, usage: { input: 0, output: 0 } };
    },
  };
  return { model, prompts };
}

async function promptsPerCall(browser: Browser, layers: LayerValue[]): Promise<number[]> {
  const { model, prompts } = await reader();
  const browserContext = await browser.newContext();
  await evaluate({ context: browserContext, site: recordedHn(), model, layers, task: upvoteFirstPost, maxIterations: ITERATIONS });
  await browserContext.close();
  return prompts;
}

const browser = await chromium.launch(chromiumLaunchOptions());
const bare = await promptsPerCall(browser, []);
const layered = await promptsPerCall(browser, [context({ keepLast: KEEP_LAST }), budget({ window: WINDOW })]);
await browser.close();

const ratio = (prompts: number[], base: number) => prompts[ITERATIONS - 1]! / prompts[base - 1]!;
const withLayers = `context(keepLast ${KEEP_LAST}) + budget(window ${WINDOW})`;
console.log(`prompt tokens per model call (characters ÷ 4): navigate, then get_text ×${ITERATIONS - 1} on the recorded front page`);
console.log(`call  ${'no layers'.padStart(10)}  ${withLayers}`);
for (let call = 1; call <= ITERATIONS; call++) console.log(`${String(call).padStart(4)}  ${String(bare[call - 1]).padStart(10)}  ${String(layered[call - 1]).padStart(withLayers.length)}`);
const flat = ratio(layered, FIRST_READ);
console.log(`no layers:   call ${ITERATIONS} / call ${FIRST_READ} = ${ratio(bare, FIRST_READ).toFixed(2)}`);
console.log(`with layers: call ${ITERATIONS} / call ${FIRST_READ} = ${flat.toFixed(2)} (target ≤ ${TARGET}: ${flat <= TARGET ? 'met' : 'NOT met'}); call ${ITERATIONS} / call 1 = ${ratio(layered, 1).toFixed(2)}`);
