/**
 * Slow clients (INTERFACE section 8): headers within 10 s, the whole request within 30 s, else
 * 408 and the connection closed. Shortened here so the test sees them act.
 */
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, test } from 'node:test';
import { REQUEST_TIMEOUTS } from '../../src/app.js';
import { type TestApp, startTestApp } from '../support/app.js';
import { temporarySqlitePath } from '../support/databases.js';

/** Writes `chunks` to a raw socket and returns everything the server sends until it closes. */
function rawExchange(port: number, first: string, trickle?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(first));
    let received = '';
    const drip = trickle === undefined ? undefined : setInterval(() => socket.write(trickle), 200);
    socket.on('data', (data) => { received += data.toString('latin1'); });
    socket.on('close', () => { clearInterval(drip); resolve(received); });
    socket.on('error', (error) => { clearInterval(drip); reject(error); });
  });
}

let t: TestApp;
before(async () => {
  const path = temporarySqlitePath();
  t = await startTestApp({ name: 'sqlite', target: { kind: 'sqlite', path }, url: `sqlite:${path}` }, { timeouts: { headersMs: 1000, requestMs: 2000, idleMs: 5000, keepAliveMs: 1000 } });
});
after(() => t.close());

test("the service's own server waits 10 s for the headers, 30 s for the whole request, and 75 s on a socket where nothing moves", async () => {
  const path = temporarySqlitePath();
  const served = await startTestApp({ name: 'sqlite', target: { kind: 'sqlite', path }, url: `sqlite:${path}` });
  try {
    assert.deepEqual(REQUEST_TIMEOUTS, { headersMs: 10_000, requestMs: 30_000, idleMs: 75_000, keepAliveMs: 72_000 });
    assert.equal(served.app.server.headersTimeout, 10_000);
    assert.equal(served.app.server.requestTimeout, 30_000);
    assert.equal(served.app.server.timeout, 75_000);
    assert.equal(served.app.server.keepAliveTimeout, 72_000);
  } finally {
    await served.close();
  }
});

test('a client that never finishes its headers gets 408 and the connection closes', async () => {
  const port = Number(new URL(t.baseUrl).port);
  const answer = await rawExchange(port, 'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n');
  assert.match(answer, /^HTTP\/1\.1 408 /);
});

test('a client that trickles its body past the request timeout gets 408 and the connection closes', async () => {
  const port = Number(new URL(t.baseUrl).port);
  const answer = await rawExchange(port,
    'POST /login HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 10000\r\n\r\n', 'a');
  assert.match(answer, /^HTTP\/1\.1 408 /);
});

test('an idle keep-alive connection is closed after its keep-alive time', async () => {
  const port = Number(new URL(t.baseUrl).port);
  const answer = await rawExchange(port, 'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
  assert.match(answer, /^HTTP\/1\.1 200 /, 'answered, then closed when idle');
});
