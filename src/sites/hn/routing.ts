import type { Capture } from './capture.ts';
import type { HnState, Session } from './state.ts';
import type { Template } from './template.ts';

/**
 * What a group of the replica's pages is made of: each group (the core pages, comments,
 * submissions, users) is a `Routes` table built from the replica's `Pages`, and the replica
 * answers a request from the table of all groups. HN answers an unknown path with "Unknown.".
 */

/** Who asks: the session cookie, and its session when it is a live one. */
export interface Visitor {
  cookie?: string;
  session?: Session;
}

export type Handler = (request: Request, url: URL, visitor: Visitor) => Response | Promise<Response>;

/** Path → handler per method; a method a path lacks answers 405. */
export type Routes = Readonly<Record<string, { GET?: Handler; POST?: Handler }>>;

/** What every group of pages shares: the capture, the state, a user's karma, and a page as a visitor sees it. */
export interface Pages {
  capture: Capture;
  state: HnState;
  karma(user: string): number;
  /** `template` rendered for `visitor`; a listing shows the rows `lists` picks (by default all but the ones the visitor hid). */
  page(template: Template, visitor: Visitor, lists?: (id: string) => boolean): Response;
}

export function html(body: string, status = 200): Response {
  return new Response(body, { status, headers: { 'content-type': 'text/html; charset=utf-8' } });
}

export function redirect(goto: string, setCookie?: string): Response {
  const headers = new Headers({ location: `/${goto.replace(/^\/+/, '')}` });
  if (setCookie) headers.set('set-cookie', setCookie);
  return new Response(null, { status: 302, headers });
}

/** Only paths on this site: a `goto` can never send the browser elsewhere. */
export function safeGoto(goto: string | null): string {
  if (!goto || /^[a-z][a-z0-9+.-]*:|^\/\//i.test(goto) || /[\r\n]/.test(goto)) return 'news';
  return goto.replace(/^\/+/, '') || 'news';
}

/** A form's fields (`application/x-www-form-urlencoded`, as HN's forms post). */
export async function formOf(request: Request): Promise<URLSearchParams> {
  return new URLSearchParams(await request.text());
}

/** A textarea's text as HN keeps it: its lines as typed (browsers send them with CRLF), without its surrounding white space. */
export function typedText(form: URLSearchParams, field: string): string {
  return (form.get(field) ?? '').replace(/\r\n?/g, '\n').trim();
}

/** A listing's page (`p=2`), 1 for the first or anything that is not a later page's number. */
export function pageNumberOf(url: URL): number {
  const p = Number.parseInt(url.searchParams.get('p') ?? '1', 10);
  return Number.isSafeInteger(p) && p > 1 ? p : 1;
}
