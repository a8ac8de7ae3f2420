import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { SCRIPTED_BASE_URL, scriptedFetch } from '../src/models/scripted/endpoint.ts';

/**
 * An OpenAI-compatible model server on 127.0.0.1 that counts what it is sent, for the endpoint tests
 * (tests/endpoints.spec.ts, and tests/endpoints-workers.spec.ts, which starts a child run).
 */

export interface ModelServer {
  url: string;
  requests: number;
  throttled: number;
  maxInFlight: number;
  close(): Promise<void>;
}

export interface ServerOptions {
  /** Answer every other request (the first, the third…) 429 with this Retry-After. */
  throttle?: string;
  /** Answer every request 429. */
  refuseAll?: boolean;
  /** How long each answer takes. */
  delayMs?: number;
}

/** An OpenAI-compatible server on 127.0.0.1: the scripted double the request names answers, or `answer`. */
export async function modelServer(options: ServerOptions = {}, answer: (body: string) => Promise<Response> = scripted): Promise<ModelServer> {
  let inFlight = 0;
  const state = { requests: 0, throttled: 0, maxInFlight: 0 };
  const server = createServer(async (incoming, outgoing) => {
    const number = ++state.requests;
    state.maxInFlight = Math.max(state.maxInFlight, ++inFlight);
    outgoing.on('close', () => (inFlight -= 1));
    const body = await readBody(incoming);
    if (options.refuseAll || (options.throttle !== undefined && number % 2 === 1)) {
      state.throttled += 1;
      outgoing.writeHead(429, { 'content-type': 'application/json', 'retry-after': options.throttle ?? '0' });
      return outgoing.end(JSON.stringify({ error: { message: 'Rate limit reached for requests', type: 'requests', code: 'rate_limit_exceeded' } }));
    }
    if (options.delayMs) await sleep(options.delayMs);
    const response = await answer(body);
    outgoing.writeHead(response.status, { 'content-type': 'application/json' });
    outgoing.end(await response.text());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return Object.assign(state, {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  });
}

const scripted = (body: string) => scriptedFetch(`${SCRIPTED_BASE_URL}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });

export async function readBody(incoming: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of incoming) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
