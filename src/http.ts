/** Small pieces of HTTP that the site adapters, the live site, the login layer and the model providers share. */

/**
 * Hop-by-hop and transport headers: they describe the client's connection, not the request, and
 * Node's fetch refuses some of them (`keep-alive`, `transfer-encoding`, `upgrade`, `expect`). It
 * negotiates `accept-encoding` itself, so the body it hands back is always decoded.
 */
export const REQUEST_HEADERS_NOT_FORWARDED = ['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'te', 'trailer', 'expect', 'host', 'content-length', 'accept-encoding'];
/** A body handed on is decoded and whole, so these no longer describe it. */
export const RESPONSE_HEADERS_NOT_FORWARDED = ['connection', 'keep-alive', 'transfer-encoding', 'content-encoding', 'content-length'];

/** `name=value` pairs of a Cookie header (or of Set-Cookie values' first parts), by name. */
export function parseCookies(pairs: readonly string[]): Map<string, string> {
  const jar = new Map<string, string>();
  for (const pair of pairs) {
    const [name, ...value] = pair.trim().split('=');
    if (name) jar.set(name, value.join('='));
  }
  return jar;
}

export function cookieHeaderPairs(header: string | null | undefined): string[] {
  return header?.split(';') ?? [];
}

/** A Cookie header with the cookies that Set-Cookie answers have since set (or cleared, with an empty value). */
export function withSetCookies(header: string | null | undefined, setCookies: readonly string[]): string {
  const jar = parseCookies([...cookieHeaderPairs(header), ...setCookies.map((setCookie) => setCookie.split(';')[0]!)]);
  return [...jar].filter(([, value]) => value !== '').map(([name, value]) => `${name}=${value}`).join('; ');
}

/**
 * A `retry-after` header (delay-seconds or an HTTP date) in milliseconds from now, capped so that
 * one header cannot stall a run; undefined when absent or unreadable.
 */
export function retryAfterMs(header: string | null, maxMs: number): number | undefined {
  if (!header?.trim()) return undefined;
  const seconds = Number(header);
  const ms = Number.isFinite(seconds) ? seconds * 1000 : Date.parse(header) - Date.now();
  if (Number.isNaN(ms)) return undefined;
  return Math.min(Math.max(ms, 0), maxMs);
}

/**
 * Posts a login form from the harness's own HTTP client, never from the page, and answers the
 * session cookies the site set: none when it refused. The password so never enters the page, so
 * it cannot reach a DOM snapshot, a screenshot or Playwright's trace (which records what `fill`
 * types and every request body).
 */
export async function postLoginForm(
  fetchSite: (request: Request) => Promise<Response>,
  action: string,
  /** Name and value pairs, in the form's order. */
  fields: string[][],
  cookie = '',
): Promise<{ status: number; cookies: Array<[string, string]> }> {
  const response = await fetchSite(
    new Request(action, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...(cookie && { cookie }) },
      body: new URLSearchParams(fields),
      redirect: 'manual',
    }),
  );
  void response.body?.cancel();
  if (response.status < 300 || response.status >= 400) return { status: response.status, cookies: [] };
  const cookies = [...parseCookies(response.headers.getSetCookie().map((header) => header.split(';')[0]!))].filter(([, value]) => value !== '');
  return { status: response.status, cookies };
}
