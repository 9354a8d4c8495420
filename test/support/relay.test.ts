/**
 * The relay tests stall and resume (test/support/relay.ts): what the server sends while stalled
 * is held, then passed on once, however often `resume()` is called.
 */
import assert from 'node:assert/strict';
import { type Socket, createConnection, createServer } from 'node:net';
import { test } from 'node:test';
import { TcpRelay } from './relay.js';

test('resuming a relay that is not stalled changes nothing: each answer reaches the client once', async () => {
  const echo = createServer((socket) => socket.pipe(socket));
  await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve));
  const relay = new TcpRelay({ host: '127.0.0.1', port: (echo.address() as { port: number }).port });
  await relay.open();
  let client: Socket | undefined;
  try {
    client = createConnection({ host: '127.0.0.1', port: relay.port });
    let received = '';
    client.on('data', (chunk: Buffer) => (received += chunk.toString()));
    const echoed = async (text: string) => {
      while (!received.endsWith(text)) await new Promise((resolve) => setTimeout(resolve, 10));
    };
    client.write('a');
    await echoed('a');
    relay.stall();
    relay.resume();
    relay.resume();
    client.write('b');
    await echoed('b');
    // Once 'c' is back, any copy of 'b' sent before it is too (one connection keeps the order).
    client.write('c');
    await echoed('c');
    assert.equal(received, 'abc');
  } finally {
    client?.destroy();
    await relay.cut();
    await new Promise((resolve) => echo.close(resolve));
  }
});
