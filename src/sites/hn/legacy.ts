import * as cheerio from 'cheerio';
import type { Element, Text } from 'domhandler';
import { pageOfRank } from './paging.ts';
import { encodeGoto } from './template.ts';

/**
 * HN's markup before 2014 (news.arc's tables: no `tr.athing`, no `span.rank`, no `a.hnuser`) put
 * into the shape the capture reader and the templates read, by adding the later classes and ids
 * to the captured tags and leaving every other byte as captured: the page a browser gets is still
 * that era's page, its own `vote(this)` script included.
 *
 * A story is a row (rank cell, arrow `a#up_ID`, `td.title` link, `span.comhead` site) over a
 * `td.subtext` row (`span#score_ID`, `user?id=` link, age, `item?id=` "N comments" or
 * "discuss"), then a spacer row; a job has no arrow and a subtext of only its age. An item page's
 * story has no rank, then the comment form and a table of comments, each a table whose spacer
 * image's width is its indent × 40, with a `span.comhead` and a `span.comment`.
 *
 * The captured `fnid` links (`/x?fnid=…` for `More` and login, `/r` with an `fnid` for a comment)
 * were continuations on HN's server that expired long ago, so they become the replica's own
 * paths and fields: `news?p=N`, `login?goto=`, and the comment form's `parent`, `goto` and
 * `hmac`. Votes keep the era's `vote?for=ID&dir=up&whence=` links (their `whence` set to where the
 * page is served). The era had no unvote, hide or favorite; the replica adds its own to a
 * logged-in view where the later eras have them (`span#unv_ID`, `span[data-hide]`, `span[data-fave]`),
 * and shows nothing there logged out.
 */

/** Whether a page is in pre-2014 markup: story subtext rows, and none of the later `tr.athing`. */
export function isLegacy($: cheerio.CheerioAPI): boolean {
  return $('tr.athing').length === 0 && $('td.subtext').length > 0;
}

/** An insertion (`start === end`) or a replacement in the captured text. */
interface Edit {
  start: number;
  end: number;
  text: string;
}

/** The page, in pre-2014 markup, with the later classes and ids added (see above); other pages unchanged. */
export function modernizeLegacy(captured: string): string {
  // A later page is left unparsed: a large thread is read once more only where it is needed.
  if (/class=['"]?athing/.test(captured)) return captured;
  // The era's images (arrow, spacer, logo) came from ycombinator.com: the replica serves them (assets.ts).
  const html = captured.replace(/(src=["']?)https?:\/\/(?:www\.)?ycombinator\.com\/images\//g, '$1');
  const $ = cheerio.load(html, { sourceCodeLocationInfo: true });
  if (!isLegacy($)) return captured;
  const edits: Edit[] = [];
  const loc = (el: Element) => el.sourceCodeLocation!;
  const afterName = (el: Element, text: string) => {
    const at = loc(el).startOffset + 1 + el.name.length;
    edits.push({ start: at, end: at, text });
  };
  const replaceStartTag = (el: Element, text: string) => edits.push({ start: loc(el).startTag!.startOffset, end: loc(el).startTag!.endOffset, text });
  const wrapInner = (el: Element, open: string) => {
    const { startTag, endTag } = loc(el);
    if (!startTag || !endTag) return;
    edits.push({ start: startTag.endOffset, end: startTag.endOffset, text: open }, { start: endTag.startOffset, end: endTag.startOffset, text: '</span>' });
  };

  const stories = $('td.subtext')
    .toArray()
    .flatMap((subtext) => {
      const under = $(subtext).closest('tr');
      const row = under.prevAll('tr').first()[0] as Element | undefined;
      const id = row && storyIdOf($, row, subtext);
      return row && id ? [{ row, subtext, under: under[0] as Element, id }] : [];
    });
  const ranks = stories.map(({ row }) => Number.parseInt($(row).children('td').first().text(), 10)).filter((rank) => !Number.isNaN(rank));
  const itemPage = ranks.length === 0 && stories.length > 0;
  const pageNumber = ranks.length > 0 ? pageOfRank(Math.min(...ranks)) : 1;
  const goto = itemPage ? `item?id=${stories[0]!.id}` : pageNumber > 1 ? `news?p=${pageNumber}` : 'news';

  for (const { row, subtext, under, id } of stories) {
    afterName(row, ` class="athing" id="${id}"`);
    const first = $(row).children('td').first();
    if (/^\s*\d+\.\s*$/.test(first.text())) wrapInner(first[0]!, '<span class="rank">');
    // An item page's story has no rank cell: an empty one, as later item pages have, to rank it in a
    // listing; every other row of its table gets an empty cell too, so that the columns stay aligned.
    else if (itemPage) {
      for (const other of $(row).parent().children('tr').toArray()) {
        const at = loc(other).startTag!.endOffset;
        edits.push({ start: at, end: at, text: other === row ? '<td align="right" valign="top" class="title"><span class="rank"></span></td>' : '<td></td>' });
      }
    }
    const link = $(row).find('td.title a').first()[0];
    if (link) afterName(link, ' class="storylink"');
    const comhead = $(row).find('span.comhead').first()[0];
    if (comhead) {
      replaceStartTag(comhead, '<span class="sitebit comhead">');
      wrapTextMatch(comhead, /\(([^()\s]+)\)/, '<span class="sitestr">', edits);
    }
    const score = $(subtext).find(`span[id="score_${id}"]`)[0];
    if (score) afterName(score, ' class="score"');
    const user = $(subtext).find('a[href^="user?id="]').first()[0];
    if (user) afterName(user, ' class="hnuser"');
    const votable = $(row).find(`a[id="up_${id}"]`).length > 0;
    const age = wrapTextMatch(subtext, /\d+ (?:second|minute|hour|day|month|year)s? ago/, '<span class="age">', edits);
    // Where the later eras put unvote and hide: the replica's own links, logged in.
    const own = `${votable ? `<span id="unv_${id}"></span>` : ''}<span data-hide="${id}"></span>${itemPage ? `<span data-fave="${id}"></span>` : ''}`;
    const at = age ?? loc(subtext).endTag?.startOffset;
    if (at !== undefined) edits.push({ start: at, end: at, text: own });
    const spacer = $(under).next('tr')[0];
    if (spacer && $(spacer).children().length === 0) afterName(spacer, ' class="spacer"');
  }

  for (const arrow of $('a[id^="up_"], a[id^="down_"]').toArray()) {
    const tag = loc(arrow).startTag!;
    const text = html.slice(tag.startOffset, tag.endOffset).replace(/whence=[^"'&\s>]*/, `whence=${encodeGoto(goto)}`);
    edits.push({ start: tag.startOffset, end: tag.endOffset, text });
  }
  $('span.pagetop a')
    .filter((_, a) => $(a).text().trim() === 'login')
    .each((_, a) => void replaceStartTag(a, `<a href="login?goto=${encodeGoto(goto)}">`));
  if (!itemPage) {
    $('td.title a')
      .filter((_, a) => $(a).text().trim() === 'More')
      .each((_, a) => void replaceStartTag(a, `<a href="news?p=${pageNumber + 1}" class="morelink" rel="nofollow">`));
  }
  if (itemPage) itemPageEdits($, stories[0]!.row, stories[0]!.id, { afterName, replaceStartTag, wrapInner, edits });
  return applyEdits(html, edits);
}

/** A story's id: its score's, its arrow's, its subtext's item link's, or (a job's) its title's item link's. */
function storyIdOf($: cheerio.CheerioAPI, row: Element, subtext: Element): string | undefined {
  return (
    /score_(\d+)/.exec($(subtext).find('span[id^="score_"]').attr('id') ?? '')?.[1] ??
    /up_(\d+)/.exec($(row).find('a[id^="up_"]').attr('id') ?? '')?.[1] ??
    /item\?id=(\d+)/.exec($(subtext).find('a[href^="item?id="]').last().attr('href') ?? '')?.[1] ??
    /item\?id=(\d+)/.exec($(row).find('td.title a').first().attr('href') ?? '')?.[1]
  );
}

/**
 * An item page's story table as `table.fatitem`, its comment form posting to `comment`, and its
 * comments as the later `tr.athing.comtr` rows (id from the comment's own `item?id=` link, depth
 * in `td.ind`, text in `.commtext`, author `a.hnuser`) in a `table.comment-tree`.
 */
function itemPageEdits(
  $: cheerio.CheerioAPI,
  storyRow: Element,
  story: string,
  { afterName, replaceStartTag, wrapInner, edits }: { afterName: (el: Element, text: string) => void; replaceStartTag: (el: Element, text: string) => void; wrapInner: (el: Element, open: string) => void; edits: Edit[] },
): void {
  const fatitem = $(storyRow).closest('table')[0] as Element | undefined;
  if (fatitem) afterName(fatitem, ' class="fatitem"');
  const form = $('textarea[name="text"]').closest('form')[0] as Element | undefined;
  if (form) {
    replaceStartTag(form, '<form action="comment" method="post">');
    const fields = `<input type="hidden" name="parent" value="${story}"><input type="hidden" name="goto" value="item?id=${story}"><input type="hidden" name="hmac" value="">`;
    const fnid = $(form).find('input[name="fnid"]')[0];
    const at = fnid ? fnid.sourceCodeLocation! : { startOffset: form.sourceCodeLocation!.startTag!.endOffset, endOffset: form.sourceCodeLocation!.startTag!.endOffset };
    edits.push({ start: at.startOffset, end: at.endOffset, text: fields });
  }
  let tree: Element | undefined;
  for (const body of $('span.comment').toArray()) {
    const inner = $(body).closest('tr');
    const outer = (inner.closest('table').closest('tr')[0] ?? inner[0]) as Element;
    const id = /item\?id=(\d+)/.exec(inner.find('span.comhead a[href^="item?id="]').first().attr('href') ?? '')?.[1];
    if (!id) continue;
    afterName(outer, ` class="athing comtr" id="${id}"`);
    const indent = inner.children('td').first()[0] as Element | undefined;
    if (indent && $(indent).find('img').length > 0) afterName(indent, ' class="ind"');
    const user = inner.find('span.comhead a[href^="user?id="]').first()[0] as Element | undefined;
    if (user) afterName(user, ' class="hnuser"');
    wrapInner(body, '<span class="commtext">');
    tree ??= $(outer).closest('table')[0] as Element | undefined;
  }
  if (tree && tree !== fatitem) afterName(tree, ' class="comment-tree"');
}

/**
 * The first match of `pattern` in one of `el`'s own text nodes wrapped in `open`…`</span>` (its
 * first group, when it has one); the offset where the wrap ends, or undefined when nothing matched.
 */
function wrapTextMatch(el: Element, pattern: RegExp, open: string, edits: Edit[]): number | undefined {
  for (const child of el.children) {
    if (child.type !== 'text' || !child.sourceCodeLocation) continue;
    const match = pattern.exec((child as Text).data);
    if (!match) continue;
    const found = match[1] ?? match[0];
    const start = child.sourceCodeLocation.startOffset + match.index + match[0].indexOf(found);
    const end = start + found.length;
    edits.push({ start, end: start, text: open }, { start: end, end, text: '</span>' });
    return end;
  }
  return undefined;
}

/** The edits applied, last first; edits at one place keep the order they were made in. */
function applyEdits(html: string, edits: readonly Edit[]): string {
  const ordered = edits.map((edit, index) => ({ ...edit, index })).sort((a, b) => b.start - a.start || b.index - a.index);
  return ordered.reduce((text, edit) => text.slice(0, edit.start) + edit.text + text.slice(edit.end), html);
}
