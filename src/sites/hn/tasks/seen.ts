import * as cheerio from 'cheerio';
import type { SessionView } from '../../../core/task.ts';

/**
 * What the agent's own session sees on a page, for the postconditions' session checks (what
 * `verify` and `stop-on-success` run): each story row as a reader takes it in (its title link), a
 * vote by its arrow. Read on its own terms, not with the capture parser's or the oracle's code.
 */

export interface SeenStory {
  id: string;
  title: string;
  /** Where the title links to, as written. */
  href: string;
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
      const link = $(row).children('td').last().find('a').first();
      return { id: row.attribs.id ?? '', title: link.text().trim(), href: link.attr('href') ?? '' };
    });
}

/**
 * The session's vote on an item (a story, or a comment on its story's page) as the page showing it
 * says: its arrow hidden (`nosee`) or an `unvote` link is a vote in. Whether it shows, and what shows it.
 */
export async function voteOnPage(session: SessionView, { id, story, named }: { id: string; story: string; named: string }): Promise<{ shown: boolean; detail: string }> {
  const path = `/item?id=${encodeURIComponent(story)}`;
  const { status, html } = await session.load(path);
  if (status !== 200) throw new Error(`${path} answered HTTP ${status}`);
  const $ = cheerio.load(html);
  const arrow = $(`a[id="up_${id}"]`);
  const voted = arrow.hasClass('nosee') || $(`[id="un_${id}"]`).length > 0;
  if (voted) return { shown: true, detail: `${named} shows as upvoted` };
  if (arrow.length > 0) return { shown: false, detail: `${named} still shows its arrow: the vote did not register` };
  return { shown: false, detail: $(`tr[id="${id}"]`).length > 0 ? `${named} has no vote arrow` : `the session's page does not show ${named}` };
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
