import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import { expect, test } from '@playwright/test';
import { downloadPolicy } from '../src/agents/cdp-browser.ts';
import { frameReader, MAX_CDP_MESSAGE_BYTES, serveCdp } from '../src/agents/cdp-relay.ts';

/**
 * The run's CDP relay (cdp-relay.ts) between a client that breaks the rules and a stand-in for
 * Chromium that keeps what reaches it: whatever way a client words or frames a command, Chromium
 * gets the command the relay looked at, with the run's download policy.
 */

const [TEXT, BINARY, CLOSE] = [0x1, 0x2, 0x8];

/** A frame as a client sends it: masked, with a key that is not zeros. */
function clientFrame(opcode: number, payload: Buffer | string, { fin = true, length }: { fin?: boolean; length?: bigint } = {}): Buffer {
  const body = Buffer.from(payload);
  const size = length ?? BigInt(body.length);
  const extended = size < 126n ? 0 : size < 0x10000n ? 2 : 8;
  const head = Buffer.alloc(2 + extended + 4);
  head[0] = (fin ? 0x80 : 0) | opcode;
  head[1] = 0x80 | (extended === 0 ? Number(size) : extended === 2 ? 126 : 127);
  if (extended === 2) head.writeUInt16BE(Number(size), 2);
  if (extended === 8) head.writeBigUInt64BE(size, 2);
  const mask = Buffer.from([0x5a, 0x0f, 0xc3, 0x81]);
  mask.copy(head, 2 + extended);
  return Buffer.concat([head, body.map((byte, i) => byte ^ mask[i & 3]!)]);
}

/** The relay with the run's policy (downloads off) in front of a stand-in Chromium: what the client writes, what Chromium got. */
async function relayed(write: (client: Socket) => void) {
  const got = { request: '', messages: [] as Array<{ opcode: number; text: string }> };
  const chromium = createServer((socket) => {
    let head = Buffer.alloc(0);
    const read = frameReader(
      (opcode, payload) => got.messages.push({ opcode, text: opcode === CLOSE ? String(payload.readUInt16BE(0)) : payload.toString() }),
      () => undefined,
    );
    socket.on('data', (chunk: Buffer) => {
      if (got.request) return read(chunk);
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n');
      if (end === -1) return;
      got.request = head.subarray(0, end).toString();
      if (head.length > end + 4) read(head.subarray(end + 4));
    });
  });
  await new Promise<void>((resolve) => chromium.listen(0, '127.0.0.1', resolve));
  const relay = await serveCdp({ connect: async () => connect((chromium.address() as AddressInfo).port, '127.0.0.1'), rewrite: downloadPolicy(undefined), failed: () => undefined });
  const client = connect(Number(new URL(relay.url).port), '127.0.0.1');
  const closed = new Promise<void>((resolve) => client.on('close', () => resolve()).on('error', () => undefined).resume());
  client.write('GET /devtools/browser/x HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Extensions: permessage-deflate\r\n\r\n');
  write(client);
  return {
    got,
    closed,
    async close() {
      client.destroy();
      await relay.close();
      await new Promise((resolve) => chromium.close(resolve));
    },
  };
}

const allow = (method: string, id: number) => ({ id, method, params: { behavior: 'allow', downloadPath: '/host/disk' } });

test('however a client words or frames setDownloadBehavior (split, fragmented, with a duplicate key, carried for another session), Chromium gets it as the policy has it: refused', async () => {
  const plain = clientFrame(TEXT, JSON.stringify(allow('Browser.setDownloadBehavior', 1)));
  const fragmented = JSON.stringify(allow('Page.setDownloadBehavior', 2));
  // Read here as the last key says; sent on as read, so Chromium cannot read it as the first says.
  const duplicate = '{"id":3,"method":"Runtime.evaluate","method":"Browser.setDownloadBehavior","params":{"behavior":"allow","downloadPath":"/host/disk"}}';
  const carried = { id: 4, method: 'Target.sendMessageToTarget', params: { sessionId: 's', message: JSON.stringify(allow('Page.setDownloadBehavior', 40)) } };
  const { got, close } = await relayed((client) => {
    client.write(plain.subarray(0, 5));
    setTimeout(() => {
      client.write(Buffer.concat([plain.subarray(5), clientFrame(TEXT, fragmented.slice(0, 20), { fin: false }), clientFrame(0x9, 'ping'), clientFrame(0x0, fragmented.slice(20))]));
      client.write(Buffer.concat([clientFrame(TEXT, duplicate), clientFrame(TEXT, JSON.stringify(carried)), clientFrame(TEXT, '{"id":5,"method":"Page.navigate","params":{"url":"https://news.ycombinator.com/"}}')]));
    }, 50);
  });
  try {
    await expect.poll(() => got.messages.length).toBe(6);
    expect(got.request).toMatch(/^GET \/devtools\/browser\/x HTTP\/1.1\r\n/);
    expect(got.request).not.toMatch(/sec-websocket-extensions/i);
    const [first, ping, second, third, fourth, fifth] = got.messages;
    expect(ping).toEqual({ opcode: 0x9, text: 'ping' });
    const deny = { behavior: 'deny' };
    expect(JSON.parse(first!.text)).toEqual({ id: 1, method: 'Browser.setDownloadBehavior', params: deny });
    expect(JSON.parse(second!.text)).toEqual({ id: 2, method: 'Page.setDownloadBehavior', params: deny });
    expect(JSON.parse(third!.text)).toEqual({ id: 3, method: 'Browser.setDownloadBehavior', params: deny });
    expect(third!.text.match(/"method"/g)).toHaveLength(1);
    const { params } = JSON.parse(fourth!.text);
    expect(JSON.parse(params.message)).toEqual({ id: 40, method: 'Page.setDownloadBehavior', params: deny });
    expect(JSON.parse(fifth!.text)).toEqual({ id: 5, method: 'Page.navigate', params: { url: 'https://news.ycombinator.com/' } });
  } finally {
    await close();
  }
});

test('what the relay cannot read as it will be run is not passed on: a binary (CBOR) message, text that is no JSON object, a message past the cap; each closes the connection', async () => {
  const cases = [
    { frames: [clientFrame(BINARY, Buffer.from([0xd8, 0x5a, 0, 0, 0, 1]))], code: '1003' },
    { frames: [clientFrame(TEXT, '[1, 2]')], code: '1007' },
    // Its header alone: the relay closes at once, without waiting for (or keeping) what it says follows.
    { frames: [clientFrame(TEXT, '', { length: BigInt(MAX_CDP_MESSAGE_BYTES + 1) })], code: '1009' },
  ];
  for (const { frames, code } of cases) {
    const { got, closed, close } = await relayed((client) => client.write(Buffer.concat(frames)));
    try {
      await closed;
      await expect.poll(() => got.messages).toEqual([{ opcode: CLOSE, text: code }]);
    } finally {
      await close();
    }
  }
});
