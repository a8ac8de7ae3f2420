import { FOLLOWERS, onAnySite } from '../doubles/index.ts';
import { registerDoubles } from '../models/scripted/endpoint.ts';
import { hnDoubles } from '../sites/hn/doubles/index.ts';
import { HN_ORIGIN } from '../sites/hn/options.ts';

// The shell's wiring: `scripted:<name>` resolves to HN's doubles, and `scripted:diligent` and
// `scripted:overclaimer` follow a task's rehearsed reference on any other site (src/doubles/).
// Imported for this effect wherever a spec or config names models (fixtures.ts, matrix.ts).
export const shellDoubles = onAnySite(hnDoubles);
registerDoubles(shellDoubles);

/**
 * Whether a run of `model` on the site at `origin` is rehearsed first: the model is a double that
 * follows a plan, on a site whose kit has no doubles of its own (HN's read its pages).
 */
export function followsReference(model: string, origin: string): boolean {
  return FOLLOWERS.some((name) => model === `scripted:${name}`) && origin !== HN_ORIGIN;
}
