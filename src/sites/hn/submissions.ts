import { siteOf, type Item, type StoryRow } from './capture.ts';
import { loginPage, notices } from './pages.ts';
import { formOf, html, redirect, type Pages, type Routes, type Visitor } from './routing.ts';
import type { HnState } from './state.ts';
import type { Template } from './template.ts';
import type { Submission } from './snapshot.ts';
import { escapeHtml } from '../../text.ts';

/**
 * Submitting a story, as on HN: `GET /submit` is the form, carrying an `fnid` token bound to the
 * session (HN's is per form; one per session is as strict for a replay), and `POST /r` posts it.
 * A wrong or missing `fnid` (or `fnop`) is "Unknown." and no change; an empty or too long title, or
 * a url that is not a web link, gives the form again with the reason; a url already on the site
 * (a captured story's or an earlier submission's, compared by `linkKey`) redirects to that story
 * and changes nothing; otherwise the story is kept (`state.posts.submissions`) and the answer is
 * a redirect to `newest`. A submitted story is an item like a captured one: it has an item page,
 * rows on the listings, and takes votes, hides and favorites.
 */

/** HN refuses longer titles. */
const MAX_TITLE = 80;

/** A story submitted on the replica as an item (a fresh story has 1 point: HN counts the poster's). */
function itemOf(story: Submission): Item {
  return { id: story.id, kind: 'story', title: story.title, points: 1, author: story.by, site: siteOf(story.url), comments: 0, url: story.url };
}

/** The story submitted on the replica with this id, as an item. */
export function submittedItem(state: HnState, id: string): Item | undefined {
  const story = state.posts.submissions.find((submission) => submission.id === id);
  return story && itemOf(story);
}

/** Every story submitted on the replica as its row in the capture's markup and its item, oldest first (none when the capture has no row to make one from). */
export function submittedStories({ capture, state }: Pick<Pages, 'capture' | 'state'>): Array<{ row: StoryRow; item: Item }> {
  return state.posts.submissions.flatMap((story) => {
    const row = capture.submittedRow(story);
    return row ? [{ row, item: itemOf(story) }] : [];
  });
}

/** A submitted story's item page, derived from its row as a captured story's is. */
export function submittedItemPage(pages: Pages, id: string): Template | undefined {
  const story = pages.state.posts.submissions.find((submission) => submission.id === id);
  const row = story && pages.capture.submittedRow(story);
  return row && pages.capture.derivedItemPage(row);
}

/**
 * What makes two links the same story, as HN's duplicate check roughly does: the scheme, the
 * host's case, a leading `www.`, a trailing `/` and the fragment do not count; the path's case
 * and the query do. Undefined for what is not a web link.
 */
function linkKey(url: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return undefined;
  const host = parsed.host.toLowerCase().replace(/^www\./, '');
  return `${host}${parsed.pathname.replace(/\/+$/, '')}${parsed.search}`;
}

export function submissionRoutes(pages: Pages): Routes {
  const { capture, state } = pages;

  /** The form's token: bound to the visitor's session, so another session's form is refused. */
  const fnidOf = (visitor: Visitor) => state.authToken(`fnid\n${visitor.cookie ?? ''}`, 'submit-page');

  const form = (visitor: Visitor, values: { title?: string; url?: string; text?: string } = {}, problem?: string) => {
    const value = (field: 'title' | 'url') => escapeHtml(values[field] ?? '');
    const body =
      (problem ? `<p>${escapeHtml(problem)}</p>` : '') +
      `<form action="r" method="post"><input type="hidden" name="fnid" value="${fnidOf(visitor)}"><input type="hidden" name="fnop" value="submit-page">` +
      `<table border="0"><tr><td>title</td><td><input type="text" name="title" value="${value('title')}" size="50" maxlength="${MAX_TITLE}" autofocus="t"></td></tr>` +
      `<tr><td>url</td><td><input type="text" name="url" value="${value('url')}" size="50"></td></tr>` +
      `<tr><td>text</td><td><textarea name="text" rows="4" cols="49" wrap="virtual">${escapeHtml(values.text ?? '')}</textarea></td></tr>` +
      `<tr><td></td><td><input type="submit" value="submit"></td></tr>` +
      `<tr style="height:20px"></tr><tr><td></td><td>Leave url blank to submit a question for discussion.</td></tr></table></form>`;
    return pages.page(capture.framePage('submit', 'Submit', 'submit', `<tr><td>${body}</td></tr>`), visitor);
  };

  /** The captured stories by link (the first with each), keyed once: the capture never changes. */
  const capturedLinks = new Map<string, string>();
  for (const item of capture.items.values()) {
    const key = item.url && linkKey(item.url);
    if (key && !capturedLinks.has(key)) capturedLinks.set(key, item.id);
  }
  /** The story already on the site with this link: a captured one or an earlier submission. */
  const postedWith = (key: string): string | undefined =>
    capturedLinks.get(key) ?? state.posts.submissions.find((story) => story.url && linkKey(story.url) === key)?.id;

  const submit = async (request: Request, _: URL, visitor: Visitor): Promise<Response> => {
    const fields = await formOf(request);
    const user = visitor.session?.user;
    if (!user || fields.get('fnid') !== fnidOf(visitor) || fields.get('fnop') !== 'submit-page') return html(notices.unknown);
    const values = { title: fields.get('title')?.trim() ?? '', url: fields.get('url')?.trim() ?? '', text: fields.get('text')?.trim() ?? '' };
    if (!values.title) return form(visitor, values, 'Please give the story a title.');
    if (values.title.length > MAX_TITLE) return form(visitor, values, `Please make title < ${MAX_TITLE} characters.`);
    const key = values.url ? linkKey(values.url) : undefined;
    if (values.url && !key) return form(visitor, values, "That's not a valid url.");
    const existing = key && postedWith(key);
    if (existing) return redirect(`item?id=${existing}`);
    const story: Submission = { id: state.newId(), by: user, title: values.title, ...(values.url && { url: values.url }), ...(values.text && { text: values.text }) };
    state.posts.submissions.push(story);
    return redirect('newest');
  };

  return {
    '/submit': { GET: (_, __, visitor) => (visitor.session ? form(visitor) : html(loginPage('submit'))) },
    '/r': { POST: submit },
  };
}
