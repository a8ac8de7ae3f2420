/**
 * What a tool's result shows of the site, whatever the tool: harness-eval's JSON, a page's HTML,
 * its text, or a list of links. The doubles read a page's text, where the browser is, login walls
 * and the agent's own notes from it, as a model would; a site kit's doubles read their site's own
 * rows from it too (HN's stories: sites/hn/doubles/page.ts).
 */

/** Every string in a result, outermost first: a page's HTML or text may sit under any key. */
export function stringsIn(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.flatMap(stringsIn);
  if (typeof value === 'object' && value !== null) return Object.values(value).flatMap(stringsIn);
  return [];
}

/** Text with HTML's common entities decoded. */
export const decode = (text: string) => text.replace(/&amp;/g, '&').replace(/&quot;/g, '"').replace(/&#x27;|&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>');

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

/**
 * Whether a result shows the site asking to log in: an address among `walls` (paths a site answers
 * its login page at; a kit may name more, as HN's `/vote`), or a page with a password field.
 */
export function showsLoginWall(result: Record<string, unknown>, walls: readonly string[] = ['/login']): boolean {
  const url = urlIn(result);
  if (url !== undefined && URL.canParse(url, 'https://site.invalid/') && walls.includes(new URL(url, 'https://site.invalid/').pathname)) return true;
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
