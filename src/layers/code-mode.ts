import { z } from 'zod';
import type { SiteProgramApi } from '../core/site.ts';
import type { RunView } from '../harness/context.ts';
import { defineLayer } from '../harness/layer.ts';
import { defineTool, type Tool, type ToolOutput } from '../tools/registry.ts';
import { runProgram, type Dsl } from '../tools/sandbox.ts';
import { inOrder } from '../queue.ts';

const MiB = 1024 * 1024;
/** Beyond the program's own limit, the time its tool call may take to end it and report the timeout. */
const REPORT_GRACE_MS = 2000;

export const codeModeOptions = z
  .object({
    timeoutMs: z.int().positive().default(10_000),
    memoryBytes: z.int().min(MiB).max(1024 * MiB).default(32 * MiB),
    /** On a failed program: `continue` shows the model the error, `stop` ends the run (stopReason `error`). */
    onError: z.enum(['continue', 'stop']).default('continue'),
  })
  .strict();

/**
 * Code mode: the model is offered one tool, `run_program`, and writes a program that drives the
 * browser through a small API, so a loop over thirty stories is one model call instead of thirty.
 * The browser tools stay in the registry, hidden from the model, and every API call the program
 * makes is a tool call through `run.callTool`: the other layers (permissions, approval, output)
 * and the trace see it as they see the model's own, with the id `<program call id>.<n>`, marked as
 * the program's. A direct call of a hidden tool by the model is refused; each of the program's
 * calls ends by the program's deadline.
 */
export const codeMode = defineLayer({
  name: 'code-mode',
  options: codeModeOptions,
  create({ timeoutMs, memoryBytes, onError }) {
    return {
      tools(run, offered) {
        const runProgramTool = defineTool({
          name: 'run_program',
          effect: 'act',
          description: describeApi(timeoutMs, run.site?.program),
          parameters: z.object({ source: z.string().min(1).describe('the body of an async JavaScript function') }),
          timeoutMs: timeoutMs + REPORT_GRACE_MS,
          async execute({ source }, call) {
            // The registry always passes the call: its id names the program's own calls.
            const id = call!.id;
            const deadline = Date.now() + timeoutMs;
            // Each host call (a tool call) ends by the program's deadline, so none outlives the program.
            const result = await runProgram(source, api(run, id, deadline), { timeoutMs, memoryBytes, hostCallMs: timeoutMs });
            if (!result.ok && onError === 'stop') run.stop('error', `run_program ${id} failed: ${result.error}`);
            return result;
          },
        });
        return [...offered.map((tool): Tool => ({ ...tool, hidden: true })), runProgramTool];
      },
    };
  },
});

/**
 * The program's API over the browser tools. Calls run one at a time in the order made (a program
 * that does not await still never has two actions on the page at once); a failed call, denied or
 * not, throws in the program with the reason.
 */
function api(run: RunView, programCallId: string, deadline: number): Dsl {
  let made = 0;
  const inTurn = inOrder();
  const call = (name: string, args: Record<string, unknown>): Promise<ToolOutput> => {
    const id = `${programCallId}.${++made}`;
    return inTurn(async () => {
      const outcome = await run.callTool({ id, name, arguments: JSON.stringify(args) }, { by: 'program', withinMs: deadline - Date.now() });
      if (!outcome.ok) throw new Error(outcome.error);
      return outcome.output;
    });
  };
  const program = run.site?.program;
  const site = program && {
    [program.name]: Object.fromEntries(
      Object.entries(program.functions).map(([name, { tool, field }]) => [
        name,
        async (args?: unknown) => {
          const output = await call(tool, (args ?? {}) as Record<string, unknown>);
          return field === undefined ? output : output[field];
        },
      ]),
    ),
  };
  return {
    ...site,
    browser: {
      navigate: (url) => call('navigate', { url }),
      click: (selector) => call('click', { selector }),
      fill: (selector, value) => call('fill', { selector, value }),
      text: async () => (await call('get_text', {})).text,
      url: async () => (await call('current_url', {})).url,
      hasClass: async (selector, className) => (await call('has_class', { selector, className })).present,
    },
    finish: async (success, summary, answer) => {
      // Sent as JSON: an answer left out stays out.
      await call('finish', { success, summary, answer });
    },
  };
}

function describeApi(timeoutMs: number, program: SiteProgramApi | undefined): string {
  const siteFunctions = Object.entries(program?.functions ?? {}).map(([name, { describe }]) => `  ${program!.name}.${name}() ${describe}`);
  return [
    'Run a JavaScript program: the body of an async function, so use `await` and `return` a value.',
    'It runs in a sandbox with no network, modules, files or timers, and drives the browser only through these functions, each returning a promise:',
    ...siteFunctions,
    '  browser.navigate(url) → { url, status, title }',
    '  browser.click(selector) → { clicked, url, title }; waits for any navigation',
    '  browser.fill(selector, value)',
    '  browser.text() → the visible text of the page',
    '  browser.url() → the current URL',
    '  browser.hasClass(selector, className) → true or false',
    '  finish(success, summary, answer?): report the outcome of the task; success=true only if it is done; when the task asks a question, answer is the answer alone',
    '  log(...values): lines returned with the result',
    `A call that fails throws an Error saying why. The answer is { ok: true, value, log } or { ok: false, error, log }. Time limit: ${timeoutMs} ms.`,
  ].join('\n');
}
