import type { StateChange } from '../report/types.ts';

/**
 * Ground truth at the run's start and end, every change between them (as the site's pack
 * computes it), whose account the run used, and the answer the agent's claim gave (an
 * information task's answer is judged against the ground truth; the claim's word that it
 * succeeded is not evidence, and neither are its trace or its page).
 */
export interface Evidence<State = unknown, Change extends StateChange = StateChange> {
  start: State;
  end: State;
  diff: readonly Change[];
  user: string;
  answer?: string;
}

export interface Verdict {
  holds: boolean;
  detail: string;
}

/**
 * A fact about what a run changed on the site, checked by the oracle only, never against the
 * trace or the page. `check` judges the change from start to end (what the account had before
 * is not the run's work); `expects` says whether a change is one the task asked for: every change
 * no postcondition expects is a side effect. A postcondition that asks for no change (a read-only
 * task) expects none. `check` may be async (a site whose ground truth must be fetched); the
 * oracle awaits it.
 */
export interface Postcondition<State = unknown, Change extends StateChange = StateChange> {
  description: string;
  check(evidence: Evidence<State, Change>): Promise<Verdict> | Verdict;
  expects(change: Change, evidence: Evidence<State, Change>): boolean;
}

/** An answer as a reader would compare it: case, surrounding quotes and runs of white space do not count. */
export function normalizeAnswer(answer: string): string {
  return answer
    .trim()
    .replace(/^["'\u201c\u2018](.*)["'\u201d\u2019]$/su, '$1')
    .replace(/\s+/g, ' ')
    .trim()
    .toLowerCase();
}

/**
 * The claim's answer equals the ground truth (`expected`, or computed from the evidence, e.g. the
 * title ranked 3 at the start), as `normalizeAnswer` compares them: the whole answer, not a part
 * of it, so an answer that hedges with two candidates is wrong. It asks for no change to the site.
 */
export function answered<State = unknown, Change extends StateChange = StateChange>(
  expected: string | ((evidence: Evidence<State, Change>) => Promise<string | undefined> | string | undefined),
  { what = 'the answer' }: { what?: string } = {},
): Postcondition<State, Change> {
  return {
    description: `${what} is ${typeof expected === 'string' ? JSON.stringify(expected) : 'right'}`,
    async check(evidence) {
      const truth = typeof expected === 'string' ? expected : await expected(evidence);
      if (truth === undefined) return { holds: false, detail: `${what} has no ground truth on this site` };
      if (evidence.answer === undefined) return { holds: false, detail: `no answer given (${what} is ${JSON.stringify(truth)})` };
      if (normalizeAnswer(evidence.answer) === normalizeAnswer(truth)) return { holds: true, detail: `${what} is ${JSON.stringify(truth)}, as answered` };
      return { holds: false, detail: `answered ${JSON.stringify(evidence.answer)}, but ${what} is ${JSON.stringify(truth)}` };
    },
    expects: () => false,
  };
}
