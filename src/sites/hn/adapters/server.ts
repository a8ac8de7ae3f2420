import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { MAX_BODY_BYTES, type HnReplica } from '../replica.ts';

/** What the server needs of a site: the replica, or anything that answers requests like it. */
export type SiteHandler = Pick<HnReplica, 'handle' | 'truth' | 'ranking' | 'reset'>;

export interface ReplicaServer {
  url: string;
  server: Server;
  close(): Promise<void>;
}

/**
 * The replica over plain HTTP, for agents in any language and runners outside Playwright. Also
 * answers `GET /__harness/state` (the ground truth as JSON: votes, request count and the front
 * pages' ranking, what `harness-eval judge` reads) and `POST /__harness/reset` (back to the start
 * state, 204), for a runner's next trial. They exist only here, never at the origin the agent browses.
 */
export async function serveReplica(replica: SiteHandler, { port = 8080, host = '127.0.0.1' } = {}): Promise<ReplicaServer> {
  const server = createServer((req, res) => {
    answer(replica, req, res).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(`Internal error: ${error instanceof Error ? error.message : String(error)}`);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  return {
    url: `http://${host}:${address.port}`,
    server,
    close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}

async function answer(replica: SiteHandler, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', `http://${req.headers.host ?? 'localhost'}`);
  if (url.pathname === '/__harness/state' && req.method === 'GET') {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ ...replica.truth(), ranking: replica.ranking }));
    return;
  }
  if (url.pathname === '/__harness/reset' && req.method === 'POST') {
    req.resume();
    replica.reset();
    res.writeHead(204).end();
    return;
  }
  const body = await readBody(req);
  if (body === 'too large') {
    res.writeHead(413, { 'content-type': 'text/plain', connection: 'close' });
    res.end('Request too large.');
    return;
  }
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
  }
  const hasBody = req.method !== 'GET' && req.method !== 'HEAD' && body.length > 0;
  let request: Request;
  try {
    request = new Request(url, { method: req.method, headers, body: hasBody ? new Uint8Array(body) : undefined });
  } catch {
    // Methods the fetch standard forbids (CONNECT, TRACE, …) cannot even be represented.
    res.writeHead(405, { 'content-type': 'text/html; charset=utf-8' });
    res.end('Unknown.');
    return;
  }
  const response = await replica.handle(request);
  res.writeHead(response.status, Object.fromEntries(response.headers));
  res.end(Buffer.from(await response.arrayBuffer()));
}

/** Reads at most MAX_BODY_BYTES; a larger body is refused without buffering it. */
function readBody(req: IncomingMessage): Promise<Buffer | 'too large'> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        req.removeAllListeners('data');
        req.resume();
        resolve('too large');
      } else chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}
