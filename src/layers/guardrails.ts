import { counted } from '../report/format.ts';
import { z } from 'zod';
import { defineLayer } from '../harness/layer.ts';
import { keepRecent } from '../harness/messages.ts';

export const guardrailsOptions = z
  .object({
    maxIterations: z.number().int().positive().default(15),
    /** Past this many messages the conversation is compacted (see `compaction`). */
    maxMessages: z.number().int().min(6).default(50),
    /**
     * How: `half` keeps the system prompt, the task, a note of the calls made and the last half;
     * `trim-context` is seed 000's trimContext: the system prompt, the task and the last two messages.
     */
    compaction: z.enum(['half', 'trim-context']).default('half'),
    /** The run's wall clock, less its model waits (a slot, a rate limit): checked before each model call, and no tool call outlasts it. */
    maxWallMs: z.number().positive().optional(),
    /** The most one tool call may take (the harness's default is 30 s). */
    toolTimeoutMs: z.number().int().positive().optional(),
    maxTokens: z.number().int().positive().optional(),
  })
  .strict();

/** Budgets that end a run before it runs away: iterations, wall clock (tool calls included), tokens; and compaction. */
export const guardrails = defineLayer({
  name: 'guardrails',
  options: guardrailsOptions,
  create({ maxIterations, maxMessages, compaction, maxWallMs, maxTokens, toolTimeoutMs }) {
    return {
      beforeModel(run) {
        if (toolTimeoutMs !== undefined) run.limits.callMs = toolTimeoutMs;
        if (maxWallMs !== undefined) run.limits.deadline = run.startedAt + maxWallMs;
        if (run.attemptIterations >= maxIterations) return run.stop('max_iterations', `reached ${counted(maxIterations, 'iteration')}`);
        const elapsed = run.agentMs();
        if (maxWallMs !== undefined && elapsed > maxWallMs) return run.stop('budget', `wall clock ${elapsed} ms over ${maxWallMs} ms`);
        // With a count unknown, the usable ones are a floor: a budget they exceed is exceeded.
        const tokens = run.knownTokens.input + run.knownTokens.output;
        if (maxTokens !== undefined && tokens > maxTokens) return run.stop('budget', `${tokens} tokens over ${maxTokens}`);
        if (run.messages.length > maxMessages) {
          const before = run.messages.length;
          const kept = keepRecent(run.messages, compaction === 'trim-context' ? 2 : Math.floor(maxMessages / 2));
          if (compaction === 'half') {
            const calls = run.trace.of('tool_call').map((event) => event.name);
            const counts = [...new Set(calls)].map((name) => `${name} ×${calls.filter((call) => call === name).length}`);
            kept.messages.splice(2, 0, {
              role: 'user',
              content: `[harness] ${kept.dropped} earlier messages were removed to save context. Tool calls so far: ${counts.join(', ') || 'none'}.`,
            });
          }
          run.replaceMessages(kept.messages);
          run.record({ type: 'harness_compaction', layer: 'guardrails', before, after: kept.messages.length });
        }
      },
    };
  },
});
