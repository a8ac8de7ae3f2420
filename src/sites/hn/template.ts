import * as cheerio from 'cheerio';
import type { Element } from 'domhandler';
import { escapeHtml } from '../../text.ts';
import type { HnComment } from './snapshot.ts';

/**
 * A captured page compiled once into literal text and slots. Every per-request difference between
 * the logged-out capture and what a user sees (top bar, vote links, points, unvote, flag/hide,
 * favorite, a story row the user has hidden) is a slot; everything else is served byte for byte,
 * so rendering is string concatenation.
 */
export type Slot =
  | { kind: 'topbar'; original: string; goto: string }
  | { kind: 'vote'; original: string; id: string; goto: string; fragment: string }
  | { kind: 'score'; original: string; id: string }
  | { kind: 'unvote'; original: string; id: string; goto: string; fragment: string }
  /**
   * `listed`: in a listing's row, where HN's script hides in the background; an item page's link just loads `hide`.
   * `own`: the replica's own link where the era had none (pre-2014): nothing logged out, and ` | ` before it logged in.
   */
  | { kind: 'hide'; original: string; id: string; goto: string; listed: boolean; own?: boolean }
  | { kind: 'fave'; original: string; id: string; own?: boolean }
  /** A listing's story row (with its subtext and spacer rows): shown only when the page's view lists it. */
  | { kind: 'row'; id: string; parts: Template }
  /** A row's rank on a list page that numbers its rows as shown (`/hidden`, `/favorites`). */
  | { kind: 'rank' }
  /** A story's "N comments" link text: the captured count plus the comments written on the replica. */
  | { kind: 'comments'; original: string; id: string; count: number }
  /** The comment form's `hmac`, bound to the user and the item it answers (`parent`). */
  | { kind: 'hmac'; original: string; parent: string }
  /** Where the comments written on the replica under `parent` go: atop the tree (the story's), or right under their parent comment's row. */
  | { kind: 'thread'; parent: string; indent: number };
export type Template = ReadonlyArray<string | Slot>;

/**
 * How the capture's era marks up logged-in vote links: 2025 `class='clicky'`, before that `onclick`,
 * and before 2014 news.arc's `onclick="return vote(this)"`, whose script pings the link's
 * `vote?for=ID&dir=up&by=USER&auth=…&whence=` with an image.
 */
export type VoteStyle = 'clicky' | 'onclick' | 'ping';

export interface PageView {
  style: VoteStyle;
  user?: { name: string; karma: number; logoutAuth: string };
  voted(id: string): boolean;
  hidden(id: string): boolean;
  faved(id: string): boolean;
  /** Whether a listing shows story `id`'s row: `/news` leaves out what the user hid, `/hidden` shows only that. */
  lists(id: string): boolean;
  points(id: string): number;
  auth(id: string): string;
  /** The comments written on the replica that answer `parent` (a story or a comment), newest first. */
  replies(parent: string): readonly HnComment[];
  /** How many live comments were written on the replica on story `id`: added to its captured count. */
  commentsAdded(id: string): number;
}

/** Where a piece of the captured markup starts and ends. */
interface Span {
  start: number;
  end: number;
}

interface Edit extends Span {
  slot: Slot;
}

/** `renumber`: the page numbers its rows as shown (a list of the user's own), not by front-page rank. */
export function compileTemplate(html: string, { renumber = false } = {}): Template {
  const $ = cheerio.load(html, { sourceCodeLocationInfo: true });
  const edits: Edit[] = [];
  const whole = (el: Element) => range(html, el.sourceCodeLocation!.startOffset, el.sourceCodeLocation!.endOffset);
  const startTag = (el: Element) => {
    const tag = el.sourceCodeLocation!.startTag!;
    return range(html, tag.startOffset, tag.endOffset);
  };
  const inner = (el: Element) => {
    const loc = el.sourceCodeLocation!;
    return range(html, loc.startTag!.endOffset, loc.endTag?.startOffset ?? loc.startTag!.endOffset);
  };

  $('span.pagetop a[href^="login"]').each((_, el) => {
    const [start, end, original] = whole(el);
    edits.push({ start, end, slot: { kind: 'topbar', original, goto: gotoOf($(el).attr('href')) } });
  });
  $('a[id^="up_"]').each((_, el) => {
    const id = el.attribs.id!.slice(3);
    const href = parseHref($(el).attr('href'));
    // Logged in, HN points comment votes back at the comment itself.
    if (!href.fragment && $(el).closest('tr.comtr').length > 0) href.fragment = `#${id}`;
    const [start, end, original] = startTag(el);
    edits.push({ start, end, slot: { kind: 'vote', original, id, goto: href.goto, fragment: href.fragment } });
    const unvote = $(`span[id="unv_${id}"]`)[0];
    if (unvote) {
      const [uStart, uEnd, uOriginal] = inner(unvote);
      edits.push({ start: uStart, end: uEnd, slot: { kind: 'unvote', original: uOriginal, id, ...href } });
    }
  });
  $('span[id^="score_"]').each((_, el) => {
    const [start, end, original] = inner(el);
    edits.push({ start, end, slot: { kind: 'score', original, id: el.attribs.id!.slice(6) } });
  });
  const listed = (el: Element) => $(el).closest('table.fatitem').length === 0;
  $('a[href^="hide?"]').each((_, el) => {
    const href = $(el).attr('href')!;
    const id = new URLSearchParams(href.slice(5)).get('id');
    if (!id) return;
    const [start, end, original] = whole(el);
    edits.push({ start, end, slot: { kind: 'hide', original, id, goto: gotoOf(href), listed: listed(el) } });
  });
  // The replica's own links in a pre-2014 page (legacy.ts): they go back to where the page's votes go.
  const pageGoto = gotoOf($('a[id^="up_"]').first().attr('href'));
  $('span[data-hide]').each((_, el) => {
    const [start, end] = whole(el);
    edits.push({ start, end, slot: { kind: 'hide', original: '', id: el.attribs['data-hide']!, goto: pageGoto, listed: listed(el), own: true } });
  });
  $('a[href^="fave?"]').each((_, el) => {
    const id = new URLSearchParams($(el).attr('href')!.slice(5)).get('id');
    if (!id) return;
    const [start, end, original] = whole(el);
    edits.push({ start, end, slot: { kind: 'fave', original, id } });
  });
  $('span[data-fave]').each((_, el) => {
    const [start, end] = whole(el);
    edits.push({ start, end, slot: { kind: 'fave', original: '', id: el.attribs['data-fave']!, own: true } });
  });
  commentSlots($, edits, { whole, startTag, inner });
  // A listing's story rows (an item page's story stays, whatever the user hid).
  const rows: Array<Span & { id: string }> = [];
  $('tr.athing').not('.comtr').each((_, el) => {
    if ($(el).closest('table.fatitem').length > 0) return;
    const subtext = $(el).next('tr');
    const spacer = subtext.next('tr.spacer');
    const last = (spacer[0] ?? subtext[0] ?? el) as Element;
    rows.push({ start: el.sourceCodeLocation!.startOffset, end: last.sourceCodeLocation!.endOffset, id: el.attribs.id! });
    if (!renumber) return;
    const rank = $(el).find('span.rank')[0];
    if (rank) {
      const [start, end] = inner(rank);
      edits.push({ start, end, slot: { kind: 'rank' } });
    }
  });
  return assemble(html, 0, html.length, edits, rows);
}

type Locate = (el: Element) => [number, number, string];

/** A comment row's depth: `td.ind`'s `indent` (2022 on), or before that its spacer's width over 40. */
export function indentOf($: cheerio.CheerioAPI, row: Element): number {
  const cell = $(row).find('td.ind').first();
  return Number(cell.attr('indent') ?? Number(cell.find('img').attr('width') ?? 0) / 40);
}

/** A story's comment count from its subtext's link: "N comments", or 0 for "discuss". */
export function commentCountOf(link: string): number {
  return /comment/.test(link) ? Number.parseInt(link, 10) : 0;
}

/**
 * A page's comment slots: each story's "N comments" link, the comment form's `hmac`, and where the
 * replica's new comments go in the tree (atop it, and under each comment row).
 */
function commentSlots($: cheerio.CheerioAPI, edits: Edit[], { whole, startTag, inner }: Record<'whole' | 'startTag' | 'inner', Locate>): void {
  $('tr.athing').not('.comtr').each((_, row) => {
    const id = row.attribs.id!;
    const link = $(row).next('tr').find(`a[href="item?id=${id}"]`).filter((_, a) => /comment|discuss/.test($(a).text())).last()[0];
    if (!link) return;
    const [start, end, original] = inner(link);
    const count = commentCountOf($(link).text());
    edits.push({ start, end, slot: { kind: 'comments', original, id, count } });
  });
  $('form[action="comment"] input[name="hmac"]').each((_, el) => {
    const [start, end, original] = whole(el);
    edits.push({ start, end, slot: { kind: 'hmac', original, parent: $(el).closest('form').find('input[name="parent"]').attr('value') ?? '' } });
  });
  const story = $('table.fatitem tr.athing').first().attr('id');
  const tree = $('table.comment-tree')[0];
  if (!story || !tree) return;
  const [, atop] = startTag(tree);
  edits.push({ start: atop, end: atop, slot: { kind: 'thread', parent: story, indent: 0 } });
  $(tree)
    .find('tr.athing.comtr')
    .each((_, row) => {
      const [, end] = whole(row);
      edits.push({ start: end, end, slot: { kind: 'thread', parent: row.attribs.id!, indent: indentOf($, row) + 1 } });
    });
}

/** The text from `start` to `end` with its slots, each row's own slots nested inside the row. */
function assemble(html: string, start: number, end: number, edits: readonly Edit[], rows: ReadonlyArray<Span & { id: string }>): Template {
  const parts: Array<string | Slot> = [];
  const inside = (outer: Span) => (edit: Span) => edit.start >= outer.start && edit.end <= outer.end;
  const pieces: Edit[] = [
    ...rows.map((row) => ({ ...row, slot: { kind: 'row' as const, id: row.id, parts: assemble(html, row.start, row.end, edits.filter(inside(row)), []) } })),
    ...edits.filter((edit) => !rows.some((row) => inside(row)(edit))),
  ].sort((a, b) => a.start - b.start);
  let cursor = start;
  for (const piece of pieces) {
    if (piece.start < cursor) continue; // nested markup already covered by an earlier slot
    parts.push(html.slice(cursor, piece.start), piece.slot);
    cursor = piece.end;
  }
  parts.push(html.slice(cursor, end));
  return parts.filter((part) => part !== '');
}

export function renderTemplate(template: Template, view: PageView): string {
  return renderParts(template, view, { shown: 0 });
}

function renderParts(template: Template, view: PageView, rows: { shown: number }): string {
  let out = '';
  for (const part of template) out += typeof part === 'string' ? part : renderSlot(part, view, rows);
  return out;
}

function renderSlot(slot: Slot, view: PageView, rows: { shown: number }): string {
  const { user, style } = view;
  switch (slot.kind) {
    case 'row':
      if (!view.lists(slot.id)) return '';
      rows.shown += 1;
      return renderParts(slot.parts, view, rows);
    case 'rank':
      return `${rows.shown}.`;
    case 'score': {
      const points = view.points(slot.id);
      return `${points} point${points === 1 ? '' : 's'}`;
    }
    case 'topbar':
      if (!user) return slot.original;
      return (
        `<a id='me' href="user?id=${user.name}">${user.name}</a> ` +
        (style === 'clicky' ? `(<span id='karma'>${user.karma}</span>)` : `(${user.karma})`) +
        ` | <a id='logout' rel='nofollow' href="logout?auth=${user.logoutAuth}&amp;goto=${encodeGoto(slot.goto)}">logout</a>`
      );
    case 'vote': {
      if (!user) return slot.original;
      const voted = view.voted(slot.id);
      if (style === 'ping') return `<a id=up_${slot.id} onclick="return vote(this)" href="${pingHref(slot.id, 'up', user.name, view.auth(slot.id), slot.goto)}"${voted ? ' style="visibility:hidden"' : ''}>`;
      const href = voteHref(slot.id, 'up', view.auth(slot.id), slot.goto, slot.fragment);
      if (style === 'clicky') return `<a id='up_${slot.id}' class='clicky${voted ? ' nosee' : ''}' href='${href}'>`;
      return `<a id='up_${slot.id}' onclick='return vote(event, this, "up")' href='${href}'${voted ? " class='nosee'" : ''}>`;
    }
    case 'unvote': {
      if (!user || !view.voted(slot.id)) return slot.original;
      // The era had no unvote: the replica's own, a plain link back to the page.
      if (style === 'ping') return ` | <a id=un_${slot.id} href="${pingHref(slot.id, 'un', user.name, view.auth(slot.id), slot.goto)}">unvote</a>`;
      const href = voteHref(slot.id, 'un', view.auth(slot.id), slot.goto, slot.fragment);
      const script = style === 'clicky' ? "class='clicky'" : `onclick='return vote(event, this, "un")'`;
      return ` | <a id='un_${slot.id}' ${script} href='${href}'>unvote</a>`;
    }
    case 'hide': {
      if (!user) return slot.original;
      const [auth, goto] = [`auth=${view.auth(slot.id)}`, `goto=${encodeGoto(slot.goto)}`];
      const lead = slot.own ? ' | ' : '';
      const flag = `${lead}<a href="flag?id=${slot.id}&amp;${auth}&amp;${goto}" rel="nofollow">flag</a> | `;
      if (view.hidden(slot.id)) return `${flag}<a href="hide?id=${slot.id}&amp;un=t&amp;${auth}&amp;${goto}">un-hide</a>`;
      // In a listing HN's script hides in the background: 2025 marks the link `clicky hider`, earlier pages call `hidestory` from it; before 2014 it is a plain link.
      const hider = !slot.listed || style === 'ping' ? '' : style === 'clicky' ? ' class="clicky hider"' : ` onclick="return hidestory(event, this, ${slot.id})"`;
      return `${flag}<a href="hide?id=${slot.id}&amp;${auth}&amp;${goto}"${hider}>hide</a>`;
    }
    case 'fave': {
      if (!user) return slot.original;
      const lead = slot.own ? ' | ' : '';
      if (view.faved(slot.id)) return `${lead}<a href="fave?id=${slot.id}&amp;un=t&amp;auth=${view.auth(slot.id)}">un-favorite</a>`;
      return `${lead}<a href="fave?id=${slot.id}&amp;auth=${view.auth(slot.id)}">favorite</a>`;
    }
    case 'comments': {
      const added = view.commentsAdded(slot.id);
      if (added === 0) return slot.original;
      const count = slot.count + added;
      return `${count}&nbsp;comment${count === 1 ? '' : 's'}`;
    }
    case 'hmac':
      return user ? `<input type="hidden" name="hmac" value="${view.auth(slot.parent)}">` : slot.original;
    case 'thread':
      return renderThread(view, slot.parent, slot.indent);
  }
}

/** The replica's comments under `parent`, newest first, each followed by its own replies one indent deeper. */
function renderThread(view: PageView, parent: string, indent: number): string {
  return view
    .replies(parent)
    .map((comment) => commentRow(view.style, comment, { indent }) + renderThread(view, comment.id, indent + 1))
    .join('');
}

/** What HN shows in place of a dead comment's text, to a visitor without showdead. */
export const DEAD = '[dead]';

/** HN stores a comment as HTML: escaped, paragraphs (apart by a blank line) split by a bare `<p>`. */
export function commentHtml(text: string): string {
  return text.split(/\n\s*\n/).map(escapeHtml).join('<p>');
}

/**
 * A comment written on the replica as a row of a comment tree, in the era's markup (2025 on:
 * double quotes and `indent`; before: single quotes). It has no vote arrow: the replica keeps
 * votes on captured items only. `on` names its story, as `/threads` does, after a link to its parent.
 */
export function commentRow(style: VoteStyle, comment: HnComment, { indent = 0, on }: { indent?: number; on?: string } = {}): string {
  const { id, by, story } = comment;
  const reply = comment.dead ? '' : `<u><a href="reply?id=${id}&amp;goto=${encodeGoto(`item?id=${story}`)}%23${id}" rel="nofollow">reply</a></u>`;
  const onStory = on === undefined ? '' : `<span class="navs"> | <a href="item?id=${comment.parent}">parent</a><span class="onstory"> | on: <a href="item?id=${story}">${escapeHtml(on)}</a></span></span>`;
  const head =
    `<a href="user?id=${escapeHtml(by)}" class="hnuser">${escapeHtml(by)}</a> <span class="age"><a href="item?id=${id}">just now</a></span> <span id="unv_${id}"></span>${onStory}`;
  const spacer = `<td valign="top" class="votelinks"><center><img src="s.gif" height="1" width="14"></center></td>`;
  const text = comment.dead ? DEAD : commentHtml(comment.text);
  const body = (tag: string) =>
    `<div style="margin-top:2px; margin-bottom:-10px;"><span class="comhead">${head}</span></div><br>\n<div class="comment"><${tag} class="commtext c00">${text}</${tag}><div class="reply"><p><font size="1">${reply}</font></div></div>`;
  if (style === 'clicky') {
    return `<tr class="athing comtr" id="${id}"><td><table border="0"><tr><td class="ind" indent="${indent}"><img src="s.gif" height="1" width="${indent * 40}"></td>${spacer}<td class="default">${body('div')}</td></tr></table></td></tr>`;
  }
  return `<tr class='athing comtr ' id='${id}'><td><table border='0'><tr><td class='ind'><img src="s.gif" height="1" width="${indent * 40}"></td>${spacer}<td class="default">${body('span')}</td></tr></table></td></tr>\n`;
}

function voteHref(id: string, how: 'up' | 'un', auth: string, goto: string, fragment: string): string {
  return `vote?id=${id}&amp;how=${how}&amp;auth=${auth}&amp;goto=${encodeGoto(goto)}${fragment}`;
}

/** A pre-2014 vote link: news.arc's parameters (`for`, `dir`, `by`, `whence`) and the replica's `auth`. */
function pingHref(id: string, dir: 'up' | 'un', user: string, auth: string, whence: string): string {
  return `vote?for=${id}&amp;dir=${dir}&amp;by=${encodeURIComponent(user)}&amp;auth=${auth}&amp;whence=${encodeGoto(whence)}`;
}

/** HN writes `goto` percent-encoded (`news%3Fp%3D2`), with `/` kept. */
export function encodeGoto(goto: string): string {
  return encodeURIComponent(goto).replace(/%2F/g, '/');
}

function gotoOf(href: string | undefined): string {
  return parseHref(href).goto;
}

function parseHref(href: string | undefined): { goto: string; fragment: string } {
  const url = new URL(href ?? '', 'https://news.ycombinator.com/');
  // Before 2014 a vote link's way back is its `whence`.
  return { goto: url.searchParams.get('goto') ?? url.searchParams.get('whence') ?? 'news', fragment: url.hash };
}

function range(html: string, start: number, end: number): [number, number, string] {
  return [start, end, html.slice(start, end)];
}

/**
 * One comment on a page of its own (its item page, `/reply`): who wrote it, links to its parent
 * and story (and `favorite`), its text, and the reply form posting to `goto`; a dead one has no form.
 */
export function commentItem(comment: HnComment, title: string, { goto, fave = false }: { goto: string; fave?: boolean }): string {
  const { id, by, parent, story } = comment;
  const favorite = fave ? `<a href="fave?id=${id}&amp;auth=">favorite</a> | ` : '';
  const head =
    `<a href="user?id=${escapeHtml(by)}" class="hnuser">${escapeHtml(by)}</a> | <a href="item?id=${parent}">parent</a> | ` +
    `${favorite}on: <a href="item?id=${story}">${escapeHtml(title)}</a>`;
  const form = comment.dead
    ? ''
    : `<tr style="height:10px"></tr><tr><td><form action="comment" method="post"><input type="hidden" name="parent" value="${id}"><input type="hidden" name="goto" value="${escapeHtml(goto)}">` +
      `<input type="hidden" name="hmac" value=""><textarea name="text" rows="8" cols="80" wrap="virtual"></textarea><br><br><input type="submit" value="reply"></form></td></tr>`;
  const text = comment.dead ? DEAD : commentHtml(comment.text);
  return (
    `<tr><td><table class="fatitem" border="0"><tr class="athing" id="${id}"><td class="default"><span class="comhead">${head}</span><br>` +
    `<div class="comment"><span class="commtext c00">${text}</span></div></td></tr>${form}</table><br><br></td></tr>`
  );
}
