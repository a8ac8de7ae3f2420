import type { ChatMessage } from '../core/model.ts';

/**
 * Keeps the system prompt, the task and the last `keep` messages. The kept tail never starts with a
 * tool result, whose assistant turn would be gone: providers reject such orphans.
 */
export function keepRecent(messages: readonly ChatMessage[], keep: number): { messages: ChatMessage[]; dropped: number } {
  const head = messages.slice(0, 2);
  let start = Math.max(2, messages.length - keep);
  while (start < messages.length && messages[start]!.role === 'tool') start += 1;
  const tail = messages.slice(start);
  return { messages: [...head, ...tail], dropped: messages.length - head.length - tail.length };
}
