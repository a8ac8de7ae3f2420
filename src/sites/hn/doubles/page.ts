import { decode, showsLoginWall, stringsIn } from '../../../doubles/page.ts';

/**
 * What a tool's result shows of HN, whatever the tool (harness-eval's JSON, a page's HTML, its
 * text, or a list of links): its stories and their vote links, and its login walls, as a model
 * would read them. What any site's page shows is read in src/doubles/page.ts.
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

/** The addresses HN answers its login page at: signed out, a vote answers it at the vote's own. */
const LOGIN_WALLS = ['/login', '/vote'];

/** Whether a result shows HN asking to log in (see showsLoginWall). */
export const showsHnLoginWall = (result: Record<string, unknown>) => showsLoginWall(result, LOGIN_WALLS);
