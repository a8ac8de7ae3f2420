import type { StateChange } from '../report/types.ts';
import type { Evidence, Postcondition, Verdict } from './postconditions.ts';

export interface Judgement {
  actual: boolean;
  verdicts: Array<Verdict & { description: string }>;
  /** Every change from start to end that no postcondition asked for. */
  sideEffects: StateChange[];
}

/**
 * The judge: postconditions against the site's ground truth, before and after, and the changes
 * between. It is given no trace and no page, so nothing the agent or the harness says can sway it.
 */
export function judge<State, Change extends StateChange>(postconditions: readonly Postcondition<State, Change>[], evidence: Evidence<State, Change>): Judgement {
  const verdicts = postconditions.map((postcondition) => ({ description: postcondition.description, ...postcondition.check(evidence) }));
  const sideEffects = evidence.diff
    .filter((change) => !postconditions.some((postcondition) => postcondition.expects(change, evidence)))
    .map(({ kind, id, detail }) => ({ kind, id, detail }));
  return { actual: verdicts.length > 0 && verdicts.every((verdict) => verdict.holds), verdicts, sideEffects };
}
