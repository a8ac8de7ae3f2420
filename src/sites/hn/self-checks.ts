import * as cheerio from 'cheerio';
import type { Verdict } from '../../eval/postconditions.ts';
import type { SessionView } from '../../eval/tasks.ts';

/**
 * What a task's harness-side check (`verify`) reads: a page as the agent's own session loads it,
 * read from its markup as a browser shows it (any HN markup year). Never the capture parser's or
 * the oracle's code: the check is the harness judging itself, and may be fooled where they are not.
 */

/** A story row as the page shows it to the session: its rank, title, and whether its vote shows as cast. */
export interface SeenStory {
  id: string;
  rank: number | null;
  title: string;
  /** The arrow hidden (`nosee`) or an `unvote` link shown: the page says this session voted for it. */
  voted: boolean;
}

/** The story rows (not comments) of a page's HTML, in order. */
export function seenStories(html: string): SeenStory[] {
  const $ = cheerio.load(html);
  return $('tr.athing')
    .not('.comtr')
    .toArray()
    .map((row) => {
      const id = $(row).attr('id') ?? '';
      const rank = Number.parseInt($(row).find('.rank').first().text(), 10);
      return {
        id,
        rank: Number.isNaN(rank) ? null : rank,
        title: $(row).find('.titleline > a, a.storylink').first().text().trim(),
        voted: $(`[id="up_${id}"]`).hasClass('nosee') || $(`[id="un_${id}"]`).length > 0,
      };
    });
}

/** The stories `path` lists to the session, or why the page cannot say (an error page, a rate limit). */
export async function storiesSeenAt(session: SessionView, path: string): Promise<{ stories: SeenStory[] } | { failed: Verdict }> {
  const { status, html } = await session.load(path);
  const stories = seenStories(html);
  if (status !== 200 || stories.length === 0) return { failed: { holds: false, detail: `${path} (HTTP ${status}) lists no story, so nothing can be confirmed` } };
  return { stories };
}

/** Whether the session sees `story` voted, said in one line. */
export function voteSeen(story: SeenStory, label: string): Verdict {
  return story.voted
    ? { holds: true, detail: `story ${story.id} (${label}) shows as upvoted` }
    : { holds: false, detail: `story ${story.id} (${label}) still shows its arrow: the vote did not register` };
}
