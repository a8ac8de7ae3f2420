import type { StateChange } from '../report/types.ts';
import type { Evidence, Postcondition, Verdict } from './postconditions.ts';

export interface Judgement {
  actual: boolean;
  verdicts: Array<Verdict & { description: string }>;
  /** Every change from start to end that the task did not ask for. */
  sideEffects: StateChange[];
}

/**
 * The judge: postconditions against the site's ground truth, before and after. It is given no
 * trace and no page, so nothing the agent or the harness says can sway it.
 */
export function judge(postconditions: readonly Postcondition[], evidence: Evidence): Judgement {
  const verdicts = postconditions.map((postcondition) => ({ description: postcondition.description, ...postcondition.check(evidence) }));
  return { actual: verdicts.length > 0 && verdicts.every((verdict) => verdict.holds), verdicts, sideEffects: [] };
}
