/**
 * attack100 F2: bytes after a request that closes its connection (`Connection: close`, or HTTP/1.0
 * without keep-alive) in the same packet replaced that request's answer. Node's parser refuses
 * them (HPE_CLOSED_CONNECTION) while the request is being answered, and the client-error handler
 * wrote its 400 "not well-formed HTTP/1.1" and destroyed the socket: the request was carried out (a
 * form's change made) and its answer lost. RFC 9112 9.6: the server answers the request that
 * carried "close", then closes, and processes nothing after it; those bytes are no request to
 * refuse.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type TestApp, startTestApp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';
import { exchange } from '../support/raw-socket.js';

forEachDatabase('attack100 F2: bytes after a request that closes its connection', (database) => {
  let t: TestApp;
  before(async () => { t = await startTestApp(database); });
  after(() => t.close());

  test('a request that closes its connection gets its own answer, whatever follows it in the same packet, and nothing after it', async () => {
    const host = `Host: ${new URL(t.baseUrl).host}\r\n`;
    const sent: Array<[string, string]> = [
      ['HTTP/1.1 with Connection: close, then a byte', `GET / HTTP/1.1\r\n${host}Connection: close\r\n\r\nX`],
      ['HTTP/1.1 with Connection: close, then a request', `GET / HTTP/1.1\r\n${host}Connection: close\r\n\r\nGET /healthz HTTP/1.1\r\n${host}\r\n`],
      ['HTTP/1.0, then a request', `GET / HTTP/1.0\r\n\r\nGET /healthz HTTP/1.1\r\n${host}\r\n`],
      ['a form POST with Connection: close, then a byte', `POST /language HTTP/1.1\r\n${host}Connection: close\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 7\r\n\r\nlang=enX`],
    ];
    for (const [what, bytes] of sent) {
      const { text: answer, closed } = await exchange(t.baseUrl, bytes, { quietMs: 10_000 });
      assert.ok(closed, `${what}: the connection is closed`);
      const statuses = [...answer.matchAll(/^HTTP\/1\.1 (\d{3})/gm)].map((m) => m[1]);
      const expected = bytes.startsWith('POST') ? '303' : '200';
      assert.deepEqual(statuses, [expected], `${what}: ${answer.slice(0, 120)}`);
      if (expected === '303') assert.match(answer, /set-cookie: lang=en;/i, what);
    }
  });
});
