import { http, type HttpHandler } from 'msw';
import { HN_ORIGIN } from '../options.ts';
import type { HnReplica } from '../replica.ts';

/** The replica as msw request handlers, for code under test that fetches HN itself. */
export function replicaHandlers(replica: HnReplica, origin = HN_ORIGIN): HttpHandler[] {
  return [http.all(`${origin}/*`, ({ request }) => replica.handle(request))];
}
