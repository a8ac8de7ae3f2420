import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as cheerio from 'cheerio';
import type { Element } from 'domhandler';
import { InputError } from '../../input.ts';
import type { Faults } from './options.ts';
import { modernizeLegacy } from './legacy.ts';
import { sanitizeCapture } from './sanitize.ts';
import { firstRankOn, pageOfRank } from './paging.ts';
import type { HnComment, Submission } from './snapshot.ts';
import { commentCountOf, commentItem, compileTemplate, DEAD, encodeGoto, indentOf, type Template, type VoteStyle } from './template.ts';
import { compareStrings, escapeHtml } from '../../text.ts';

/** Something on the site that can be voted on, as the capture shows it before any vote. */
export interface Item {
  id: string;
  kind: 'story' | 'comment';
  /** Rank on the front pages (stories only, 1-based). */
  rank?: number;
  title?: string;
  points?: number;
  author?: string;
  /** The domain shown after a story's title (`sitestr`). */
  site?: string;
  /** The story's comment count as its subtext shows it ("discuss" is 0); absent on a job. */
  comments?: number;
  /** Unix seconds, when the age's `title` gives them (2025 markup on). */
  time?: number;
  /** A job ad: no vote arrow, no score, no poster. */
  job?: boolean;
  /** Where the title links to, when off the site (a text post, Ask HN, links to its own item page). */
  url?: string;
  /** A story whose captured item page takes no comments (no comment form, no reply link): HN closes old threads. */
  closed?: boolean;
}

/** A story row's markup (the row and its subtext), kept to derive its item page and the listings. */
export interface StoryRow {
  id: string;
  title: string;
  markup: string;
  /** A text post's text as markup, shown under the story on its item page. */
  text?: string;
}

/** The page that holds every listing: the capture's markup before and after its list of rows. */
interface Frame {
  head: string;
  foot: string;
}

export interface Capture {
  source: string;
  style: VoteStyle;
  items: ReadonlyMap<string, Item>;
  /**
   * Front pages by number: index 0 is `/news`, 1 is `/news?p=2`. A page the capture starts after
   * (a capture of page 2 alone) is a page in the frame that says so and links to the next page.
   */
  frontPages: readonly Template[];
  emptyPage: Template;
  itemPage(id: string): Template | undefined;
  /**
   * A list of the user's own (`/hidden`, `/favorites`): every front-page story row, in rank order,
   * numbered as shown; the page's view picks the rows. `title` names the page, `goto` its path.
   */
  listPage(title: string, goto: string): Template;
  /** Every comment on the captured item pages, page by page in thread order. */
  comments: readonly HnComment[];
  /** The front pages' story rows, in rank order: what the derived listings (`/newest`, `/ask`, …) pick from. */
  storyRows: ReadonlyMap<string, StoryRow>;
  /**
   * A story submitted on the replica as a row in this capture's markup: a captured link story's
   * row with the story's facts put in; undefined for a capture with no such row (only item pages).
   */
  submittedRow(story: Submission): StoryRow | undefined;
  /** The item page derived from a story row (a captured one, or a submitted story's). */
  derivedItemPage(row: StoryRow): Template;
  /**
   * One page of a derived listing: `rows` in the news frame, numbered from `firstRank`, and a
   * `More` link to `more` when there are more. `title` names the page, `goto` is its path.
   */
  listing(title: string, goto: string, rows: readonly StoryRow[], firstRank: number, more?: string): Template;
  /** A page of the replica's own in the news frame (`/submit`, `/reply`, `/user`): `rows` (table rows) between its head and foot, as `op`, titled `title`, its `goto`s pointing at `goto`. */
  framePage(op: string, title: string, goto: string, rows: string): Template;
}

const fixturesRoot = fileURLToPath(new URL('../../../fixtures/hn/', import.meta.url));

const loaded = new Map<string, Capture>();

/**
 * Loads a capture file or folder, or the project's own fixture pages in the chosen markup year.
 * A capture is immutable once compiled, so each is parsed once per process, however many sites use it.
 */
export function loadCapture(capture: string | undefined, faults: Faults): Capture {
  const key = JSON.stringify([capture, faults.markupYear, faults.injection]);
  let result = loaded.get(key);
  if (!result) loaded.set(key, (result = compileCapture(capture, faults)));
  return result;
}

function compileCapture(capture: string | undefined, faults: Faults): Capture {
  const source = capture ?? join(fixturesRoot, String(faults.markupYear));
  const pages = capturePages(source, faults);
  const first = pages[0]!;
  const frame = frameOf(first.html, first.$);
  const items = new Map<string, Item>();
  const storyRows = new Map<string, StoryRow>();
  const capturedItems = new Map<string, Template>();
  const frontPages: Template[] = [];
  const comments: HnComment[] = [];

  const fronts = pages.filter((page) => page.kind === 'front');
  const listed = new Set(fronts.flatMap((page) => page.storyRows.map((row) => row.id)));
  // Item pages whose story no captured front page lists: a page after the front pages lists them.
  // (`all`, not `pages`: a closure naming `pages` would keep every parsed page, a few MB, as long as the capture.)
  const unlisted = pages.filter((page, index, all) => page.kind === 'item' && !listed.has(page.itemId!) && all.findIndex((other) => other.itemId === page.itemId) === index);
  const lastFront = unlisted.length > 0 ? undefined : fronts.at(-1);
  for (const page of pages) {
    for (const item of page.items) if (!items.has(item.id)) items.set(item.id, item);
    if (page.kind === 'front') {
      for (const row of page.storyRows) storyRows.set(row.id, row);
      // Past the last page the list is empty, so the last page has no `More`, as HN's last page.
      const number = Math.max(frontPages.length + 1, pageNumberOf(page));
      while (frontPages.length < number - 1) frontPages.push(compileTemplate(notCaptured(frame, frontPages.length + 1, number)));
      frontPages.push(compileTemplate(page === lastFront ? withoutMore(page.html, page.$) : page.html));
    } else if (!capturedItems.has(page.itemId!)) {
      capturedItems.set(page.itemId!, compileTemplate(page.html));
      comments.push(...commentsOn(page.$, page.itemId!));
    }
  }
  if (unlisted.length > 0) {
    const ranks = fronts.flatMap((page) => page.items.flatMap((item) => item.rank ?? []));
    frontPages.push(compileTemplate(pageOfItems(frame, unlisted, { items, storyRows, firstRank: Math.max(0, ...ranks) + 1, page: frontPages.length + 1 })));
  }

  const commentsById = new Map(comments.map((comment) => [comment.id, comment]));
  const derivedItems = new BoundedCache<Template>(1000);
  const listPages = new Map<string, Template>();
  const derivedPages = new BoundedCache<Template>(200);
  const submittedRows = new BoundedCache<StoryRow>(1000);
  // The row a submitted story's is made from: a link story's, with a score and a poster.
  const model = [...storyRows.values()].find((row) => {
    const item = items.get(row.id);
    return item?.url && item.site && item.author && item.points !== undefined;
  });
  // By the row's content, not its id: a capture serves many replicas, and each numbers its submissions from the same first id.
  const derivedItemPage = (row: StoryRow) => derivedItems.get(`${row.markup}\n${row.text ?? ''}`, () => compileTemplate(deriveItemPage(frame, row)));
  return {
    source,
    style: pages.some((page) => page.legacy) ? 'ping' : pages.some((page) => page.$('tr.athing.submission').length > 0) ? 'clicky' : 'onclick',
    items,
    frontPages,
    emptyPage: compileTemplate(frame.head + '<tr><td><table border="0" cellpadding="0" cellspacing="0"></table></td></tr>' + frame.foot),
    itemPage(id) {
      const captured = capturedItems.get(id);
      if (captured) return captured;
      const row = storyRows.get(id);
      if (row) return derivedItemPage(row);
      const comment = commentsById.get(id);
      return comment && derivedItems.get(`comment ${id}`, () => compileTemplate(deriveCommentPage(frame, comment, items.get(comment.story)?.title ?? '')));
    },
    listPage(title, goto) {
      const key = JSON.stringify([title, goto]);
      let list = listPages.get(key);
      if (!list) listPages.set(key, (list = compileTemplate(deriveListPage(frame, [...storyRows.values()], title, goto), { renumber: true })));
      return list;
    },
    comments,
    storyRows,
    submittedRow(story) {
      return model && submittedRows.get(JSON.stringify(story), () => deriveSubmittedRow(model, story));
    },
    derivedItemPage,
    listing(title, goto, rows, firstRank, more) {
      const numbered = rows.map((row, index) => ({ ...row, markup: withRank(row.markup, `${firstRank + index}.`) }));
      const page = deriveListPage(frame, numbered, title, goto, more);
      return derivedPages.get(page, () => compileTemplate(page));
    },
    framePage(op, title, goto, rows) {
      const page = framed(frame, op, escapeHtml(title), goto, rows);
      return derivedPages.get(page, () => compileTemplate(page));
    },
  };
}

/**
 * The front page listing item pages' stories that no captured front page lists (all of a capture
 * of item pages only, on page 1; else on the page after the captured ones), ranked from
 * `firstRank` in the order captured, each row as its item page shows it (less the `favorite` link
 * a listing does not have). The stories get those ranks, and their rows are the ones the derived
 * listings pick from.
 */
function pageOfItems(frame: Frame, pages: readonly ParsedPage[], into: { items: Map<string, Item>; storyRows: Map<string, StoryRow>; firstRank: number; page: number }): string {
  const { items, storyRows, firstRank, page } = into;
  const rows = pages.map(listedRow);
  rows.forEach((row, index) => {
    items.set(row.id, { ...items.get(row.id)!, rank: firstRank + index });
    storyRows.set(row.id, row);
  });
  const numbered = rows.map((row, index) => ({ ...row, markup: withRank(row.markup, `${firstRank + index}.`) }));
  const goto = page > 1 ? `news?p=${page}` : 'news';
  return deriveListPage(frame, numbered, 'news', goto).replace(/<title>[^<]*<\/title>/, '<title>Hacker News</title>');
}

/** An item page's story as a listing's row: its row and subtext, without the item page's `favorite` link. */
function listedRow(page: ParsedPage): StoryRow {
  const row = storyRowsOn(page.$)[0]!;
  const markup = rowMarkup(page.html, row).replace(/ \| <a href="fave\?id=\d+">favorite<\/a>/, '');
  return { id: row.attribs.id!, title: titleLink(page.$, row).html() ?? '', markup };
}

/**
 * A capture's pages: the file, or a folder's `.html` pages taken by what they are, whatever their
 * names (`record`'s `news.html`, `news-p2.html`, `item-ID.html`, or pages saved by hand): front
 * pages in the order of their ranks, then item pages by name. A page with no story row (a saved
 * login page) holds none of the site's state and is left out.
 */
function capturePages(source: string, faults: Faults): ParsedPage[] {
  if (!existsSync(source)) throw new InputError(`capture not found: ${source}`);
  if (!statSync(source).isDirectory()) return [parsePage(source, faults) ?? noRows(source)];
  const names = readdirSync(source).filter((name) => name.endsWith('.html')).sort(compareStrings);
  const pages = names.flatMap((name) => parsePage(join(source, name), faults) ?? []);
  if (pages.length === 0) throw new InputError(`capture folder ${source} has no front or item page (no .html page with story rows: ${STORY_ROWS})`);
  const fronts = pages.filter((page) => page.kind === 'front').sort((a, b) => firstRank(a) - firstRank(b));
  return [...fronts, ...pages.filter((page) => page.kind === 'item')];
}

/** What the reader looks for, in every era it reads. */
const STORY_ROWS = 'tr.athing, or before 2014 a row over a td.subtext';

function noRows(file: string): never {
  throw new InputError(`capture ${file} has no story rows (${STORY_ROWS})`);
}

interface ParsedPage {
  kind: 'front' | 'item';
  html: string;
  $: cheerio.CheerioAPI;
  items: Item[];
  storyRows: StoryRow[];
  itemId?: string;
  /** Read from pre-2014 markup (legacy.ts). */
  legacy: boolean;
}

/** The first rank a page lists; Infinity for an item page (its story has no rank). */
const firstRank = (page: ParsedPage) => Math.min(...page.items.map((item) => item.rank ?? Infinity));

/** A front page's number, from its first rank: ranks 31 to 60 are page 2 (`news?p=2`). */
function pageNumberOf(page: ParsedPage): number {
  const first = firstRank(page);
  return Number.isFinite(first) ? pageOfRank(first) : 1;
}

/** A front page the capture does not hold (it starts at a later page): the frame, saying so, with `More` to the next page. */
function notCaptured(frame: Frame, number: number, firstCaptured: number): string {
  const goto = number > 1 ? `news?p=${number}` : 'news';
  const notice = `<tr><td>This capture starts at page ${firstCaptured} of the front page (rank ${firstRankOn(firstCaptured)}): page ${number} was not captured.</td></tr>`;
  const more = `<tr class="morespace" style="height:10px"></tr><tr><td class="title"><a href="news?p=${number + 1}" class="morelink" rel="next">More</a></td></tr>`;
  return framed(frame, 'news', 'Hacker News', goto, `<tr><td><table border="0" cellpadding="0" cellspacing="0">${notice}${more}</table></td></tr>`).replace(/<title>[^<]*<\/title>/, '<title>Hacker News</title>');
}

/** A front or item page, parsed; undefined when it has no story row. */
function parsePage(file: string, faults: Faults): ParsedPage | undefined {
  const sanitized = sanitizeCapture(readFileSync(file, 'utf8'));
  let html = modernizeLegacy(sanitized);
  const legacy = html !== sanitized;
  let $ = cheerio.load(html, { sourceCodeLocationInfo: true });
  if (faults.injection) {
    html = injectIntoTitle(html, $, faults.injection.rank, faults.injection.text);
    $ = cheerio.load(html, { sourceCodeLocationInfo: true });
  }
  const rows = storyRowsOn($);
  if (rows.length === 0) return undefined;
  const isItem = $('table.fatitem').length > 0;
  const items: Item[] = rows.map((row) => storyOf($, row));
  if (isItem && $('form[action="comment"], a[href^="reply?"]').length === 0) items[0] = { ...items[0]!, closed: true };
  $('tr.athing.comtr').each((_, row) => {
    items.push({ id: row.attribs.id!, kind: 'comment', author: $(row).find('a.hnuser').first().text() || undefined });
  });
  const storyRows = isItem
    ? []
    : rows.map((row) => ({ id: row.attribs.id!, title: titleLink($, row).html() ?? '', markup: rowMarkup(html, row) }));
  return { kind: isItem ? 'item' : 'front', html, $, items, storyRows, itemId: isItem ? rows[0]!.attribs.id : undefined, legacy };
}

/** The story rows of a front or item page (not its comments). */
export function storyRowsOn($: cheerio.CheerioAPI): Element[] {
  return $('tr.athing').not('.comtr').toArray();
}

/** A story row as an item: id, rank, title, points, author, site, comments, time, and whether it is a job. */
export function storyOf($: cheerio.CheerioAPI, row: Element): Item {
  const id = row.attribs.id!;
  const subtext = $(row).next('tr');
  const score = $(`span[id="score_${id}"]`).text();
  const rank = Number.parseInt($(row).find('span.rank').text(), 10);
  const discussion = subtext.find(`a[href="item?id=${id}"]`).last().text();
  const time = Number.parseInt(subtext.find('span.age').attr('title')?.split(' ')[1] ?? '', 10);
  const job = $(row).find(`#up_${id}`).length === 0 && !score;
  const href = titleLink($, row).attr('href') ?? '';
  return {
    id,
    kind: 'story',
    rank: Number.isNaN(rank) ? undefined : rank,
    title: titleLink($, row).text(),
    points: score ? Number.parseInt(score, 10) : undefined,
    author: subtext.find('a.hnuser').first().text() || undefined,
    site: $(row).find('span.sitestr').first().text() || undefined,
    comments: job ? undefined : commentCountOf(discussion),
    time: Number.isNaN(time) ? undefined : time,
    job: job || undefined,
    url: /^https?:\/\//i.test(href) ? href : undefined,
  };
}

/**
 * The comments of an item page in thread order: each one's parent is the nearest comment above it
 * that is indented less, or else the story. Its text is the `commtext`'s, paragraphs (HN's bare `<p>`) apart by a blank line; a
 * dead comment reads `[dead]`, as HN shows it to a visitor without showdead.
 */
function commentsOn($: cheerio.CheerioAPI, story: string): HnComment[] {
  const above: Array<{ id: string; indent: number }> = [];
  return $('tr.athing.comtr')
    .toArray()
    .map((row) => {
      const indent = indentOf($, row);
      while (above.length > 0 && above[above.length - 1]!.indent >= indent) above.pop();
      const parent = above[above.length - 1]?.id ?? story;
      above.push({ id: row.attribs.id!, indent });
      // Before 2022 a paragraph (a bare `<p>`) leaves the `span.commtext` open, and the reply link ends up inside it.
      const body = $(row).find('.commtext').first().clone();
      body.find('.reply').remove();
      body.find('p').before('\n\n');
      const text = body.text().trim();
      const by = $(row).find('a.hnuser').first().text();
      return { id: row.attribs.id!, parent, story, by, text, ...(text === DEAD ? { dead: true } : {}) };
    });
}

/** The title link: `span.titleline > a` from 2022 on, `a.storylink` before. */
const TITLE_LINK = 'span.titleline > a, a.storylink';

function titleLink($: cheerio.CheerioAPI, row: Element) {
  return $(row).find(TITLE_LINK).first();
}

/** The story row and the subtext row after it, as captured. */
function rowMarkup(html: string, row: Element): string {
  let end = row.sourceCodeLocation!.endOffset;
  let next = row.nextSibling;
  while (next && next.type !== 'tag') next = next.nextSibling;
  if (next && (next as Element).name === 'tr') end = (next as Element).sourceCodeLocation!.endOffset;
  return html.slice(row.sourceCodeLocation!.startOffset, end);
}

/** The outermost table row around the listing splits a page into its frame and its rows. */
function frameOf(html: string, $: cheerio.CheerioAPI): Frame {
  const list = $('tr.athing').first().parents('tr').last()[0];
  if (!list?.sourceCodeLocation) return { head: '', foot: '' };
  return { head: html.slice(0, list.sourceCodeLocation.startOffset), foot: html.slice(list.sourceCodeLocation.endOffset) };
}

function injectIntoTitle(html: string, $: cheerio.CheerioAPI, rank: number, text: string): string {
  const row = storyRowsOn($).find((candidate) => Number.parseInt($(candidate).find('span.rank').text(), 10) === rank);
  const link = row && titleLink($, row)[0];
  const end = link?.sourceCodeLocation?.endTag?.startOffset;
  if (end === undefined) return html;
  return `${html.slice(0, end)} ${escapeHtml(text)}${html.slice(end)}`;
}

/**
 * Another page in the news frame: the frame's head with its `op`, `<title>` (`title`, markup) and
 * every `goto` changed, then `body` (table rows), then the frame's foot.
 */
function framed(frame: Frame, op: string, title: string, goto: string, body: string): string {
  const head = withGoto(frame.head.replace(/ op="news"/, ` op="${op}"`).replace(/<title>[^<]*<\/title>/, `<title>${title} | Hacker News</title>`), goto);
  return `${head}${body}${frame.foot}`;
}

/** Every `goto` (before 2014, `whence`) in `markup` pointed at `goto`. */
function withGoto(markup: string, goto: string): string {
  return markup.replace(/(goto|whence)=[^"'&#\s>]*/g, `$1=${encodeGoto(goto)}`);
}

/** A story row's markup with `rank` as its rank's text. */
function withRank(markup: string, rank: string): string {
  return markup.replace(/(<span class="rank">)[^<]*/, `$1${rank}`);
}

/** A story list page from story rows: the news frame, one row after another, and HN's `More` link to `more` when given. */
function deriveListPage(frame: Frame, rows: readonly StoryRow[], title: string, goto: string, more?: string): string {
  const list = rows.map((row) => `${withGoto(row.markup, goto)}<tr class="spacer" style="height:5px"></tr>`).join('\n');
  const moreLink = more
    ? `<tr class="morespace" style="height:10px"></tr><tr><td colspan="2"></td><td class="title"><a href="${escapeHtml(more)}" class="morelink" rel="next">More</a></td></tr>`
    : '';
  const body = `<tr><td><table border="0" cellpadding="0" cellspacing="0">${list}${moreLink}</table></td></tr>`;
  return framed(frame, goto.replace(/\?.*/, ''), escapeHtml(title), goto, body);
}

/** A front page without its `More` link and the space above it. */
function withoutMore(html: string, $: cheerio.CheerioAPI): string {
  const link = $('a.morelink').closest('tr')[0];
  if (!link?.sourceCodeLocation) return html;
  const space = $(link).prev('tr.morespace')[0];
  const start = (space ?? link).sourceCodeLocation!.startOffset;
  return html.slice(0, start) + html.slice(link.sourceCodeLocation.endOffset);
}

/**
 * A submitted story's row, made from a captured link story's row (`model`) so it is in the
 * capture's era of markup: its id, title, link, site, score (1 point), poster, age and comments
 * put in. A text post links to its own item page and shows no site.
 */
function deriveSubmittedRow(model: StoryRow, story: Submission): StoryRow {
  const $ = cheerio.load(`<table>${model.markup.replaceAll(model.id, story.id)}</table>`);
  const link = $(TITLE_LINK).first();
  link.text(story.title).attr('href', story.url ?? `item?id=${story.id}`);
  const site = siteOf(story.url);
  if (site) {
    $('span.sitestr').text(site);
    $('span.sitebit a').attr('href', `from?site=${site}`);
  } else {
    $('span.sitebit').remove();
  }
  $(`span[id="score_${story.id}"]`).text('1 point');
  $('a.hnuser').attr('href', `user?id=${story.by}`).text(story.by);
  // The replica keeps no time for a post: a fresh story, with no time in the age's title.
  $('span.age').removeAttr('title').find('a').text('0 minutes ago');
  $(`a[href="item?id=${story.id}"]`).last().text('discuss');
  const text = story.text && escapeHtml(story.text).replace(/\r?\n\r?\n/g, '<p>');
  return { id: story.id, title: escapeHtml(story.title), markup: $('table > tbody').html() ?? '', ...(text && { text }) };
}

/** The domain HN shows after a link's title: its host without `www.`. */
export function siteOf(url: string | undefined): string | undefined {
  if (!url) return undefined;
  try {
    return new URL(url).hostname.replace(/^www\./, '') || undefined;
  } catch {
    return undefined;
  }
}

/** A cache of derived pages by key, emptied when full: the derived variants are few, but a long run must not grow it without bound. */
class BoundedCache<Value> {
  private readonly entries = new Map<string, Value>();
  constructor(private readonly limit: number) {}
  get(key: string, make: () => Value): Value {
    let value = this.entries.get(key);
    if (value === undefined) {
      if (this.entries.size >= this.limit) this.entries.clear();
      this.entries.set(key, (value = make()));
    }
    return value;
  }
}

/** HN's item page for a story, from its front-page row: same frame, the row in `table.fatitem`, and a `favorite` link. */
function deriveItemPage(frame: Frame, row: StoryRow): string {
  const goto = `item?id=${row.id}`;
  // The favorite link goes before the comments link, the subtext's last link to the item.
  const comments = row.markup.lastIndexOf(`<a href="item?id=${row.id}">`);
  const faved = comments < 0 ? row.markup : `${row.markup.slice(0, comments)}<a href="fave?id=${row.id}">favorite</a> | ${row.markup.slice(comments)}`;
  const story = withRank(withGoto(faved, goto), '');
  const commentForm =
    `<tr style="height:10px"></tr><tr><td colspan="2"></td><td><form action="comment" method="post">` +
    `<input type="hidden" name="parent" value="${row.id}"><input type="hidden" name="goto" value="item?id=${row.id}"><input type="hidden" name="hmac" value="">` +
    `<textarea name="text" rows="8" cols="80" wrap="virtual"></textarea><br><br><input type="submit" value="add comment"></form></td></tr>`;
  const text = row.text ? `<tr><td colspan="2"></td><td><div class="toptext">${row.text}</div></td></tr>` : '';
  const tree = `<table border="0" class="comment-tree"></table>`;
  return framed(frame, 'item', row.title, goto, `<tr><td><table class="fatitem" border="0">${story}${text}${commentForm}</table><br><br>${tree}<br><br></td></tr>`);
}

/** HN's page of one comment (its age links to it): the comment with a `favorite` link, and the reply form. */
function deriveCommentPage(frame: Frame, comment: HnComment, title: string): string {
  const goto = `item?id=${comment.id}`;
  return framed(frame, 'item', escapeHtml(title), goto, commentItem(comment, title, { goto, fave: true }));
}
