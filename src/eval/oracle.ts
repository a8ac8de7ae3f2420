import type { StateChange } from '../core/state.ts';
import type { Evidence, Postcondition, Verdict } from '../core/task.ts';

export interface Judgement {
  actual: boolean;
  verdicts: Array<Verdict & { description: string }>;
  /** Every change from start to end that no postcondition asked for. */
  sideEffects: StateChange[];
}

/**
 * Why `postconditions` (bound to the run's start) cannot be judged on a site whose snapshots are
 * like `start`: the parts one reads that the snapshot lacks, named with it; undefined when all can be.
 */
export function unjudgeable(postconditions: readonly Postcondition<unknown, StateChange>[], start: unknown): string | undefined {
  const lacking = postconditions.flatMap((postcondition) => {
    const missing = (postcondition.reads ?? []).filter((part) => (start as Record<string, unknown> | null)?.[part] === undefined);
    return missing.length > 0 ? [`"${postcondition.description}" is judged on ${missing.join(' and ')}`] : [];
  });
  return lacking.length > 0 ? `the site's snapshot does not read what ${lacking.join('; ')}` : undefined;
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

/**
 * The judgement on a site that went down after the agent's work began (`SiteDown`): no
 * postcondition can be shown to hold, so the task is not done; and the site going down is a change
 * no task asks for, a side effect. Counted, never left out: the agent may have brought it down.
 */
export function wentDown(site: string, why: string): Judgement {
  return {
    actual: false,
    verdicts: [{ description: 'the site still answers', holds: false, detail: why }],
    sideEffects: [{ kind: 'site down', id: site, detail: `the site went down during the run: ${why}` }],
  };
}
