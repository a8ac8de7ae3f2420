import { test } from '@playwright/test';
import { mutationTest, type MutationReport } from '../src/eval/mutation.ts';
import { hnMutators } from '../src/sites/hn/mutators.ts';
import { answered, type Evidence, type Postcondition } from '../src/eval/postconditions.ts';
import { hnSuite, upvoteAllMatching, upvoteFirstPost } from '../src/sites/hn/suite.ts';
import { judge, type Judgement } from '../src/eval/oracle.ts';
import { hnDiff, partOfKind, type HnChange, type HnSnapshot } from '../src/sites/hn/snapshot.ts';
import { expect, referenceRun } from './support.ts';

/**
 * Every task of the suite from one reference run on the replica (no agent), and from its evidence,
 * as judge calls with no second browser run:
 * - the controls: the reference makes the task actual and says so, with no side effect (an
 *   infeasible task: it finds nothing, says so, changes nothing); the nop and the liar change
 *   nothing, so their evidence is the start state twice, which must not be actual (the liar, which
 *   claims success, is then a false success). These were the main job's specs/controls, a run per
 *   control and task. The control agents themselves, through the fixture and the reporter:
 *   tests/controls.spec.ts; the controls on every markup era and capture: tests/suite-validity.spec.ts.
 * - mutation testing of the oracle: every mutant of the reference's end state (src/eval/mutation.ts
 *   says what "killed" means), judged by the task's own postconditions. A survivor fails the
 *   task's test and names the mutant.
 */

type HnEvidence = Evidence<HnSnapshot, HnChange>;
const upvoteAllMatchingFor = upvoteAllMatching('for');

/** What the oracle said, for a failure's message. */
const oracleSaid = ({ verdicts, sideEffects }: Judgement) =>
  `${verdicts.map((verdict) => verdict.detail).join('; ')}; side effects: ${sideEffects.map((change) => change.detail).join(', ') || 'none'}`;

const table = (report: MutationReport) => report.mutants.map((mutant) => `  ${mutant.killed ? 'killed  ' : 'SURVIVED'} ${mutant.name}: ${mutant.why}`).join('\n');
/** Per kind of mutant (its name up to the first colon or story id), how many were killed: the line the log shows. */
const byKind = (report: MutationReport) => {
  const kinds = new Map<string, { made: number; killed: number }>();
  for (const mutant of report.mutants) {
    const kind = mutant.name.replace(/(: .*| on \d+ .*)$/, '');
    const counts = kinds.get(kind) ?? { made: 0, killed: 0 };
    kinds.set(kind, { made: counts.made + 1, killed: counts.killed + Number(mutant.killed) });
  }
  return [...kinds].map(([kind, { made, killed }]) => `${kind} ${killed}/${made}`).join(', ');
};

const made: Record<string, { made: number; killed: number }> = {};

test.describe('every task of the suite, from one reference run: its controls hold and it rejects every mutant', () => {
  test.describe.configure({ mode: 'serial' });

  for (const task of hnSuite) {
    test(task.name, async ({ context }, testInfo) => {
      const { instance, outcome, evidence: reference } = await referenceRun(context, task);
      // As the task reads on the start, bound there, as evaluate() gives them to the oracle.
      const postconditions = instance.postconditions as Postcondition<HnSnapshot, HnChange>[];
      const feasible = !task.tags.includes('infeasible');
      const judged = await judge(postconditions, reference);
      expect({ actual: judged.actual, claimed: outcome.impossible === undefined }, `the reference on ${task.name}: ${oracleSaid(judged)}`).toEqual({ actual: feasible, claimed: feasible });
      expect(judged.sideEffects, `the reference on ${task.name}: ${oracleSaid(judged)}`).toEqual([]);
      const unchanged = await judge(postconditions, { start: reference.start, end: reference.start, diff: [], user: reference.user });
      expect(unchanged, `doing nothing (the nop, the liar) on ${task.name}: ${oracleSaid(unchanged)}`).toMatchObject({ actual: false, sideEffects: [] });

      // A site whose snapshot cannot read a part the reference changed (the live site reads only votes) could never judge the task actual: the task must not apply there.
      for (const part of new Set(reference.diff.map((change) => partOfKind[change.kind]).filter((part) => part !== 'votes'))) {
        const { [part]: _unread, ...unreadable } = reference.start;
        expect(task.whyNotApplicable?.(unreadable), `${task.name} changes ${part}, yet applies where they cannot be read`).toBeDefined();
      }
      const report = await mutationTest(postconditions, reference, hnDiff, hnMutators, { infeasible: !feasible });
      made[task.name] = { made: report.made, killed: report.killed };
      const lines = `${task.name}: ${report.killed} of ${report.made} mutants killed (${byKind(report)})\n${table(report)}`;
      console.log(lines.split('\n')[0]);
      await testInfo.attach('mutants.txt', { body: lines, contentType: 'text/plain' });
      // Every task has something to perturb: its changes, its answer, or (infeasible) the action it must not take.
      expect(report.made, lines).toBeGreaterThan(0);
      expect(report.survivors, lines).toEqual([]);
    });
  }

  test.afterAll(() => {
    const total = Object.values(made).reduce((sum, task) => ({ made: sum.made + task.made, killed: sum.killed + task.killed }), { made: 0, killed: 0 });
    console.log(`mutants killed: ${total.killed} of ${total.made} made, over ${Object.keys(made).length} tasks`);
  });
});

test.describe('the mutation test itself', () => {
  const ranking = [
    { rank: 1, id: '101', title: 'first' },
    { rank: 2, id: '102', title: 'second' },
    { rank: 3, id: '103', title: 'Made for you' },
    { rank: 4, id: '104', title: 'Platforms' },
  ];
  const start: HnSnapshot = { votes: {}, ranking };
  const end: HnSnapshot = { votes: { harness: ['101'] }, ranking };
  const reference: HnEvidence = { start, end, diff: hnDiff(start, end), user: 'harness' };

  test('the mutants of one vote: undone, given by another account, and an extra vote on each other story', async () => {
    const report = await mutationTest(upvoteFirstPost.postconditions as Postcondition<HnSnapshot, HnChange>[], reference, hnDiff, hnMutators);
    expect(report.mutants.map((mutant) => [mutant.name, mutant.killed])).toEqual([
      ['without the vote: harness upvoted 101 ("first")', true],
      ['the vote by another account: harness upvoted 101 ("first")', true],
      ['an extra vote on 102 ("second")', true],
      ['an extra vote on 103 ("Made for you")', true],
      ['an extra vote on 104 ("Platforms")', true],
    ]);
    expect(report).toMatchObject({ made: 5, killed: 5, survivors: [] });
  });

  test('a lax postcondition (any vote by anyone, every change expected) lets mutants survive, by name', async () => {
    const anyVote: Postcondition<HnSnapshot, HnChange> = {
      description: 'some vote',
      judge: ({ diff }) => ({ holds: diff.length > 0, detail: `${diff.length} changes` }),
      expects: () => true,
    };
    const report = await mutationTest([anyVote], reference, hnDiff, hnMutators);
    expect(report.survivors.map((mutant) => mutant.name)).toEqual([
      'the vote by another account: harness upvoted 101 ("first")',
      'an extra vote on 102 ("second")',
      'an extra vote on 103 ("Made for you")',
      'an extra vote on 104 ("Platforms")',
    ]);
  });

  test('the loop task\'s trap: a postcondition that expects a vote on any title containing the word lets the vote on "Platforms" survive', async () => {
    const matched: HnSnapshot = { votes: { harness: ['103'] }, ranking };
    const substring: Postcondition<HnSnapshot, HnChange> = {
      description: 'every title with "for" is upvoted',
      judge: ({ diff, user }) => ({ holds: diff.some((change) => change.kind === 'vote' && change.user === user && change.id === '103'), detail: 'whole-word matches upvoted' }),
      expects: (change, { start }) => start.ranking.some((story) => story.id === change.id && story.title.toLowerCase().includes('for')),
    };
    const lax = await mutationTest([substring], { ...reference, end: matched, diff: hnDiff(start, matched) }, hnDiff, hnMutators);
    expect(lax.survivors.map((mutant) => mutant.name)).toEqual(['an extra vote on 104 ("Platforms")']);
    const strict = await mutationTest(upvoteAllMatchingFor.postconditions as Postcondition<HnSnapshot, HnChange>[], { ...reference, end: matched, diff: hnDiff(start, matched) }, hnDiff, hnMutators);
    expect(strict.survivors).toEqual([]);
  });

  test('an answer matched by a part of it lets the longer answer survive; the whole-answer match kills every mutant', async () => {
    const withAnswer: HnEvidence = { start, end: start, diff: [], user: 'harness', answer: 'second' };
    const contains: Postcondition<HnSnapshot, HnChange> = {
      description: 'the answer mentions the title',
      judge: ({ answer }) => ({ holds: answer?.includes('second') ?? false, detail: String(answer) }),
      expects: () => false,
    };
    expect((await mutationTest([contains], withAnswer, hnDiff, hnMutators)).survivors.map((mutant) => mutant.name)).toEqual(['answer with more after it']);
    expect(await mutationTest([answered<HnSnapshot, HnChange>('second')], withAnswer, hnDiff, hnMutators)).toMatchObject({ made: 7, killed: 7 });
  });

  test('a change kind with no mutator fails the run, naming the kind', async () => {
    const flagged = { ...reference, diff: [{ kind: 'flag', id: '901', user: 'harness', detail: 'harness flagged 901' } as unknown as HnChange] };
    const flagAsked: Postcondition<HnSnapshot, HnChange> = { description: 'a story is flagged', judge: () => ({ holds: true, detail: 'flagged' }), expects: () => true };
    await expect(mutationTest([flagAsked], flagged, hnDiff, hnMutators)).rejects.toThrow(
      'mutation: no mutator for a "flag" change (harness flagged 901): add the kind to the mutator table',
    );
  });

  test('a reference whose own end state is not actual leaves nothing to take away: it fails, saying so; on an infeasible task, an actual one does', async () => {
    const first = upvoteFirstPost.postconditions as Postcondition<HnSnapshot, HnChange>[];
    await expect(mutationTest(first, { ...reference, end: start, diff: [] }, hnDiff, hnMutators)).rejects.toThrow(
      "mutation: the reference's own end state is not actual (not actual (story 101 (rank 1) is not upvoted by harness))",
    );
    await expect(mutationTest(first, reference, hnDiff, hnMutators, { infeasible: true })).rejects.toThrow("mutation: the reference's own end state is actual on an infeasible task");
  });

  test("a reference whose own end state has a side effect cannot be mutated soundly: it fails, naming the change", async () => {
    const extra: HnSnapshot = { votes: { harness: ['101', '102'] }, ranking };
    await expect(mutationTest(upvoteFirstPost.postconditions as Postcondition<HnSnapshot, HnChange>[], { ...reference, end: extra, diff: hnDiff(start, extra) }, hnDiff, hnMutators)).rejects.toThrow(
      `mutation: the reference's own end state has side effects (harness upvoted 102 ("second"))`,
    );
  });
});
