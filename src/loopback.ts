import type { AddressInfo, Server, Socket } from 'node:net';

/**
 * This process's servers on 127.0.0.1 by port (the site's, the gateway, a run's CDP relay and MCP
 * server), with the connections handed to each. A sandbox's relay takes its agent's connections on
 * Unix sockets; to a server of this process it hands each one over (`handOver`) instead of opening
 * a TCP connection of its own and copying every byte across it, which cost the worker about 3 ms
 * a run of CPU on its critical path.
 */
const servers = new Map<number, { server: Server; handed: number }>();

/** Listens on `host`:`port` (0: any free port) and answers the port; the server is known by it while it listens. */
export async function listenLocal(server: Server, port = 0, host = '127.0.0.1'): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
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
