import { createServer as createHttpServer } from 'node:http';
import { connect, createServer, type Socket } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { handOver, listenLocal } from '../src/loopback.ts';

/**
 * A sandbox's relay hands its agent's connections to the worker's own servers (loopback.ts): each
 * is answered as one the server accepted, within the server's maxConnections, and only while it
 * listens.
 */

/** Connections as the relay gets them: accepted on a Unix socket, each given to `take`. */
async function unixConnections(take: (socket: Socket) => void) {
  const dir = mkdtempSync(join(tmpdir(), 'loopback-'));
  const path = join(dir, 's');
  const server = createServer(take);
  await new Promise<void>((resolve) => server.listen(path, resolve));
  return {
    ask: () =>
      new Promise<string>((resolve) => {
        const client = connect(path);
        let answer = '';
        client.on('data', (chunk) => (answer += chunk)).on('close', () => resolve(answer)).on('error', () => resolve(answer));
        client.write('GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n');
      }),
    close: () => new Promise<void>((resolve) => server.close(() => (rmSync(dir, { recursive: true, force: true }), resolve()))),
  };
}

test('a connection handed to a server of this process is answered by it, past its maxConnections dropped and named, and not once it stopped listening', async () => {
  const held: Array<() => void> = [];
  const server = createHttpServer((_request, response) => held.push(() => response.end('answered')));
  server.maxConnections = 1;
  const drops: unknown[] = [];
  server.on('drop', (data) => drops.push(data));
  const port = await listenLocal(server);
  const handed: boolean[] = [];
  const relay = await unixConnections((socket) => {
    const taken = handOver(port, socket);
    handed.push(taken);
    if (!taken) socket.destroy();
  });

  const first = relay.ask();
  await expect.poll(() => held.length).toBe(1);
  // The first is still open: one more is over the server's maxConnections.
  expect(await relay.ask()).toBe('');
  expect(drops).toHaveLength(1);
  held[0]!();
  expect(await first).toContain('answered');
  // Once it closed, another is answered.
  const third = relay.ask();
  await expect.poll(() => held.length).toBe(2);
  held[1]!();
  expect(await third).toContain('answered');

  await new Promise<void>((resolve) => server.close(() => resolve()));
  expect(await relay.ask()).toBe('');
  expect(handed.at(-1)).toBe(false);
  await relay.close();
});
