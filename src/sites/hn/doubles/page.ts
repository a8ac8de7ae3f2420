/**
 * What a tool's result shows of the site, whatever the tool: harness-eval's JSON, a page's HTML,
 * its text, or a list of links. The doubles read stories, vote links, login walls and the
 * agent's own notes from it, as a model would.
 */

export interface StoryRow {
  id: string;
  rank: number | null;
  title: string;
  voted: boolean;
  votable: boolean;
  /** The upvote link's address as the page wrote it (relative, entities decoded), when the result shows it. */
  voteLink?: string;
}

/** Every string in a result, outermost first: a page's HTML or text may sit under any key. */
export function stringsIn(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.flatMap(stringsIn);
  if (typeof value === 'object' && value !== null) return Object.values(value).flatMap(stringsIn);
  return [];
}

const decode = (text: string) => text.replace(/&amp;/g, '&').replace(/&quot;/g, '"').replace(/&#x27;|&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>');
const attribute = (tag: string, name: string) => new RegExp(`\\s${name}=(?:'([^']*)'|"([^"]*)"|([^\\s>]+))`, 'i').exec(tag)?.slice(1).find((value) => value !== undefined);

/** Story rows in a page's HTML (any HN markup year): one per `athing` row that is not a comment. */
function storiesInHtml(html: string): StoryRow[] {
  const rows = html.split(/<tr\b/i).slice(1);
  const stories: StoryRow[] = [];
  for (const row of rows) {
    const open = row.slice(0, row.indexOf('>'));
    const classes = attribute(open, 'class') ?? '';
    if (!/\bathing\b/.test(classes) || /\bcomtr\b/.test(classes)) continue;
    const id = attribute(open, 'id');
    if (!id) continue;
    const arrow = new RegExp(`<a\\b[^>]*\\bid=['"]?up_${id}\\b[^>]*>`, 'i').exec(row)?.[0];
    const title = /class=["'](?:titleline|storylink)["'][^>]*>(?:\s*<a\b[^>]*>)?([^<]*)</i.exec(row)?.[1] ?? '';
    const rank = Number.parseInt(/class=["']rank["'][^>]*>\s*(\d+)/i.exec(row)?.[1] ?? '', 10);
    const link = arrow && attribute(arrow, 'href');
    stories.push({
      id,
      rank: Number.isNaN(rank) ? null : rank,
      title: decode(title),
      voted: /\bnosee\b/.test((arrow && attribute(arrow, 'class')) ?? '') || new RegExp(`\\bid=['"]?un_${id}\\b`).test(html),
      votable: arrow !== undefined,
      ...(link && { voteLink: decode(link) }),
    });
  }
  return stories;
}

/**
 * A link as a compact page view gives it: its text and address, and where the view keeps them (a
 * list of links, as an agent's tool answers one), its id and classes; in markdown, the text before it.
 */
interface Link {
  text: string;
  href: string;
  id?: string;
  classes?: string;
  /** The page's text between the link before and this one (markdown), where a row's rank is. */
  before?: string;
}

/** A vote link's story and direction: `vote?id=42&how=up`, or before 2014 `vote?for=42&dir=up`. */
function voteIn(href: string): { id: string; up: boolean } | undefined {
  const query = /(?:^|\/)vote\?([^#\s]*)/.exec(decode(href))?.[1];
  if (query === undefined) return undefined;
  const params = new URLSearchParams(query);
  const id = params.get('id') ?? params.get('for');
  const how = params.get('how') ?? params.get('dir');
  return id && (how === 'up' || how === 'un') ? { id, up: how === 'up' } : undefined;
}

/** The number a row shows before its arrow (`1.`), at the end of the text before it. */
const rankAtEnd = (text: string) => Number.parseInt(/(\d+)\.[\s|]*$/.exec(text)?.[1] ?? '', 10);

/** The story a link is the upvote arrow of: by its id (`up_42`), or by its address. */
const arrowOf = (link: Link) => /^up_(\d+)$/.exec(link.id ?? '')?.[1] ?? (voteIn(link.href)?.up ? voteIn(link.href)!.id : undefined);

/**
 * Story rows in a page's links, in page order: each upvote arrow is a story, its title the next
 * link with text before the next arrow (or the arrow's own, in a list of ids); it is voted where its arrow is hidden
 * (`nosee`) or the page offers to unvote it. The rank is the number shown before the arrow
 * (markdown), or before the title in `text`, the page's text where a view gives it apart.
 */
function storiesInLinks(links: readonly Link[], text = ''): StoryRow[] {
  const unvote = (link: Link) => /^un_(\d+)$/.exec(link.id ?? '')?.[1] ?? (voteIn(link.href)?.up === false ? voteIn(link.href)!.id : undefined);
  const unvotable = new Set(links.map(unvote).filter((id) => id !== undefined));
  return links.flatMap((link, index) => {
    const id = arrowOf(link);
    if (!id) return [];
    const row = links.slice(index + 1);
    const next = row.findIndex((later) => arrowOf(later) !== undefined);
    // A title link has no id: in a list of the page's ids alone (the arrows), the arrow's own text is all there is.
    const title = (next === -1 ? row : row.slice(0, next)).find((later) => later.id === undefined && later.text.trim() !== '')?.text.trim() ?? link.text;
    const shown = title === '' ? -1 : text.indexOf(title);
    const rank = rankAtEnd(link.before ?? (shown === -1 ? '' : text.slice(0, shown)));
    const voteLink = link.href === '' ? {} : { voteLink: decode(link.href) };
    return [{ id, rank: Number.isNaN(rank) ? null : rank, title, voted: /\bnosee\b/.test(link.classes ?? '') || unvotable.has(id), votable: true, ...voteLink }];
  });
}

/** A list of links as an agent's tool answers one (`[{ text, href }]`, `[{ id: 'up_42', href, class }]`); none for anything else. */
function linkList(value: unknown): Link[] {
  if (!Array.isArray(value)) return [];
  const field = (item: Record<string, unknown>, names: string[]) => names.map((name) => item[name]).find((found): found is string => typeof found === 'string');
  return value.flatMap((item: unknown) => {
    if (typeof item !== 'object' || item === null) return [];
    const link = item as Record<string, unknown>;
    const [href, id, classes] = [field(link, ['href', 'url']), field(link, ['id']), field(link, ['class', 'className'])];
    if (href === undefined && id === undefined) return [];
    return [{ text: field(link, ['text', 'title', 'label', 'name']) ?? '', href: href ?? '', ...(id !== undefined && { id }), ...(classes !== undefined && { classes }) }];
  });
}

/** The links of a page in markdown (`[text](href)`), each with the text before it. */
function markdownLinks(markdown: string): Link[] {
  const links: Link[] = [];
  let from = 0;
  for (const match of markdown.matchAll(/\[((?:\\.|[^\]\\])*)\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)/g)) {
    links.push({ text: match[1]!.replace(/\\(.)/g, '$1'), href: match[2]!, before: markdown.slice(from, match.index) });
    from = match.index + match[0].length;
  }
  return links;
}

/** The stories a result shows, if it shows any: as JSON, as a list of links, in a page's HTML, or in its markdown. */
export function storiesIn(result: Record<string, unknown>): StoryRow[] | undefined {
  if (Array.isArray(result.stories)) return result.stories as StoryRow[];
  const texts = stringsIn(result);
  for (const value of Object.values(result)) {
    const fromLinks = storiesInLinks(linkList(value), texts.join('\n'));
    if (fromLinks.length > 0) return fromLinks;
  }
  for (const read of [storiesInHtml, (text: string) => storiesInLinks(markdownLinks(text))]) {
    for (const text of texts) {
      const stories = read(text);
      if (stories.length > 0) return stories;
    }
  }
  return undefined;
}

/** Where a tool's result carries a page's content (a reader's text, or an opening tool that answers the page itself), first to last. */
export const PAGE_KEYS = ['text', 'html', 'markdown', 'content', 'body', 'links'] as const;

/** Whether a result shows the page itself, not only where the browser is (harness-eval's `navigate` answers its address and title only). */
export const showsPage = (result: Record<string, unknown>) => PAGE_KEYS.some((key) => key in result);

/** A result's page as a reader takes it in: HTML without its tags and entities, markdown links as their text. */
export function readableText(result: Record<string, unknown>): string {
  const text = stringsIn(result)
    .join('\n')
    .replace(/<(script|style)\b[\s\S]*?<\/\1>/gi, ' ')
    .replace(/<[^>]*>/g, ' ')
    .replace(/\[((?:\\.|[^\]\\])*)\]\([^)\s]*\)/g, '$1');
  return decode(text);
}

/** The address a result says the browser (or the request) ended on. */
export function urlIn(result: Record<string, unknown>): string | undefined {
  for (const key of ['url', 'finalUrl', 'location', 'address']) if (typeof result[key] === 'string') return result[key];
  return undefined;
}

/** Whether a result shows the site asking to log in: a login address, or a page with a password field. */
export function showsLoginWall(result: Record<string, unknown>): boolean {
  const url = urlIn(result);
  if (url !== undefined && URL.canParse(url, 'https://site.invalid/') && ['/login', '/vote'].includes(new URL(url, 'https://site.invalid/').pathname)) return true;
  // An action that needs a session answers the login page where it is: its title says so.
  if (typeof result.title === 'string' && /^\s*log\s?in\b/i.test(result.title)) return true;
  return stringsIn(result).some((text) => /<input\b[^>]*type=["']?password/i.test(text) || (/\bpassword\s*:/i.test(text) && /\blog\s?in\b/i.test(text)));
}

/** A sentence that says the agent is now signed in, in any wording; not one that says it tried, failed or could not. */
const SIGNED_IN = [/\b(?:logged|signed)\s+(?:in|on)\s+(?:as|with|for)\b/i, /\b(?:now|successfully|already)\s+(?:logged|signed)\s+(?:in|on)\b/i, /\b(?:is|are)\s+(?:now\s+)?authenticated\b/i];
const NOT_SIGNED_IN = /\b(?:not|never|no longer|could\s?n[o']t|cannot|can't|failed|unable|refused|tried)\b/i;

/** Whether a note (a harness's message, a short field of a tool's result) says the agent is now signed in. */
export function saysSignedIn(note: string): boolean {
  if (note.includes('<')) return false; // a page's markup is the site talking, not the agent's harness
  return note.split(/(?<=[.!?;])\s+/).some((sentence) => SIGNED_IN.some((pattern) => pattern.test(sentence)) && !NOT_SIGNED_IN.test(sentence));
}
