/**
 * Slow clients (INTERFACE section 8): headers within 10 s, the whole request within 30 s, else
 * 408 and the connection closed. Shortened here so the test sees them act.
 */
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, test } from 'node:test';
import { REQUEST_TIMEOUTS } from '../../src/app.js';
import { type TestApp, startTestApp } from '../support/app.js';
import { temporarySqliteDatabase } from '../support/databases.js';

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
  t = await startTestApp(temporarySqliteDatabase(), { timeouts: { headersMs: 1000, requestMs: 2000, idleMs: 5000, keepAliveMs: 1000 } });
});
after(() => t.close());

test("the service's own server waits 10 s for the headers, 30 s for the whole request, and 75 s on a socket where nothing moves", async () => {
  const served = await startTestApp(temporarySqliteDatabase());
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

/** The status line, the headers by lower-case name and the JSON body of a raw answer. */
function parseRawAnswer(raw: string): { status: number; headers: Map<string, string>; body: unknown } {
  const [head, body] = [raw.slice(0, raw.indexOf('\r\n\r\n')), raw.slice(raw.indexOf('\r\n\r\n') + 4)];
  const [statusLine, ...lines] = head.split('\r\n');
  const headers = new Map(lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]));
  return { status: Number(statusLine!.split(' ')[1]), headers, body: JSON.parse(body) };
}

test('a request refused before any route (late, headers too large, not HTTP) gets the RFC 6749 error shape, no-store and CORS', async () => {
  const port = Number(new URL(t.baseUrl).port);
  const cases = [
    { status: 408, raw: await rawExchange(port, 'POST /api/oauth/token HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 100\r\n\r\ngrant_type=') },
    { status: 431, raw: await rawExchange(port, `GET /api/v1/me HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Padding: ${'a'.repeat(20_000)}\r\n\r\n`) },
    { status: 400, raw: await rawExchange(port, 'NOT HTTP AT ALL\r\n\r\n') },
  ];
  for (const { status, raw } of cases) {
    const answer = parseRawAnswer(raw);
    assert.equal(answer.status, status);
    const body = answer.body as { error: string; error_description: string };
    assert.deepEqual(Object.keys(body), ['error', 'error_description']);
    assert.equal(body.error, 'invalid_request');
    if (status === 408) assert.match(body.error_description, /headers within 1 s and the whole request within 2 s/, 'the timeouts in effect');
    assert.equal(answer.headers.get('content-type'), 'application/json; charset=utf-8');
    assert.equal(answer.headers.get('cache-control'), 'no-store');
    assert.equal(answer.headers.get('access-control-allow-origin'), '*');
    assert.equal(answer.headers.get('x-content-type-options'), 'nosniff');
    assert.equal(Number(answer.headers.get('content-length')), Buffer.byteLength(JSON.stringify(body)));
  }
});
