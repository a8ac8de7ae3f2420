import { serveHttp, type HttpServer } from '../../../serve.ts';
import { MAX_BODY_BYTES, type HnReplica } from '../replica.ts';

/** What the server needs of a site: the replica, or anything that answers requests like it. */
export type SiteHandler = Pick<HnReplica, 'handle' | 'truth' | 'snapshot' | 'reset'>;

export type ReplicaServer = HttpServer;

/**
 * The replica over plain HTTP, for agents in any language and runners outside Playwright. Also
 * answers `GET /__harness/state` (the ground truth as JSON: the snapshot (votes, hides, favorites, posts, the front
 * pages' ranking) and the request count, what `harness-eval judge` reads) and `POST /__harness/reset` (back to the start
 * state, 204), for a runner's next trial. They exist only here, never at the origin the agent browses.
 */
export async function serveReplica(replica: SiteHandler, { port = 8080, host = '127.0.0.1' } = {}): Promise<ReplicaServer> {
  return serveHttp((request) => answer(replica, request), { port, host, maxBodyBytes: MAX_BODY_BYTES });
}

async function answer(replica: SiteHandler, request: Request): Promise<Response> {
  const url = new URL(request.url);
  if (url.pathname === '/__harness/state' && request.method === 'GET') {
    return Response.json({ ...replica.snapshot(), requests: replica.truth().requests });
  }
  if (url.pathname === '/__harness/reset' && request.method === 'POST') {
    replica.reset();
    return new Response(null, { status: 204 });
  }
  return replica.handle(request);
}
