import { upvoteFirstPost } from '../src/sites/hn/suite.ts';
import { evaluate } from '../src/eval/evaluate.ts';
import { recordedHn } from '../src/sites/hn/site.ts';
import { expect, test, turnsDouble } from './support.ts';

test('a site that stops answering after the run keeps the run, incomplete and unjudged, saying why', async ({ context }) => {
  const site = recordedHn();
  let snapshots = 0;
  const failing = { ...site, snapshot: () => (snapshots++ === 0 ? site.snapshot() : Promise.reject(new Error('the site is gone'))) };
  const { model } = turnsDouble([[{ name: 'finish', arguments: JSON.stringify({ success: true, summary: 'Upvoted it.' }) }]]);
  const record = await evaluate({ context, site: failing, model, layers: [], task: upvoteFirstPost });
  expect(record).toMatchObject({ claimed: true, incomplete: true, judged: false, actual: false, stopReason: 'error', verdicts: [] });
  expect(record.summary).toBe('Upvoted it.; the site could not be judged after the run: the site is gone');
});
