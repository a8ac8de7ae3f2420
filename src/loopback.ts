import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';

/**
 * This process's servers on 127.0.0.1 by port (the site's, the gateway, a run's CDP relay and MCP
 * server), with the connections handed to each. A sandbox's relay takes its agent's connections on
 * Unix sockets; to a server of this process it hands each one over (`handOver`) instead of opening
 * a TCP connection of its own and copying every byte across it, which cost the worker about 3 ms
 * a run of CPU on its critical path.
 */
const servers = new Map<number, { server: Server; handed: number }>();

/**
 * Sockets listening on 127.0.0.1 ahead, for the servers of a run to come: their ports are known
 * before those servers exist (a sandbox started ahead pipes them while the run before still runs:
 * sandbox.ts). Unref'd: they never keep the process alive.
 */
const listeningAhead: Server[] = [];
/** How many of the next listens on any free port take a socket listening ahead (takePortsAhead). */
let turnsAhead = 0;

/** The ports of the first `count` sockets listening ahead, as many made as are missing. */
export async function portsAhead(count: number): Promise<number[]> {
  const made = await Promise.all(
    Array.from({ length: Math.max(0, count - listeningAhead.length) }, () => {
      const server = createServer().unref();
      return new Promise<Server>((resolve, reject) => server.once('error', reject).listen(0, '127.0.0.1', () => resolve(server)));
    }),
  );
  listeningAhead.push(...made);
  return listeningAhead.slice(0, count).map((server) => (server.address() as AddressInfo).port);
}

/** The next `count` listens on any free port take the sockets listening ahead, in order: the servers of the run whose sandbox pipes their ports. */
export function takePortsAhead(count: number): void {
  turnsAhead = count;
}

/** Listens on `host`:`port` (0: any free port; one listening ahead, in its turn) and answers the port; the server is known by it while it listens. */
export async function listenLocal(server: Server, port = 0, host = '127.0.0.1'): Promise<number> {
  const ahead = port === 0 && host === '127.0.0.1' && turnsAhead > 0 ? (turnsAhead--, listeningAhead.shift()) : undefined;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    if (ahead) server.listen(ahead, resolve);
    else server.listen(port, host, () => resolve());
  });
  // The socket listening ahead was unref'd; the server that took it is held as any other.
  if (ahead) server.ref();
  const bound = (server.address() as AddressInfo).port;
  const entry = { server, handed: 0 };
  servers.set(bound, entry);
  server.once('close', () => servers.get(bound) === entry && servers.delete(bound));
  return bound;
}

/**
 * Gives `socket` to this process's server listening on `port`, as if it had accepted it, and
 * answers true; false when no server of this process listens there. A server's `maxConnections`
 * holds for the connections handed to it as for those it accepts: one more is closed at once, and
 * the server's `drop` is emitted, as net.Server does.
 */
export function handOver(port: number, socket: Socket): boolean {
  const entry = servers.get(port);
  if (!entry?.server.listening) return false;
  const { server } = entry;
  if (entry.handed >= server.maxConnections) {
    socket.destroy();
    server.emit('drop', { localAddress: '127.0.0.1', localPort: port });
    return true;
  }
  entry.handed += 1;
  socket.once('close', () => (entry.handed -= 1));
  server.emit('connection', socket);
  return true;
}
