import { z } from 'zod';

/** A change to the site's state between the run's start and end snapshots, as the oracle lists it. */
export const stateChangeSchema = z.object({
  /** What changed, in the site kit's words: `vote`, `unvote`, `complete`, …. */
  kind: z.string(),
  /** The changed thing's id: an item's, a comment's. */
  id: z.string(),
  /** One line for a person: `harness upvoted 46194762 ("…")`. */
  detail: z.string(),
});
export type StateChange = z.infer<typeof stateChangeSchema>;
