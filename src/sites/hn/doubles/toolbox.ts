import { urlIn } from '../../../doubles/page.ts';
import { READ_TEXT, type Dialect } from '../../../doubles/toolbox.ts';
import { FRONT_PAGE } from './moves.ts';
import { storiesIn } from './page.ts';
import { HN_ORIGIN } from '../options.ts';

/**
 * HN's dialect of the doubles' moves (src/doubles/toolbox.ts): they think on HN's own origin, list
 * the stories (`get_stories`, HN's own tool, or `hn.stories()` in code mode), and know a vote link
 * opened for the click on its arrow, both ways.
 */

declare module '../../../doubles/toolbox.ts' {
  interface KitMoves {
    get_stories: true;
  }
}

/** The site's own origin, where the doubles' addresses point. */
const SITE = `${HN_ORIGIN}/`;

/** The latest upvote link a result showed for `#up_ID`, made absolute against the page it was on. */
function voteLinkFor(selector: string, results: ReadonlyArray<Record<string, unknown>>, origin: string): string | undefined {
  const id = /^#up_(\d+)$/.exec(selector)?.[1];
  for (const result of results.toReversed()) {
    const link = storiesIn(result)?.find((story) => story.id === id)?.voteLink;
    if (link) return new URL(link, new URL(urlIn(result) ?? '', origin)).href;
  }
  return undefined;
}

export const hnDialect: Dialect = {
  site: SITE,
  home: FRONT_PAGE,
  readers: [
    {
      move: 'get_stories',
      describes: /\bstor(?:y|ies)\b|\bheadlines\b/i,
      // The stories as text where the kit's function is not there.
      programs: [
        { calls: ['browser.url(', 'hn.stories('], body: () => 'return { url: await browser.url(), stories: await hn.stories() };' },
        { calls: ['browser.url(', 'browser.text('], body: () => READ_TEXT },
      ],
    },
  ],
  // An upvote link opened is a click on that arrow.
  moveAt: (target) => {
    const story = target.origin === new URL(SITE).origin && target.pathname === '/vote' && target.searchParams.get('how') === 'up' ? target.searchParams.get('id') : null;
    return story ? { name: 'click', args: { selector: `#up_${story}` } } : undefined;
  },
  clickAt: voteLinkFor,
};
