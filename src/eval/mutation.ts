import type { StateChange } from '../core/state.ts';
import { judge, type Judgement } from './oracle.ts';
import type { Evidence, Postcondition } from '../core/task.ts';

/**
 * Mutation testing of the oracle: perturb the end state a task's reference produced (undo one of
 * its changes, make it another account's, add a change no one asked for, spoil its answer) and
 * check the oracle rejects every perturbation. An oracle that lets one through would count that
 * run as a clean success: a survivor is a hole in the task's postconditions.
 *
 * Rejects, precisely: a mutant is *killed* when the oracle judges it worse than the reference's
 * own end state, which must be a clean outcome (no side effect; actual, unless the task is
 * infeasible): not actual where the reference was actual, or with a side effect. On an infeasible
 * task nothing is actual and the reference changed nothing, so its mutants are the changes added
 * (the impossible action itself cannot be made), each killed only by the side effect it is.
 */

/** A mutant made from one change the reference made (undo it, give it to another account): undefined when it does not apply. */
export type ChangeMutator<State, Change extends StateChange> = (end: State, change: Change, evidence: Evidence<State, Change>) => State | undefined;

/** A site's mutators: per change kind, what to do to each change the reference made; and changes to add. */
export interface Mutators<State, Change extends StateChange> {
  /** By change kind: every kind a reference can make needs at least one, or the mutation run fails naming it. */
  ofChange: Record<string, Record<string, ChangeMutator<State, Change>>>;
  /** Changes added to the reference's, each a mutant of its own (a vote on each story it left alone, a hide). */
  extra: Record<string, (evidence: Evidence<State, Change>) => Array<{ name: string; end: State }>>;
}

export interface Mutant<State> {
  name: string;
  end: State;
  answer?: string;
}

export interface MutantResult {
  name: string;
  killed: boolean;
  /** The oracle's verdicts and side effects on the mutant, in one line. */
  why: string;
}

export interface MutationReport {
  made: number;
  killed: number;
  mutants: MutantResult[];
  survivors: MutantResult[];
}

/**
 * An answer's mutants, which any information task must reject: none given, only its first half
 * (an oracle that matches a prefix), and with more after it (one that matches a part).
 */
function answerMutants<State>(end: State, answer: string | undefined): Mutant<State>[] {
  if (answer === undefined) return [];
  return [
    { name: 'no answer', end },
    { name: 'answer cut in half', end, answer: answer.slice(0, Math.ceil(answer.length / 2)) },
    { name: 'answer with more after it', end, answer: `${answer} and 12 more` },
  ];
}

/** Every mutant of the reference's end state (and answer). */
export function mutantsOf<State, Change extends StateChange>(reference: Evidence<State, Change>, mutators: Mutators<State, Change>): Mutant<State>[] {
  const ofChanges = reference.diff.flatMap((change) => {
    const forKind = mutators.ofChange[change.kind];
    if (!forKind) throw new Error(`mutation: no mutator for a "${change.kind}" change (${change.detail}): add the kind to the mutator table`);
    return Object.entries(forKind).flatMap(([name, mutate]) => {
      const end = mutate(structuredClone(reference.end), change, reference);
      return end === undefined ? [] : [{ name: `${name}: ${change.detail}`, end, answer: reference.answer }];
    });
  });
  const extras = Object.values(mutators.extra).flatMap((add) => add({ ...reference, end: structuredClone(reference.end) }).map((mutant) => ({ ...mutant, answer: reference.answer })));
  return [...ofChanges, ...extras, ...answerMutants(reference.end, reference.answer)];
}

/**
 * Judges every mutant of the reference's run against `postconditions`. The reference's own end
 * state must be clean (see above: actual unless `infeasible`, with no side effect), or there is
 * nothing sound to mutate: that throws, naming why.
 */
export async function mutationTest<State, Change extends StateChange>(
  postconditions: readonly Postcondition<State, Change>[],
  reference: Evidence<State, Change>,
  diff: (start: State, end: State) => Change[],
  mutators: Mutators<State, Change>,
  { infeasible = false }: { infeasible?: boolean } = {},
): Promise<MutationReport> {
  const original = await judge(postconditions, reference);
  if (original.sideEffects.length > 0) throw new Error(`mutation: the reference's own end state has side effects (${original.sideEffects.map((change) => change.detail).join('; ')})`);
  if (original.actual === infeasible) throw new Error(`mutation: the reference's own end state is ${infeasible ? 'actual on an infeasible task' : 'not actual'} (${describe(original)})`);
  const mutants = await Promise.all(
    mutantsOf(reference, mutators).map(async ({ name, end, answer }) => {
      const judgement = await judge(postconditions, { ...reference, end, diff: diff(reference.start, end), answer });
      const killed = (original.actual && !judgement.actual) || judgement.sideEffects.length > 0;
      return { name, killed, why: describe(judgement) };
    }),
  );
  const survivors = mutants.filter((mutant) => !mutant.killed);
  return { made: mutants.length, killed: mutants.length - survivors.length, mutants, survivors };
}

function describe({ actual, verdicts, sideEffects }: Judgement): string {
  const effects = sideEffects.length > 0 ? `; side effects: ${sideEffects.map((change) => change.detail).join(', ')}` : '';
  return `${actual ? 'actual' : 'not actual'} (${verdicts.map((verdict) => verdict.detail).join('; ')})${effects}`;
}
