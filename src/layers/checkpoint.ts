import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { z } from 'zod';
import type { RunView } from '../harness/context.ts';
import { defineLayer } from '../harness/layer.ts';
import { contextWindow, messageCounter, promptTokens } from '../harness/tokens.ts';
import type { ChatMessage } from '../core/model.ts';
import { defineTool, ToolError } from '../tools/registry.ts';

export const checkpointOptions = z
  .object({
    /** Where each run gets its own folder of checkpoint files; by default `checkpoints/` in the run's output folder. */
    dir: z.string().min(1).optional(),
    /** The share of the context window at which the conversation is saved and restarted. */
    threshold: z.number().gt(0).max(1).default(0.8),
    /** The model's context window in tokens (default: the known window of the run's model). */
    window: z.number().int().positive().optional(),
  })
  .strict();

/** How much of each call and outcome the summary quotes. */
const QUOTE = 100;

/**
 * Long runs that forget nothing: when the prompt reaches `threshold` of the context window, the
 * whole conversation goes to a numbered checkpoint file (secrets redacted), and the model goes on
 * from the system prompt, the task, a list of the tool calls so far with their outcomes, and its
 * latest turn (without which it would repeat the call that filled the window). The
 * `read_checkpoint` tool reads the saved messages back.
 */
export const checkpoint = defineLayer({
  name: 'checkpoint',
  options: checkpointOptions,
  create({ dir, threshold, window }, { outputDir }) {
    const folder = dir ?? join(outputDir, 'checkpoints');
    return {
      tools: (run, tools) => [...tools, readCheckpoint(run)],
      async beforeModel(run) {
        const tokens = promptTokens(run.messages, await messageCounter(run.model.id));
        if (tokens < threshold * (window ?? contextWindow(run.model.id))) return;
        const latest = run.messages.findLastIndex((message) => message.role === 'assistant');
        // Something to save: at least one message besides a previous summary before the latest turn.
        if (latest - 2 < 2) return;
        const n = checkpointsOf(run).length + 1;
        const file = join(await runFolder(run, folder), `checkpoint-${run.attempt}-${n}.json`);
        await writeFile(file, JSON.stringify(run.redact({ attempt: run.attempt, n, messages: run.messages }), null, 2));
        run.record({ type: 'harness_checkpoint', file, messages: run.messages.length });
        const summary = `[harness] To free the context window, the conversation so far (${run.messages.length} messages) was saved as checkpoint ${n}; read_checkpoint({ n: ${n}, from, count }) returns its messages. Tool calls so far:\n${callsSoFar(run)}`;
        run.replaceMessages([...run.messages.slice(0, 2), { role: 'user', content: summary }, ...run.messages.slice(latest)]);
      },
    };
  },
});

function readCheckpoint(run: RunView) {
  return defineTool({
    name: 'read_checkpoint',
    effect: 'read',
    description: 'Messages of a saved checkpoint of this conversation: `count` (default 10) from index `from` (default 0).',
    parameters: z.object({
      n: z.number().int().min(1),
      from: z.number().int().min(0).optional(),
      count: z.number().int().min(1).max(50).optional(),
    }),
    async execute({ n, from = 0, count = 10 }) {
      const saved = checkpointsOf(run);
      const event = saved[n - 1];
      if (!event) throw new ToolError(saved.length === 0 ? 'no checkpoint has been saved' : `no checkpoint ${n}: there are ${saved.length}`);
      const { messages } = JSON.parse(await readFile(event.file, 'utf8')) as { messages: ChatMessage[] };
      return { checkpoint: n, total: messages.length, from, messages: messages.slice(from, from + count) };
    },
  });
}

/** This attempt's checkpoints, numbered from 1: the trace is the layer's memory. */
function checkpointsOf(run: RunView) {
  return run.trace.of('harness_checkpoint').filter((event) => event.attempt === run.attempt);
}

/** One folder per run, so parallel runs never overwrite each other's numbered files. */
async function runFolder(run: RunView, dir: string): Promise<string> {
  const first = run.trace.of('harness_checkpoint')[0];
  if (first) return dirname(first.file);
  await mkdir(dir, { recursive: true });
  return mkdtemp(join(dir, 'run-'));
}

/** "3. click {"selector":"#save"} → ok {"clicked":…}": this attempt's calls, from the (redacted) trace. */
function callsSoFar(run: RunView): string {
  const results = new Map(run.trace.of('tool_result').filter((event) => event.attempt === run.attempt).map((event) => [event.callId, event]));
  const calls = run.trace.of('tool_call').filter((event) => event.attempt === run.attempt);
  return calls
    .map((call, index) => {
      const result = results.get(call.callId);
      const outcome = result?.ok ? `ok ${JSON.stringify(result.output).slice(0, QUOTE)}` : `error: ${(result?.error ?? 'no result').slice(0, QUOTE)}`;
      return `${index + 1}. ${call.name} ${call.arguments.slice(0, QUOTE)} → ${outcome}`;
    })
    .join('\n');
}
