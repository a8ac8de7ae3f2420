import { z } from 'zod';
import { defineLayer } from '../harness/layer.ts';
import { contextWindow, messageCounter, promptTokens, type MessageCounter } from '../harness/tokens.ts';
import type { ChatMessage } from '../core/model.ts';

export const budgetOptions = z
  .object({
    /** The model's context window in tokens (default: the known window of the run's model). */
    window: z.number().int().positive().optional(),
    /** The share of the window kept free for the model's reply. */
    reserve: z.number().min(0).lt(1).default(0.1),
  })
  .strict();

export const REMOVED_OUTPUT = '[tool output removed to fit the context window]';

/**
 * Keeps the prompt inside the model's context window. Before each model call it counts the prompt
 * with the model's tokenizer, records it (`harness_prompt_tokens`: the prompt tokens per
 * iteration), and when the prompt exceeds the window less the reserve, drops what is worth least
 * first: old tool outputs (stubbed, oldest first), then older copies of repeated identical calls,
 * then the oldest turns. Never the system prompt, the task or the latest turn; a tool result always
 * keeps the call it answers. Put it after any layer that trims, so it counts what the model gets.
 */
export const budget = defineLayer({
  name: 'budget',
  options: budgetOptions,
  create({ window, reserve }) {
    return {
      async beforeModel(run) {
        const size = window ?? contextWindow(run.model.id);
        const count = await messageCounter(run.model.id);
        const before = promptTokens(run.messages, count);
        const limit = Math.floor(size * (1 - reserve));
        if (before > limit) run.replaceMessages(fit(run.messages, count, limit));
        const tokens = before > limit ? promptTokens(run.messages, count) : before;
        run.record({ type: 'harness_prompt_tokens', layer: 'budget', tokens, window: size, dropped: before - tokens });
      },
    };
  },
});

/** The conversation trimmed, in order of least value, until it fits `limit` or only the protected messages remain. */
function fit(messages: readonly ChatMessage[], count: MessageCounter, limit: number): ChatMessage[] {
  const head = messages.slice(0, 2);
  const lastCall = messages.findLastIndex((message, index) => index >= 2 && message.role === 'assistant');
  const recent = messages.slice(lastCall === -1 ? messages.length : lastCall);
  // Each older turn with its cost, counted once: trimming subtracts instead of counting again.
  const older = turns(messages.slice(2, messages.length - recent.length)).map((turn) => ({ messages: turn, tokens: sum(turn.map(count)) }));
  const fixed = promptTokens([...head, ...recent], count);
  const over = () => fixed + sum(older.map((turn) => turn.tokens)) > limit;

  for (const turn of older) {
    turn.messages.forEach((message, index) => {
      if (message.role !== 'tool' || !over()) return;
      const stub = { ...message, content: REMOVED_OUTPUT };
      const saved = count(message) - count(stub);
      if (saved <= 0) return;
      turn.messages[index] = stub;
      turn.tokens -= saved;
    });
  }
  for (let index = 0; index < older.length && over(); ) {
    const calls = callsOf(older[index]!.messages);
    const later = [...older.slice(index + 1).map((turn) => turn.messages), recent];
    if (calls !== undefined && later.some((messages) => callsOf(messages) === calls)) older.splice(index, 1);
    else index += 1;
  }
  while (older.length > 0 && over()) older.shift();
  return [...head, ...older.flatMap((turn) => turn.messages), ...recent];
}

/** Messages grouped so that each tool result stays with the assistant message that called it. */
function turns(messages: readonly ChatMessage[]): ChatMessage[][] {
  const grouped: ChatMessage[][] = [];
  for (const message of messages) {
    if (message.role === 'tool' && grouped.length > 0) grouped.at(-1)!.push(message);
    else grouped.push([message]);
  }
  return grouped;
}

/** The calls a turn made, as a comparable key; undefined for a turn that called nothing. */
function callsOf(turn: readonly ChatMessage[]): string | undefined {
  const first = turn[0];
  if (first?.role !== 'assistant' || !first.toolCalls?.length) return undefined;
  return JSON.stringify(first.toolCalls.map((call) => [call.name, call.arguments]));
}

const sum = (values: readonly number[]) => values.reduce((total, value) => total + value, 0);
