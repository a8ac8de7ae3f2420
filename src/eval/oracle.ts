import type { StateChange } from '../core/state.ts';
import type { Evidence, Postcondition, Verdict } from '../core/task.ts';

export interface Judgement {
  actual: boolean;
  verdicts: Array<Verdict & { description: string }>;
  /** Every change from start to end that no postcondition asked for. */
  sideEffects: StateChange[];
}

/**
 * The judge: postconditions against the site's ground truth, before and after, and the changes
 * between. It is given no trace and no page, so nothing the agent or the harness says can sway it:
 * of the claim it sees only the answer, which an information task checks against the ground truth.
 */
export async function judge<State, Change extends StateChange>(postconditions: readonly Postcondition<State, Change>[], evidence: Evidence<State, Change>): Promise<Judgement> {
  const verdicts = await Promise.all(postconditions.map(async (postcondition) => ({ description: postcondition.description, ...(await postcondition.judge(evidence)) })));
  const sideEffects = evidence.diff
    .filter((change) => !postconditions.some((postcondition) => postcondition.expects(change, evidence)))
    .map(({ kind, id, detail }) => ({ kind, id, detail }));
  return { actual: verdicts.length > 0 && verdicts.every((verdict) => verdict.holds), verdicts, sideEffects };
}
