import { z } from 'zod';

/** A change to the site's state between the run's start and end snapshots, as the oracle lists it. */
export const stateChangeSchema = z.object({
  /** What changed: `vote`, `unvote` (and, as sites grow, `hide`, `comment`, …). */
  kind: z.string(),
  /** The changed thing: a story id, a comment id. */
  id: z.string(),
  /** One line for a person: `harness upvoted 46194762 ("Show HN: …")`. */
  detail: z.string(),
});
export type StateChange = z.infer<typeof stateChangeSchema>;
