import * as cheerio from 'cheerio';
import type { SessionView } from '../../../core/task.ts';

/**
 * What the agent's own session sees on a page, for the postconditions' session checks (what
 * `verify` and `stop-on-success` run): each story row as a reader takes it in (its title link,
 * whether its arrow is there and hidden after a vote, its comment count). Read on its own terms,
 * not with the capture parser's or the oracle's code.
 */

export interface SeenStory {
  id: string;
  /** The number shown before the row, when there is one. */
  rank?: number;
  title: string;
  /** Where the title links to, as written. */
  href: string;
  /** The row has an up arrow (a job ad has none). */
  votable: boolean;
  /** The arrow is hidden (`nosee`) or an `unvote` link shows: the session's vote is in. */
  voted: boolean;
  comments: number;
}

/**
 * The story rows `path` shows the session, in order; none when the page is not a listing. A page
 * that does not load (a 502, a rate limit) throws: it can confirm nothing, and the `verify` layer
 * reports the check as unable to run.
 */
export async function seenStories(session: SessionView, path: string): Promise<SeenStory[]> {
  const { status, html } = await session.load(path);
  if (status !== 200) throw new Error(`${path} answered HTTP ${status}`);
  const $ = cheerio.load(html);
  return $('tr.athing')
    .not('.comtr')
    .toArray()
    .map((row) => {
      const id = row.attribs.id ?? '';
      const link = $(row).children('td').last().find('a').first();
      const arrow = $(row).find(`a[id="up_${id}"]`);
      const counted = /(\d+)\s*comments?/.exec($(row).next('tr').text().replace(/\u00a0/g, ' '));
      const rank = Number.parseInt($(row).find('.rank').text(), 10);
      return {
        id,
        rank: Number.isNaN(rank) ? undefined : rank,
        title: link.text().trim(),
        href: link.attr('href') ?? '',
        votable: arrow.length > 0,
        voted: arrow.hasClass('nosee') || $(`[id="un_${id}"]`).length > 0,
        comments: counted ? Number(counted[1]) : 0,
      };
    });
}

/** A verdict on one story the session sees (or not), `named` as verdicts name it (`story 46194762 (rank 1)`): its vote is in. */
export function voteSeen(story: SeenStory | undefined, named: string): { holds: boolean; detail: string } {
  if (!story) return { holds: false, detail: `the session's page does not show ${named}` };
  if (!story.votable) return { holds: false, detail: `${named} has no vote arrow` };
  return story.voted ? { holds: true, detail: `${named} shows as upvoted` } : { holds: false, detail: `${named} still shows its arrow: the vote did not register` };
}

/** The session's account, as its top bar names it. */
export async function sessionUser(session: SessionView): Promise<string | undefined> {
  const $ = cheerio.load((await session.load('/news')).html);
  return $('#me').text().trim() || undefined;
}

/** Whether the session's item page of `id` (a story's or a comment's) offers to take the favorite back: it is a favorite. */
export async function favoritedOnItemPage(session: SessionView, id: string): Promise<boolean> {
  const $ = cheerio.load((await session.load(`/item?id=${id}`)).html);
  return $('a').filter((_, link) => $(link).text().trim() === 'un-favorite').length > 0;
}
