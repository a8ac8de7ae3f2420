import type { Policy } from '../../../doubles/history.ts';
import { wholeWordSource } from './iterator.ts';
import { FRONT_PAGE } from './moves.ts';
import { wordIn } from './reading.ts';

/**
 * The loop task as a model in code mode does it: one `run_program` whose program lists the front
 * page, clicks every matching arrow and claims, all in a single model turn. If the program fails
 * before it claims, the next turn reports the failure truthfully with a one-line program.
 */
export const programmer: Policy = (history) => {
  const word = wordIn(history.task);
  const ran = history.steps.findLast((step) => step.name === 'run_program');
  if (!word) return claim(false, 'The task names no word to look for.');
  if (!ran) return { name: 'run_program', args: { source: upvoteAll(word) } };
  return claim(false, `My program failed: ${String(ran.result.error ?? 'it ended without claiming an outcome')}`);
};

function upvoteAll(word: string): string {
  return [
    `await browser.navigate(${JSON.stringify(FRONT_PAGE)});`,
    `const pattern = /${wholeWordSource(word)}/iu;`,
    'const matching = (await hn.stories()).filter((story) => story.votable && pattern.test(story.title));',
    'for (const story of matching) {',
    '  if (!story.voted) await browser.click(`#up_${story.id}`);',
    '}',
    'const ids = matching.map((story) => story.id);',
    `await finish(true, ${JSON.stringify(`Upvoted every story whose title contains "${word}": `)} + ids.join(', ') + '.');`,
    'return { upvoted: ids };',
  ].join('\n');
}

const claim = (success: boolean, summary: string) => ({ name: 'run_program', args: { source: `await finish(${success}, ${JSON.stringify(summary)});` } });
