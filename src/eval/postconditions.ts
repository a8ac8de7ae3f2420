import type { Evidence, Postcondition, ResolveContext } from '../core/task.ts';
import type { StateChange } from '../core/state.ts';
import { InputError } from '../input.ts';

export type { Evidence, Postcondition, Verdict } from '../core/task.ts';

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
  { what = 'the answer', reads }: { what?: string; /** The parts of the state `expected` computes the truth from (see Postcondition.reads). */ reads?: readonly string[] } = {},
): Postcondition<State, Change> {
  return {
    description: `${what} is ${typeof expected === 'string' ? JSON.stringify(expected) : 'right'}`,
    ...(reads && { reads }),
    async judge(evidence) {
      const truth = typeof expected === 'string' ? expected : await expected(evidence);
      if (truth === undefined) return { holds: false, detail: `${what} has no ground truth on this site` };
      if (evidence.answer === undefined) return { holds: false, detail: `no answer given (${what} is ${JSON.stringify(truth)})` };
      if (normalizeAnswer(evidence.answer) === normalizeAnswer(truth)) return { holds: true, detail: `${what} is ${JSON.stringify(truth)}, as answered` };
      return { holds: false, detail: `answered ${JSON.stringify(evidence.answer)}, but ${what} is ${JSON.stringify(truth)}` };
    },
    expects: () => false,
  };
}

const NOT_FOUND: unique symbol = Symbol.for('harness-eval.not-found');

/** What a `pick` answers when the start has no such target: why, as a verdict says it. */
export interface NotFound {
  readonly [NOT_FOUND]: string;
}

/** A pick's answer for a target the start does not have (`notFound('no ticket titled "Login fails" at the start')`). */
export function notFound(why: string): NotFound {
  return { [NOT_FOUND]: why };
}

/** Why `picked` is not there, or undefined when it is. */
export function whyNotFound(picked: unknown): string | undefined {
  return typeof picked === 'object' && picked !== null && NOT_FOUND in picked ? (picked as NotFound)[NOT_FOUND] : undefined;
}

/** A postcondition on a target the start lacks: it cannot hold, and expects no change, so any change is a side effect. */
function unfound<State, Change extends StateChange>(description: string, why: string): Postcondition<State, Change> {
  const verdict = { holds: false, detail: why };
  return { description, judge: () => verdict, expects: () => false, check: async () => verdict };
}

/**
 * A postcondition about what `pick` names in the start snapshot (the item at rank 1, the newest
 * post of a kind): `bound(named, start)` is the postcondition on that identity. Unresolved, it is judged
 * on what the start it is given names; `resolve(start)` binds it once, and only the bound one
 * checks itself, so a check never picks its target from the page as it is now. A pick that answers
 * `notFound(why)` cannot hold; resolved, that is bad input (an InputError naming `description`
 * and why) unless the task is infeasible, where the missing target is its point.
 */
export function boundAtStart<State, Change extends StateChange, Named>(
  description: string,
  pick: (start: State) => Named | NotFound,
  bound: (named: Named, start: State) => Postcondition<State, Change>,
): Postcondition<State, Change> {
  const at = (start: State, context?: ResolveContext): Postcondition<State, Change> => {
    const named = pick(start);
    const why = whyNotFound(named);
    if (why === undefined) return bound(named as Named, start);
    if (context && context.infeasible === undefined) throw new InputError(`${description}: ${why}`);
    return unfound(description, why);
  };
  return {
    description,
    judge: (evidence) => at(evidence.start).judge(evidence),
    expects: (change, evidence) => at(evidence.start).expects(change, evidence),
    resolve: (start, context = {}) => at(start, context),
  };
}

/** The postconditions bound to the run's start: what the oracle, `verify` and `stop-on-success` judge. */
export function resolveAll<State, Change extends StateChange>(postconditions: readonly Postcondition<State, Change>[], start: State): Postcondition<State, Change>[] {
  return postconditions.map((postcondition) => postcondition.resolve?.(start) ?? postcondition);
}
