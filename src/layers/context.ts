import { z } from 'zod';
import type { Layer } from '../harness/layer.ts';
import { keepRecent } from '../harness/messages.ts';
import { parseInput } from '../input.ts';

export const contextOptions = z.object({ keepLast: z.number().int().min(2).default(20) }).strict();

/** A sliding window: the system prompt, the task and the last N messages go to the model. */
export function context(options: z.input<typeof contextOptions> = {}): Layer {
  const { keepLast } = parseInput(contextOptions, options, 'layer context');
  return {
    name: 'context',
    beforeModel(run) {
      const before = run.messages.length;
      const kept = keepRecent(run.messages, keepLast);
      if (kept.dropped === 0) return;
      run.replaceMessages(kept.messages);
      run.record({ type: 'harness_compaction', layer: 'context', before, after: kept.messages.length });
    },
  };
}
