import { z } from 'zod';
import { defineLayer } from '../harness/layer.ts';
import { keepRecent } from '../harness/messages.ts';

export const contextOptions = z.object({ keepLast: z.number().int().min(2).default(20) }).strict();

/** A sliding window: the system prompt, the task and the last N messages go to the model. */
export const context = defineLayer({
  name: 'context',
  options: contextOptions,
  create({ keepLast }) {
    return {
      beforeModel(run) {
        const before = run.messages.length;
        const kept = keepRecent(run.messages, keepLast);
        if (kept.dropped === 0) return;
        run.replaceMessages(kept.messages);
        run.record({ type: 'harness_compaction', layer: 'context', before, after: kept.messages.length });
      },
    };
  },
});
