import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { listenLocal } from '../loopback.ts';
import type { Duplex } from 'node:stream';

/** A CDP command as a client sends it (what the relay looks at; the rest passes as it is). */
export interface CdpCommand {
  id?: unknown;
  method?: unknown;
  params?: Record<string, unknown>;
  sessionId?: unknown;
  [key: string]: unknown;
}

export interface CdpRelay {
  /** `http://127.0.0.1:PORT`: what `chromium.connectOverCDP()` and other CDP clients take. */
  url: string;
  close(): Promise<void>;
}

export interface CdpRelayOptions {
  /** A connection to Chromium's DevTools server, Chromium started first if it is not yet; rejects with why it cannot start. */
  connect(): Promise<Socket>;
  /** Each command a client sends, as Chromium will get it: the same, or rewritten (`setDownloadBehavior` to the run's policy). */
  rewrite(command: CdpCommand): CdpCommand;
  /** Why Chromium did not start, for the run's trace, once per client that asked. */
  failed(error: Error): void;
}

/** The largest message a client may send (a page's text set by `Page.setDocumentContent` is the largest a client needs): past it, its connection is closed. */
export const MAX_CDP_MESSAGE_BYTES = 64 * 1024 * 1024;

/**
 * The run's DevTools endpoint, on 127.0.0.1, in front of Chromium's. Its HTTP (`/json/version`…)
 * passes as it is. A WebSocket's messages from the client are each parsed and sent on as the JSON
 * that was read, after `rewrite`: Chromium runs exactly the command that was looked at (no
 * duplicate key or escape read one way here and another there), and only text JSON (no CBOR, no
 * binary frame). No compression is agreed (`Sec-WebSocket-Extensions` is not passed on), and what
 * Chromium sends back is piped untouched.
 */
export async function serveCdp({ connect, rewrite, failed }: CdpRelayOptions): Promise<CdpRelay> {
  const sockets = new Set<Duplex>();
  const track = <S extends Duplex>(socket: S): S => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    return socket;
  };
  const upstream = async (refuse: (why: string) => void): Promise<Socket | undefined> => {
    try {
      return track(await connect());
    } catch (error) {
      failed(error as Error);
      refuse(`harness-eval: the run's Chromium did not start: ${(error as Error).message.split('\n')[0]}\n`);
      return undefined;
    }
  };

  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    // Said to the client in its own protocol's terms, and kept for the run's trace: never a bare hang-up to guess at.
    void upstream((why) => response.writeHead(502, { 'content-type': 'text/plain', connection: 'close' }).end(why)).then((socket) => {
      if (!socket) return;
      const forwarded = httpRequest({ createConnection: () => socket, method: request.method, path: request.url, headers: { ...request.headers, connection: 'close' } }, (answer) => {
        response.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(response);
      });
      // Chromium gone meanwhile (a client crashed or closed it): said, not hung up on.
      forwarded.on('error', (error) => (response.headersSent ? response.destroy() : response.writeHead(502, { 'content-type': 'text/plain', connection: 'close' }).end(`harness-eval: the run's Chromium did not answer: ${error.message}\n`)));
      request.pipe(forwarded);
    });
  });
  server.on('upgrade', (request: IncomingMessage, client: Duplex, head: Buffer) => {
    track(client);
    client.on('error', () => client.destroy());
    void upstream((why) => client.end(`HTTP/1.1 502 Bad Gateway\r\ncontent-type: text/plain\r\nconnection: close\r\n\r\n${why}`)).then((socket) => {
      if (!socket) return;
      if (client.destroyed) return void socket.destroy();
      socket.on('error', () => client.destroy());
      client.on('close', () => socket.destroy());
      socket.on('close', () => client.destroy());
      socket.setNoDelay(true);
      socket.write(upgradeRequest(request));
      socket.pipe(client);
      // A client faster than Chromium waits for it: what it sends is not piled up in the worker.
      const send = (data: Buffer) => {
        if (socket.write(data)) return;
        client.pause();
        socket.once('drain', () => client.resume());
      };
      const read = frameReader(
        (opcode, payload) => {
          if (opcode === BINARY) return closeWith(client, socket, 1003, 'harness-eval: binary messages (CBOR) are not passed on');
          if (opcode !== TEXT) return send(frame(opcode, payload));
          const text = rewritten(payload, rewrite);
          if (text === undefined) return closeWith(client, socket, 1007, 'harness-eval: a message that is not a JSON object (or nested past what JSON.stringify takes)');
          send(frame(TEXT, Buffer.from(text)));
        },
        (code, why) => closeWith(client, socket, code, why),
      );
      if (head.length > 0) read(head);
      client.on('data', read);
    });
  });
  const port = await listenLocal(server);
  return {
    url: `http://127.0.0.1:${port}`,
    async close() {
      for (const socket of sockets) socket.destroy();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

const [CONTINUATION, TEXT, BINARY, CLOSE] = [0x0, 0x1, 0x2, 0x8];

/** The client's upgrade request as Chromium gets it: its own headers (the Host Chromium names its WebSocket URLs by), no extension agreed. */
function upgradeRequest(request: IncomingMessage): string {
  const lines = [`${request.method} ${request.url} HTTP/1.1`];
  for (let i = 0; i < request.rawHeaders.length; i += 2) {
    if (request.rawHeaders[i]!.toLowerCase() !== 'sec-websocket-extensions') lines.push(`${request.rawHeaders[i]}: ${request.rawHeaders[i + 1]}`);
  }
  return `${lines.join('\r\n')}\r\n\r\n`;
}

/**
 * The message as Chromium is to get it: parsed, rewritten, and written again, with each message
 * it carries for another session (`Target.sendMessageToTarget`, the protocol's older way) treated
 * the same; undefined when it is not a JSON object, or cannot be written again (nested too deep).
 */
function rewritten(payload: Buffer, rewrite: (command: CdpCommand) => CdpCommand): string | undefined {
  const command = parseCommand(payload.toString('utf8'));
  if (command === undefined) return undefined;
  const inner = command.method === 'Target.sendMessageToTarget' ? command.params?.message : undefined;
  const carried = typeof inner === 'string' ? rewritten(Buffer.from(inner), rewrite) : undefined;
  if (typeof inner === 'string' && carried === undefined) return undefined;
  try {
    return JSON.stringify(rewrite(carried === undefined ? command : { ...command, params: { ...command.params, message: carried } }));
  } catch {
    return undefined;
  }
}

/** The text as a command, or undefined when it is not a JSON object. */
function parseCommand(text: string): CdpCommand | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as CdpCommand) : undefined;
  } catch {
    return undefined;
  }
}

/** Tells both ends the connection is over (a close frame each way), then ends it. */
function closeWith(client: Duplex, upstream: Socket, code: number, why: string): void {
  const payload = Buffer.concat([Buffer.from([code >> 8, code & 0xff]), Buffer.from(why)]);
  client.end(frame(CLOSE, payload, false));
  upstream.end(frame(CLOSE, payload));
}

/**
 * One final frame, masked as a client's must be (RFC 6455 §5.3) unless `masked` is false (a
 * server's). The mask is all zeros, which the protocol allows: the payload goes as it is.
 */
function frame(opcode: number, payload: Buffer, masked = true): Buffer {
  const length = payload.length;
  const extended = length < 126 ? 0 : length < 0x10000 ? 2 : 8;
  const head = Buffer.alloc(2 + extended + (masked ? 4 : 0));
  head[0] = 0x80 | opcode;
  head[1] = (masked ? 0x80 : 0) | (extended === 0 ? length : extended === 2 ? 126 : 127);
  if (extended === 2) head.writeUInt16BE(length, 2);
  if (extended === 8) head.writeBigUInt64BE(BigInt(length), 2);
  return Buffer.concat([head, payload]);
}

/**
 * A 'data' listener that reads a client's frames, however the chunks cut them, and calls
 * `onMessage` with each whole message (its fragments joined, unmasked) and each control frame;
 * `onError` (once, then nothing more) for a frame that breaks the protocol or a message past
 * MAX_CDP_MESSAGE_BYTES. A frame is copied once, when it is whole.
 */
export function frameReader(onMessage: (opcode: number, payload: Buffer) => void, onError: (code: number, why: string) => void): (chunk: Buffer) => void {
  let chunks: Buffer[] = [];
  let buffered = 0;
  let fragments: Buffer[] = [];
  let fragmented = 0;
  let messageOpcode = 0;
  let broken = false;
  const fail = (code: number, why: string) => {
    broken = true;
    onError(code, why);
  };
  return (chunk) => {
    if (broken) return;
    chunks.push(chunk);
    buffered += chunk.length;
    while (buffered >= 2) {
      const head = chunks.length === 1 ? chunks[0]! : (chunks = [Buffer.concat(chunks, buffered)])[0]!;
      const [first, second] = [head[0]!, head[1]!];
      const [fin, opcode, masked, short] = [(first & 0x80) !== 0, first & 0x0f, (second & 0x80) !== 0, second & 0x7f];
      const extended = short === 126 ? 2 : short === 127 ? 8 : 0;
      const headLength = 2 + extended + (masked ? 4 : 0);
      if (buffered < headLength) return;
      const length = extended === 2 ? head.readUInt16BE(2) : extended === 8 ? Number(head.readBigUInt64BE(2)) : short;
      if (!masked) return fail(1002, 'harness-eval: an unmasked frame from a client');
      if (fragmented + length > MAX_CDP_MESSAGE_BYTES) return fail(1009, `harness-eval: a message past ${MAX_CDP_MESSAGE_BYTES} bytes`);
      if (buffered < headLength + length) return;
      const mask = head.subarray(headLength - 4, headLength);
      const payload = Buffer.from(head.subarray(headLength, headLength + length));
      for (let i = 0; i < payload.length; i++) payload[i]! ^= mask[i & 3]!;
      const rest = head.subarray(headLength + length);
      chunks = rest.length > 0 ? [rest] : [];
      buffered = rest.length;
      if (opcode >= CLOSE) {
        onMessage(opcode, payload);
        continue;
      }
      if (opcode !== CONTINUATION) messageOpcode = opcode;
      fragments.push(payload);
      fragmented += payload.length;
      if (!fin) continue;
      const message = fragments.length === 1 ? fragments[0]! : Buffer.concat(fragments, fragmented);
      fragments = [];
      fragmented = 0;
      onMessage(messageOpcode, message);
    }
  };
}
