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

/** Story rows in a list of links (`[{ id: 'up_42', href, class }]`): each upvote arrow is a story. */
function storiesInLinks(value: unknown): StoryRow[] {
  const links = Array.isArray(value) ? value : [];
  return links.flatMap((link: Record<string, unknown>) => {
    const id = /^up_(\d+)$/.exec(String(link?.id ?? ''))?.[1];
    if (!id) return [];
    const classes = String(link.class ?? link.className ?? '');
    const href = typeof link.href === 'string' ? { voteLink: link.href } : {};
    return [{ id, rank: null, title: String(link.title ?? ''), voted: /\bnosee\b/.test(classes), votable: true, ...href }];
  });
}

/** The stories a result shows, if it shows any. */
export function storiesIn(result: Record<string, unknown>): StoryRow[] | undefined {
  if (Array.isArray(result.stories)) return result.stories as StoryRow[];
  for (const value of Object.values(result)) {
    const fromLinks = storiesInLinks(value);
    if (fromLinks.length > 0) return fromLinks;
  }
  for (const text of stringsIn(result)) {
    const fromHtml = storiesInHtml(text);
    if (fromHtml.length > 0) return fromHtml;
  }
  return undefined;
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
