import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { createServer as createHttpServer } from 'node:http';
import { connect, createServer, type Socket } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { handOver, listenLocal, portsAhead, takePortsAhead } from '../src/loopback.ts';

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

test('a port listened on ahead goes to a server only in its turn, in order, and the next listens take fresh ports', async () => {
  const ahead = await portsAhead(2);
  expect(new Set(ahead).size).toBe(2);
  // No turn given: a fresh port, the ones ahead kept (and the same ones answered again).
  const outOfTurn = createHttpServer();
  expect(ahead).not.toContain(await listenLocal(outOfTurn));
  expect(await portsAhead(2)).toEqual(ahead);
  takePortsAhead(2);
  const servers = [createHttpServer((_request, response) => response.end('first')), createHttpServer((_request, response) => response.end('second')), createHttpServer()];
  const ports = [];
  for (const server of servers) ports.push(await listenLocal(server));
  expect(ports.slice(0, 2)).toEqual(ahead);
  expect(ahead).not.toContain(ports[2]);
  expect(await (await fetch(`http://127.0.0.1:${ahead[1]}/`)).text()).toBe('second');
  await Promise.all([outOfTurn, ...servers].map((server) => new Promise((resolve) => server.close(resolve))));
});

test('sockets listening ahead keep no process alive; a server that took one is held as any other', async () => {
  const fixture = ['--import', 'tsx', 'tests/fixtures/loopback/ports-ahead.ts'];
  const idle = spawnSync(process.execPath, fixture, { encoding: 'utf8', timeout: 20_000 });
  expect(idle.error).toBeUndefined();
  expect(idle.stdout).toBe('two ports ahead\n');
  const held = spawn(process.execPath, [...fixture, 'held'], { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise((resolve) => held.once('exit', resolve));
  const [line] = (await once(held.stdout.setEncoding('utf8'), 'data')) as [string];
  expect(line).toMatch(/^took the first port ahead: \d+\n$/);
  // Still up when asked: its server holds it, and answers.
  expect(await (await fetch(`http://127.0.0.1:${/\d+/.exec(line)![0]}/`)).text()).toBe('answered');
  expect(await exited).toBe(0);
});
