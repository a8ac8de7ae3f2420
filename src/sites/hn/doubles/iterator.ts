import type { Policy, Step } from '../../../doubles/history.ts';
import { finish } from '../../../doubles/moves.ts';
import { FRONT_PAGE } from './moves.ts';
import type { StoryRow } from './page.ts';
import { wordIn } from './reading.ts';

/**
 * The loop task as a tool-calling model does it: open the front page, list the stories, then one
 * click per matching story, a model turn each, then claim. What code mode is measured against.
 */
export const iterator: Policy = (history) => {
  const word = wordIn(history.task);
  if (!word) return finish(false, 'The task names no word to look for.');
  const steps = history.steps;
  if (!steps.some((step) => step.name === 'navigate')) return { name: 'navigate', args: { url: FRONT_PAGE } };
  const listing = steps.findLast((step) => step.name === 'get_stories');
  if (!listing) return { name: 'get_stories', args: {} };
  const pattern = wholeWord(word);
  const matching = ((listing.result.stories ?? []) as StoryRow[]).filter((story) => story.votable && pattern.test(story.title));
  const clicks = steps.filter((step) => step.name === 'click');
  const failed = clicks.filter((step) => 'error' in step.result);
  if (failed.length > 0) return finish(false, `A vote failed: ${describeFailures(failed)}.`);
  const clicked = new Set(clicks.map((step) => step.args.selector));
  const next = matching.find((story) => !story.voted && !clicked.has(`#up_${story.id}`));
  if (next) return { name: 'click', args: { selector: `#up_${next.id}` } };
  return finish(true, `Upvoted the ${matching.length} stories whose title contains "${word}": ${matching.map((story) => story.id).join(', ')}.`);
};

/** The word on its own, in any case: "for" matches "Writing a GC for fun", not "platforms". */
export function wholeWordSource(word: string): string {
  return `(?<![\\p{L}\\p{N}_])${word.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}(?![\\p{L}\\p{N}_])`;
}

export const wholeWord = (word: string) => new RegExp(wholeWordSource(word), 'iu');

function describeFailures(steps: readonly Step[]): string {
  return steps.map((step) => `${String(step.args.selector)} (${String(step.result.error)})`).join('; ');
}
