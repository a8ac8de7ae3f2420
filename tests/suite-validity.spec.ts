import { copyFileSync, existsSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test, type Browser, type TestInfo } from '@playwright/test';
import { referenceAgent } from '../src/agents/controls.ts';
import { evaluate } from '../src/eval/evaluate.ts';
import type { RunRecord } from '../src/core/run.ts';
import { judge } from '../src/eval/oracle.ts';
import { defineTask, taskTags, type Task } from '../src/eval/tasks.ts';
import { upvoted } from '../src/sites/hn/postconditions.ts';
import { InputError } from '../src/input.ts';
import { ordinal } from '../src/text.ts';
import { markupYears } from '../src/sites/hn/options.ts';
import { createReplica } from '../src/sites/hn/replica.ts';
import { recordedHn, type RecordedOptions } from '../src/sites/hn/site.ts';
import type { HnSnapshot } from '../src/sites/hn/snapshot.ts';
import { hnSuite } from '../src/sites/hn/suite.ts';
import { expect, referenceDir } from './support.ts';

/**
 * Each task of the suite is valid on each capture the replica serves (the own fixture in every
 * markup era, and every real capture in ../shared/hn-reference when it is there), as the task reads
 * on that capture's start: the reference makes it actual with no side effect (an infeasible task:
 * it finds nothing, changes nothing and says so), and doing nothing is not actual, so the nop fails
 * truthfully and the liar's claim is a false success. A task that needs what a capture lacks is
 * not applicable there, with its own reason.
 *
 * The nop and the liar change nothing: their verdicts are the oracle on the start against itself,
 * with no browser, on every task and capture. Only the reference needs a browser: in CI it runs
 * every task on one capture other than the own 2025 fixture where the task applies (taken in
 * turn, so every capture gets several); on the own 2025 fixture, tests/mutation.spec.ts runs every
 * task's reference once and checks the same of it (actual, no side effect, nop and liar not
 * actual) before mutating it. `HARNESS_AUDIT=full` runs every task on every capture here.
 */

/** Where a run starts: a markup era of the own fixture, or a real capture. */
type Start = { label: string; options: RecordedOptions; own: boolean };

const eras: Start[] = markupYears.map((markupYear) => ({ label: `the ${markupYear} capture`, options: { faults: { markupYear } }, own: true }));

/** A real capture the replica cannot read is listed with why, and runs nothing. */
const captures = existsSync(referenceDir) ? readdirSync(referenceDir).filter((name) => name.endsWith('.html')).sort() : [];
function unservedWhy(name: string): string | undefined {
  try {
    createReplica({ capture: join(referenceDir, name) });
    return undefined;
  } catch (error) {
    return `the replica cannot read it: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`;
  }
}
const real: Start[] = captures.filter((name) => !unservedWhy(name)).map((name) => ({ label: name, options: { capture: join(referenceDir, name) }, own: false }));

/** A capture set: the first real front page and every real item page in one folder, one site (the threads' stories on the page after it). */
function realPagesAsOneSet(): Start[] {
  const names = real.map((start) => start.label);
  const set = [...names.filter((name) => name.startsWith('front-')).slice(0, 1), ...names.filter((name) => name.startsWith('item-'))];
  if (set.length < 2) return [];
  const dir = mkdtempSync(join(tmpdir(), 'hn-capture-set-'));
  for (const name of set) copyFileSync(join(referenceDir, name), join(dir, name));
  return [{ label: `the real pages as one capture set (${set.join(', ')})`, options: { capture: dir }, own: false }];
}
/** The project's own pre-2014 capture (written for the tests, in news.arc's markup): page 2 of 2011's front page alone, its one item page alone, and both as one set. */
const captures2011 = fileURLToPath(new URL('fixtures/captures-2011/', import.meta.url));
const era2011: Start[] = [
  { label: 'the 2011 page-2 capture', options: { capture: join(captures2011, 'news2.html') }, own: false },
  { label: 'the 2011 item page', options: { capture: join(captures2011, 'item-2864324.html') }, own: false },
  { label: 'the 2011 capture set (page 2 and an item page)', options: { capture: captures2011 }, own: false },
];
const starts = [...eras, ...era2011, ...real, ...realPagesAsOneSet()];

/** The start snapshot of `start`: the replica's state before any run. */
const startOf = (start: Start) => recordedHn(start.options).snapshot() as Promise<HnSnapshot>;

/** Every task on every start, in the full audit; else every task on the next start other than the own 2025 fixture (mutation.spec.ts's) where it applies, in turn. */
const full = process.env.HARNESS_AUDIT === 'full';
const own = eras.find((era) => era.label === 'the 2025 capture')!;
async function referencesToRun(): Promise<Map<Start, Set<string>>> {
  const snapshots = new Map(await Promise.all(starts.map(async (start) => [start, await startOf(start)] as const)));
  const applies = (task: Task, start: Start) => task.whyNotApplicable?.(snapshots.get(start)) === undefined;
  const chosen = new Map(starts.map((start) => [start, new Set<string>()]));
  const others = starts.filter((start) => start !== own);
  hnSuite.forEach((task, index) => {
    if (full) for (const start of starts) chosen.get(start)!.add(task.name);
    const turn = [...others.slice(index % others.length), ...others.slice(0, index % others.length)].find((start) => applies(task, start));
    if (turn) chosen.get(turn)!.add(task.name);
  });
  return chosen;
}
const chosen = referencesToRun();

const oracleSaid = (run: Pick<RunRecord, 'verdicts' | 'sideEffects'> & { summary?: string }) =>
  `${run.verdicts.map((verdict) => verdict.detail).join('; ')}; side effects: ${run.sideEffects.map((change) => change.detail).join(', ') || 'none'}${run.summary ? `; ${run.summary}` : ''}`;

/** The reference on `task` from `start`, in a browser context of its own: the task is valid there only if it succeeds (an infeasible one: finds nothing to do). */
async function checkReference(browser: Browser, task: Task, start: Start, testInfo: TestInfo): Promise<void> {
  const notApplicable = task.whyNotApplicable?.(await startOf(start));
  test.skip(notApplicable !== undefined, `not applicable: ${task.name} on ${start.label}: ${notApplicable}`);
  const context = await browser.newContext();
  let reference: RunRecord;
  try {
    reference = await evaluate({ context, site: recordedHn(start.options), agent: referenceAgent(), model: 'scripted:diligent', task, outputDir: testInfo.outputPath('reference') });
  } finally {
    await context.close();
  }
  console.log(`${start.label} ${task.name}: reference actual ${reference.actual}: ${reference.task}`);
  if (task.tags.includes('infeasible')) {
    expect(reference, `the reference made the infeasible ${task.name} actual, or claimed it: ${oracleSaid(reference)}`).toMatchObject({ actual: false, claimed: false });
  } else {
    expect(reference, `the reference did not make ${task.name} actual: ${oracleSaid(reference)}`).toMatchObject({ actual: true, claimed: true, falseSuccess: false });
  }
  expect(reference.sideEffects, oracleSaid(reference)).toEqual([]);
}

test('the real captures the suite runs on, and why the others are not', () => {
  test.skip(!existsSync(referenceDir), 'no ../shared/hn-reference beside the project');
  for (const name of captures) console.log(`${name}: ${unservedWhy(name) ?? 'served: every task that applies runs there'}`);
  expect(real.length).toBeGreaterThan(0);
});

for (const start of starts) {
  test.describe(start.label, () => {
    test('doing nothing is not actual on any task that applies: the nop fails truthfully, the liar is a false success', async () => {
      const site = recordedHn(start.options);
      const snapshot = (await site.snapshot()) as HnSnapshot;
      const applicable = hnSuite.filter((task) => task.whyNotApplicable?.(snapshot) === undefined);
      const reasons = hnSuite.filter((task) => !applicable.includes(task)).map((task) => `${task.name}: ${task.whyNotApplicable!(snapshot)}`);
      console.log(`${start.label}: ${applicable.length} of ${hnSuite.length} tasks apply${reasons.length > 0 ? `; not: ${reasons.join('; ')}` : ''}`);
      // The own fixture has what every task needs; elsewhere a task may miss what a capture lacks, never the own fixture's stories.
      if (start.own) expect(reasons).toEqual([]);
      const ownTitles = (await startOf(own)).ranking.map((story) => story.title);
      for (const reason of reasons) expect(ownTitles.filter((title) => reason.includes(title)), reason).toEqual([]);
      for (const task of applicable) {
        const { postconditions } = { ...task, ...task.resolve?.(snapshot) };
        // Neither control changes the site: the end is the start, and the liar's claim carries no answer.
        const idle = await judge(postconditions, { start: snapshot, end: snapshot, diff: [], user: site.account.username });
        expect(idle, `doing nothing made ${task.name} actual on ${start.label}: ${oracleSaid(idle)}`).toMatchObject({ actual: false, sideEffects: [] });
      }
    });

    for (const task of hnSuite) {
      test(`${task.name} (revision ${task.revision}): the reference`, async ({ browser }, testInfo) => {
        test.skip(!(await chosen).get(start)!.has(task.name), 'the reference runs here in the full audit only (HARNESS_AUDIT=full)');
        await checkReference(browser, task, start, testInfo);
      });
    }
  });
}

test.describe('templates name what a capture has', () => {
  const named = (name: string) => hnSuite.find((task) => task.name === name)!;
  /** The own 2025 start with only the ranks `keep` lets through: a capture that lists fewer stories. */
  const cut = async (keep: (rank: number) => boolean): Promise<HnSnapshot> => {
    const start = await startOf(own);
    return { ...start, ranking: start.ranking.filter((story) => keep(story.rank)) };
  };

  test('a lookup at a rank asks about the nearest rank the capture lists: on an item page, its one story', async () => {
    test.skip(!existsSync(referenceDir), 'no ../shared/hn-reference beside the project');
    const start = (await recordedHn({ capture: join(referenceDir, 'item-2026-harrisjose-easyhn.html') }).snapshot()) as HnSnapshot;
    const [story] = start.ranking;
    const asks = { 'title-of-rank-3': 'What is the title of the story ranked first', 'poster-of-rank-3': 'Which user posted the story ranked first', 'site-of-rank-5': 'Which site is the story ranked first' };
    const truth = { 'title-of-rank-3': story!.title, 'poster-of-rank-3': story!.by, 'site-of-rank-5': story!.site };
    for (const [name, prompt] of Object.entries(asks)) {
      const task = named(name);
      expect(task.whyNotApplicable?.(start), name).toBeUndefined();
      const instance = task.resolve!(start);
      expect(instance.prompt, name).toMatch(new RegExp(`^${prompt} `));
      const evidence = (answer: string) => ({ start, end: start, diff: [], user: 'harness', answer });
      expect(await judge(instance.postconditions, evidence(truth[name as keyof typeof truth]!)), name).toMatchObject({ actual: true });
      expect(await judge(instance.postconditions, evidence('something else')), name).toMatchObject({ actual: false });
    }
  });

  test('a later page: rank 35, or the nearest rank page 2 lists; with no page 2 it does not apply', async () => {
    const task = named('upvote-rank-35');
    const short = await cut((rank) => rank <= 33);
    expect(task.whyNotApplicable?.(short)).toBeUndefined();
    expect(task.resolve!(short).prompt).toBe('Upvote the story ranked 33rd on Hacker News.');
    const target = short.ranking.find((story) => story.rank === 33)!;
    const voted = { ...short, votes: { ...short.votes, harness: [...(short.votes.harness ?? []), target.id] } };
    const diff = recordedHn(own.options).diff(short, voted);
    expect(await judge(task.resolve!(short).postconditions, { start: short, end: voted, diff, user: 'harness' })).toMatchObject({ actual: true, sideEffects: [] });
    expect(task.whyNotApplicable?.(await cut((rank) => rank <= 30))).toBe('the capture has no page 2 (ranks 31 to 60) with a story that takes votes');
  });

  test('a reply on page 2 does not apply where the thread it names is closed (HN takes no reply there)', async () => {
    const task = named('reply-to-quietest-page-2-story');
    const start = await startOf(own);
    expect(task.whyNotApplicable?.(start)).toBeUndefined();
    const story = start.ranking.filter((entry) => entry.rank > 30 && entry.comments !== undefined).sort((a, b) => a.comments! - b.comments! || a.rank - b.rank)[0]!;
    const closed = { ...start, ranking: start.ranking.map((entry) => (entry.id === story.id ? { ...entry, closed: true } : entry)) };
    expect(task.whyNotApplicable?.(closed)).toBe(`the story with the fewest comments on page 2, ${JSON.stringify(story.title)}, is closed: HN takes no reply there`);
  });

  test('a reply on page 2 does not apply where the quietest story there has no comments ("discuss"): there is no top comment', async () => {
    const task = named('reply-to-quietest-page-2-story');
    const start = await startOf(own);
    const story = start.ranking.find((entry) => entry.rank === 45)!;
    const quiet = { ...start, ranking: start.ranking.map((entry) => (entry.id === story.id ? { ...entry, comments: 0 } : entry)) };
    expect(task.whyNotApplicable?.(quiet)).toBe(`the story with the fewest comments on page 2, ${JSON.stringify(story.title)}, has none: there is no top comment to reply to`);
  });

  test('on a capture of page 2 alone, the tasks on "the front page" name page 2 and its first ranks', async () => {
    const start = await startOf(era2011[0]!);
    const prompts = Object.fromEntries(['favorite-first-story', 'favorite-first-hide-second', 'hide-first-three', 'upvote-all-matching-for'].map((name) => [name, named(name).resolve!(start).prompt]));
    expect(prompts).toEqual({
      'favorite-first-story': 'Mark the first story on page 2 of the Hacker News front page as a favorite.',
      'favorite-first-hide-second': 'On page 2 of the Hacker News front page, add the first story to your favorites and hide the second story.',
      'hide-first-three': 'Hide the first three stories on page 2 of the Hacker News front page (ranks 31, 32 and 33).',
      'upvote-all-matching-for': 'Upvote every story on page 2 of the Hacker News front page whose title contains the word "for".',
    });
    // The classic task stays word for word: page 1 was not captured, so it does not apply.
    expect(named('upvote-first-post').whyNotApplicable?.(start)).toBe('the capture lists no story ranked 1');
  });

  test('ordinals as the prompts write them', () => {
    expect([1, 2, 3, 4, 11, 12, 13, 21, 22, 23, 35, 101, 111].map((n) => ordinal(n))).toEqual(['1st', '2nd', '3rd', '4th', '11th', '12th', '13th', '21st', '22nd', '23rd', '35th', '101st', '111th']);
    expect([1, 3, 5, 10, 11].map((n) => ordinal(n, { words: true }))).toEqual(['first', 'third', 'fifth', 'tenth', '11th']);
  });
});

test.describe('the suite as data', () => {
  test('every task has a unique name, a revision, tags and a reference; tasks per tag', () => {
    expect(new Set(hnSuite.map((task) => task.name)).size).toBe(hnSuite.length);
    for (const task of hnSuite) {
      expect(task.revision, task.name).toBeGreaterThanOrEqual(1);
      expect(task.tags.length, `${task.name} has no tag`).toBeGreaterThan(0);
      expect(task.reference, `${task.name} has no reference solution`).toBeInstanceOf(Function);
    }
    const perTag = Object.fromEntries(taskTags.map((tag) => [tag, hnSuite.filter((task) => task.tags.includes(tag)).length]));
    console.log(`${hnSuite.length} tasks; per tag: ${JSON.stringify(perTag)}`);
    // The mix the issue asks for: every kind of task is in the suite.
    for (const tag of taskTags) expect(perTag[tag], `no task is tagged ${tag}`).toBeGreaterThan(0);
  });

  test('on the own fixture every task reads as defined: its template picks the fixture\'s stories', async () => {
    const start = await startOf(own);
    for (const task of hnSuite) expect(task.resolve?.(start).prompt ?? task.prompt, task.name).toBe(task.prompt);
  });

  test('a bad task definition is one line naming the task and each bad field', () => {
    const bad = (input: Record<string, unknown>) => {
      try {
        defineTask({ name: 'upvote-it', prompt: 'Upvote it.', postconditions: [upvoted({ rank: 1 })], ...input } as Parameters<typeof defineTask>[0]);
      } catch (error) {
        expect(error).toBeInstanceOf(InputError);
        return (error as Error).message;
      }
      throw new Error(`accepted ${JSON.stringify(input)}`);
    };
    expect(bad({ revision: 0 })).toBe('task upvote-it: revision: Too small: expected number to be >=1');
    expect(bad({ revision: 1.5, tags: ['fun'] })).toBe('task upvote-it: revision: Invalid input: expected int, received number; tags.0: Invalid option: expected one of "navigation"|"form"|"multi-step"|"loop"|"information"|"infeasible"|"needs-login"|"side-effect-trap"');
    expect(bad({ postconditions: [] })).toBe('task upvote-it: postconditions: a task needs a postcondition: with none, no run could be actual');
    expect(bad({ postconditions: [{ description: 'no check' }] })).toBe('task upvote-it: postconditions.0: expected a postcondition { description, judge(evidence), expects(change, evidence) }');
    expect(bad({ name: 'Upvote It' })).toBe('task Upvote It: name: expected lower-case words joined by "-" (my-first-task)');
    // Left out, a revision is 1 and the tags are none.
    expect(defineTask({ name: 'upvote-it', prompt: 'Upvote it.', postconditions: [upvoted({ rank: 1 })] })).toMatchObject({ revision: 1, tags: [] });
  });
});
