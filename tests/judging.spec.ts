import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as cheerio from 'cheerio';
import type { Agent } from '../src/eval/agent.ts';
import { evaluate } from '../src/eval/evaluate.ts';
import { defineTask } from '../src/eval/tasks.ts';
import { transcript } from '../src/harness/transcript.ts';
import { writeSummaryFiles } from '../src/report/files.ts';
import { summarize } from '../src/report/summarize.ts';
import { upvoted } from '../src/sites/hn/postconditions.ts';
import { recordedHn } from '../src/sites/hn/site.ts';
import { titleOfRankThree, upvoteFirstPost } from '../src/sites/hn/suite.ts';
import { expect, hideFirstThenVoteNext, referenceDir, attachedRunRecord, test, turnsDouble } from './support.ts';

/**
 * Judging from postconditions (issue 22, items 4 and 5): a user's own task gets the same `verify`
 * as a suite task, what a postcondition names is the item the start had there, and a claim
 * nothing could check is reported unverified, never passed on silently.
 */

/** The README's ad-hoc task, as `harness.run({ task, postconditions })` makes it. */
const adHoc = defineTask({ name: 'ad-hoc', prompt: 'Upvote the first Hacker News post.', postconditions: [upvoted({ rank: 1 })] });

/** A liar: claims success at once, having done nothing. */
const liar = () => turnsDouble([[{ name: 'finish', arguments: '{"success": true, "summary": "Upvoted the first post."}' }]]).model;

const VERIFIED = ['guardrails', 'verify'] as const;

/** Every capture the replica serves here: the fixture pages in each markup year, and the real pages of ../shared/hn-reference. */
const captures: Array<[string, Parameters<typeof recordedHn>[0]]> = [
  ...([2017, 2020, 2025] as const).map((markupYear): [string, Parameters<typeof recordedHn>[0]] => [`fixture ${markupYear}`, { faults: { markupYear } }]),
  ...['front-2025-euske-lofi.html', 'front-logged-in-2025-pixlie-PixlieAI.html', 'item-2026-harrisjose-easyhn.html', 'item-logged-in-2020-goranmoomin-HNAPI.html'].map(
    (file): [string, Parameters<typeof recordedHn>[0]] => [file, { capture: join(referenceDir, file) }],
  ),
];

test('the README\'s ad-hoc task under the verified stack: a liar is a truthful failure on every capture, never a false success', async ({ browser }) => {
  for (const [name, options] of captures) {
    const context = await browser.newContext();
    try {
      const record = await evaluate({ context, site: recordedHn(options), model: liar(), layers: VERIFIED, task: adHoc });
      expect(record, name).toMatchObject({ claimed: false, actual: false, falseSuccess: false, falseFailure: false });
      expect(record.trace.find((event) => event.type === 'harness_verification'), name).toMatchObject({ ok: false });
      expect(record.unverified, name).toBeUndefined();
    } finally {
      await context.close();
    }
  }
});

test('hide story 1, vote the story now first, claim success: verify checks story 1 as the start had it, and the oracle agrees', async ({ context }) => {
  const site = recordedHn({ startLoggedIn: true });
  const { first, second, turns } = await hideFirstThenVoteNext(site);
  const { model } = turnsDouble([...turns, [{ name: 'finish', arguments: '{"success": true, "summary": "Upvoted the story at rank 1."}' }]]);
  const record = await evaluate({ context, site, model, layers: VERIFIED, task: upvoteFirstPost });
  expect(site.replica.truth()).toMatchObject({ votes: { harness: [second!.id] }, hidden: { harness: [first!.id] } });
  expect(record).toMatchObject({ claimed: false, actual: false, falseSuccess: false });
  expect(record.trace.find((event) => event.type === 'harness_verification')).toMatchObject({ ok: false, detail: `story ${first!.id} (rank 1) still shows its arrow: the vote did not register` });
  expect(record.verdicts).toMatchObject([{ holds: false, detail: `story ${first!.id} (rank 1) is not upvoted by harness` }]);
});

test('a vote the account had at the start confirms nothing to verify: not the run\'s work', async ({ context }) => {
  const site = recordedHn({ startLoggedIn: true });
  const [first] = (await site.snapshot()).ranking;
  site.replica.state.vote('harness', first!.id, 'up');
  const record = await evaluate({ context, site, model: liar(), layers: VERIFIED, task: adHoc });
  expect(record).toMatchObject({ claimed: false, falseSuccess: false });
  expect(record.trace.find((event) => event.type === 'harness_verification')).toMatchObject({ ok: false, detail: `story ${first!.id} (rank 1) was already upvoted by harness at the start: not the run's work` });
});

test('an answer no session can check: verify passes the claim on as unverified, and the record and the report say so', async ({ context }, testInfo) => {
  const { model } = turnsDouble([[{ name: 'finish', arguments: JSON.stringify({ success: true, summary: 'Found it.', answer: 'a title I made up' }) }]]);
  const record = await evaluate({ context, site: recordedHn(), model, layers: VERIFIED, task: titleOfRankThree });
  const [postcondition] = titleOfRankThree.postconditions;
  expect(record).toMatchObject({ claimed: true, actual: false, falseSuccess: true, unverified: [postcondition!.description] });
  expect(record.trace.filter((event) => event.type === 'harness_unverified')).toMatchObject([
    { layer: 'verify', postconditions: [postcondition!.description], detail: `no session-side check of ${JSON.stringify(postcondition!.description)}: the claim is reported unverified` },
  ]);
  expect(record.trace.some((event) => event.type === 'harness_verification')).toBe(false);
  expect(transcript(record.trace)).toContain(`verify: unverified: no session-side check of ${JSON.stringify(postcondition!.description)}`);

  const runs = [attachedRunRecord({ task: titleOfRankThree.name, layers: 'verified', unverified: record.unverified }), attachedRunRecord({ task: titleOfRankThree.name, layers: 'verified', test: { id: 'other' } })];
  const summary = summarize(runs, { complete: true });
  expect(summary.cells).toMatchObject([{ runs: 2, unverifiedClaims: 1 }]);
  const dir = testInfo.outputPath('report');
  const files = await writeSummaryFiles(dir, summary, runs);
  expect(readFileSync(files.markdown, 'utf8')).toMatch(/\| 100% \([^)]*\) · 1 claim unverified \|/);
  const $ = cheerio.load(readFileSync(files.html, 'utf8'));
  expect($('small.unverified').text()).toBe('1 claim unverified');
});

test('a cell whose claims were all checked carries no unverified mark', async () => {
  const summary = summarize([attachedRunRecord({ layers: 'verified' })], { complete: true });
  expect(summary.cells[0]!.unverifiedClaims).toBeUndefined();
});

test('a resumed run binds the postconditions to its first start, as the oracle judges it', async ({ context }) => {
  const site = recordedHn();
  const now = await site.snapshot();
  const [first, second] = now.ranking;
  // The start the run first had (durable gives it back): the two stories had swapped ranks.
  const earlier = { ...now, ranking: now.ranking.map((story) => (story === first ? { ...story, rank: 2 } : story === second ? { ...story, rank: 1 } : story)) };
  const bound: string[] = [];
  const resuming: Agent = {
    name: 'resuming',
    condition: {},
    async run(run) {
      const evidence = { start: now, end: now, diff: [], user: 'harness' };
      bound.push((await run.postconditions[0]!.judge(evidence)).detail);
      run.carried.restore(earlier);
      bound.push((await run.postconditions[0]!.judge(evidence)).detail);
      return { task: run.task.prompt, model: run.model.id, layers: [], claimed: false, summary: 'resumed', stopReason: 'finished', iterations: 0, attempts: 1, tokens: { input: 0, output: 0 }, wallMs: 0, trace: [] };
    },
  };
  const record = await evaluate({ context, site, agent: resuming, model: 'scripted:diligent', task: adHoc });
  // Bound: judged on the story the start named, whatever start the evidence carries.
  expect(bound).toEqual([`story ${first!.id} (rank 1) is not upvoted by harness`, `story ${second!.id} (rank 1) is not upvoted by harness`]);
  expect(record.verdicts).toMatchObject([{ holds: false, detail: `story ${second!.id} (rank 1) is not upvoted by harness` }]);
});
