import { isDeepStrictEqual } from 'node:util';
import type { StateChange } from '../core/state.ts';
import type { Evidence, Postcondition, SessionView, Verdict } from '../core/task.ts';
import { boundAtStart, notFound, type NotFound } from './postconditions.ts';

/**
 * Postconditions over a site kit's records (a ticket, a to-do item, a comment), for any kit: each
 * reads the records out of the start and end snapshots, and expects its record's changes in the
 * kit's own diff (by `StateChange.id`). A record they name is picked at the start and known by its
 * id from then on, never found again at the end.
 */

/** One kind of record in a kit's snapshot, and how to read it. */
export interface Records<State, Row> {
  /** What one is called in verdicts: `item`, `ticket`. */
  noun: string;
  /** Every record of the kind in a snapshot (a list's items, flattened, each with its list's id as a field). */
  read(state: State): readonly Row[];
  /** A record's id: the same in every snapshot, and the `id` of its changes in the kit's diff. */
  id(row: Row): string;
  /** The parts of the snapshot `read` reads (Postcondition.reads): a site whose start lacks one cannot judge them. */
  reads?: readonly string[];
}

/** The record a postcondition is about, picked at the start: the first whose fields equal these, or what a function answers (`notFound(why)` when there is none). */
export type RecordPick<State, Row> = Partial<Row> | ((start: State) => Row | NotFound);

interface Common<Change extends StateChange> {
  /** The postcondition's description; by default it says the record, the field and the value. */
  description?: string;
  /** The diff's change kinds the postcondition expects for its record (`['done']`); absent: every change with its id. */
  kinds?: readonly Change['kind'][];
}

interface OnPicked<State, Row, Change extends StateChange> extends Common<Change> {
  pick: RecordPick<State, Row>;
  /** The picked record in descriptions, before any start is known: `the first Groceries item`. */
  what?: string;
  /** The harness-side check (Postcondition.check) on the picked record, through the session's pages. */
  check?: (session: SessionView, row: Row) => Promise<Verdict>;
}

const json = (value: unknown) => JSON.stringify(value);

/** Whether `row` has every field of `fields`, deeply equal. */
const hasFields = <Row>(row: Row, fields: Partial<Row>) => Object.entries(fields).every(([key, value]) => isDeepStrictEqual((row as Record<string, unknown>)[key], value));

const ofKinds = (kinds: readonly string[] | undefined, change: StateChange) => kinds === undefined || kinds.includes(change.kind);

/** `pick` as a function of the start: fields find the first record with them, or say none has them. */
function picker<State, Row>(records: Records<State, Row>, pick: RecordPick<State, Row>): (start: State) => Row | NotFound {
  if (typeof pick === 'function') return pick;
  return (start) => records.read(start).find((row) => hasFields(row, pick)) ?? notFound(`no ${records.noun} ${json(pick)} at the start`);
}

/** A postcondition on the record `pick` finds at the start, bound to its id: `judge` and `expects` are given that id and its start row. */
function onPicked<State, Row, Change extends StateChange>(
  records: Records<State, Row>,
  options: OnPicked<State, Row, Change>,
  description: string,
  judge: (row: Row, named: string, end: Row | undefined, evidence: Evidence<State, Change>) => Verdict,
): Postcondition<State, Change> {
  const reads = records.reads && { reads: records.reads };
  const unbound = boundAtStart<State, Change, Row>(description, picker(records, options.pick), (row) => {
    const id = records.id(row);
    const named = `${records.noun} ${id}`;
    const { check } = options;
    return {
      description,
      ...reads,
      judge: (evidence) => judge(row, named, records.read(evidence.end).find((candidate) => records.id(candidate) === id), evidence),
      expects: (change) => change.id === id && ofKinds(options.kinds, change),
      ...(check && { check: (session: SessionView) => check(session, row) }),
    };
  });
  return { ...unbound, ...reads };
}

/**
 * The field `field` of the record `pick` finds at the start is `to` at the end and was not at the
 * start (a value it had already is not the run's work). `to` may be computed from the evidence
 * (`({ user }) => user`: the run's own account). A record gone at the end does not hold.
 */
export function fieldChanged<State, Row extends object, Field extends keyof Row & string, Change extends StateChange = StateChange>(
  records: Records<State, Row>,
  options: OnPicked<State, Row, Change> & { field: Field; to: Row[Field] | ((evidence: Evidence<State, Change>) => Row[Field]) },
): Postcondition<State, Change> {
  const { field, to } = options;
  const what = options.what ?? `the ${records.noun} picked at the start`;
  const description = options.description ?? `${what}: ${field} changed to ${typeof to === 'function' ? 'the value asked' : json(to)}`;
  return onPicked(records, options, description, (row, named, end, evidence) => {
    const value = typeof to === 'function' ? (to as (evidence: Evidence<State, Change>) => Row[Field])(evidence) : to;
    if (end === undefined) return { holds: false, detail: `${named} is gone` };
    if (!isDeepStrictEqual(end[field], value)) return { holds: false, detail: `${named}: ${field} is ${json(end[field])}, not ${json(value)}` };
    if (isDeepStrictEqual(row[field], value)) return { holds: false, detail: `${named}: ${field} was ${json(value)} at the start already: not the run's work` };
    return { holds: true, detail: `${named}: ${field} changed from ${json(row[field])} to ${json(value)}` };
  });
}

/** The record `pick` finds at the start is gone at the end. */
export function recordRemoved<State, Row, Change extends StateChange = StateChange>(records: Records<State, Row>, options: OnPicked<State, Row, Change>): Postcondition<State, Change> {
  const description = options.description ?? `${options.what ?? `the ${records.noun} picked at the start`} is removed`;
  return onPicked(records, options, description, (_row, named, end) => (end === undefined ? { holds: true, detail: `${named} is removed` } : { holds: false, detail: `${named} is still there` }));
}

/**
 * A record the start did not have is at the end, matching `matching`: fields it has, deeply equal
 * (`{ list: '1', text: 'Buy coffee' }`), or a function of the record and the evidence (a parent
 * read from `evidence.start`). One is expected: a second such record is a side effect.
 */
export function recordAdded<State, Row, Change extends StateChange = StateChange>(
  records: Records<State, Row>,
  options: Common<Change> & {
    matching: Partial<Row> | ((row: Row, evidence: Evidence<State, Change>) => boolean);
    /** The record in descriptions: `a comment on ticket 7`. */
    what?: string;
    /** The harness-side check (Postcondition.check), through the session's pages. */
    check?: (session: SessionView) => Promise<Verdict>;
  },
): Postcondition<State, Change> {
  const { matching, kinds, check } = options;
  const fields = typeof matching === 'function' ? '' : ` ${json(matching)}`;
  const what = options.what ?? `a${/^[aeiou]/i.test(records.noun) ? 'n' : ''} ${records.noun}${fields}`;
  const matches = (row: Row, evidence: Evidence<State, Change>) => (typeof matching === 'function' ? matching(row, evidence) : hasFields(row, matching));
  /** The records of the end the start did not have, and those of them that match, in the end's order. */
  const added = (evidence: Evidence<State, Change>) => {
    const before = new Set(records.read(evidence.start).map(records.id));
    const fresh = records.read(evidence.end).filter((row) => !before.has(records.id(row)));
    return { fresh, matched: fresh.filter((row) => matches(row, evidence)) };
  };
  return {
    description: options.description ?? `${what} is added`,
    ...(records.reads && { reads: records.reads }),
    judge(evidence) {
      const { fresh, matched } = added(evidence);
      if (matched[0]) return { holds: true, detail: `${records.noun} ${records.id(matched[0])} is added` };
      const others = fresh.length === 0 ? '' : fresh.length === 1 ? ' (1 other was)' : ` (${fresh.length} others were)`;
      return { holds: false, detail: `no ${records.noun}${fields || ' matching'} was added${others}` };
    },
    expects: (change, evidence) => {
      const first = added(evidence).matched[0];
      return first !== undefined && change.id === records.id(first) && ofKinds(kinds, change);
    },
    ...(check && { check }),
  };
}

/**
 * No change of the kit's diff but those `asked` expect: their task and nothing else (a side effect
 * then fails the run, where otherwise it is only counted). List it after them:
 * `postconditions: [closed, nothingElseTouched([closed])]`. It expects no change itself.
 */
export function nothingElseTouched<State, Change extends StateChange>(asked: readonly Postcondition<State, Change>[], { description = 'nothing else is changed' }: { description?: string } = {}): Postcondition<State, Change> {
  const over = (postconditions: readonly Postcondition<State, Change>[]): Postcondition<State, Change> => ({
    description,
    judge(evidence) {
      const others = evidence.diff.filter((change) => !postconditions.some((postcondition) => postcondition.expects(change, evidence)));
      if (others.length === 0) return { holds: true, detail: 'no other change' };
      const shown = others.slice(0, 5).map((change) => change.detail);
      if (others.length > shown.length) shown.push(`${others.length - shown.length} more`);
      return { holds: false, detail: `${others.length} other change${others.length === 1 ? '' : 's'}: ${shown.join('; ')}` };
    },
    expects: () => false,
  });
  return { ...over(asked), resolve: (start, context) => over(asked.map((postcondition) => postcondition.resolve?.(start, context) ?? postcondition)) };
}
