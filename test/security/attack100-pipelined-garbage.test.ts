/**
 * attack100, the keep-alive sibling of F2: a complete request followed in the same packet by bytes
 * Node's parser refuses lost its answer. The parser refuses them while that request is being
 * answered (its handler is async), and the client-error handler wrote its 400 "not well-formed" at
 * once and destroyed the socket: the request was carried out (a form's change made) and its answer
 * replaced by the 400. RFC 9112 9.3.2: a server answers pipelined requests in the order received;
 * the requests before the bad bytes get their answers, then the 400, then the connection closes.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type TestApp, startTestApp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';
import { answersIn, exchange } from '../support/raw-socket.js';

forEachDatabase('attack100: bytes that are not HTTP after a keep-alive request', (database) => {
  let t: TestApp;
  before(async () => { t = await startTestApp(database); });
  after(() => t.close());

  test('requests before bytes that are not HTTP get their own answers, in order, then the 400, then the connection closes', async () => {
    const host = `Host: ${new URL(t.baseUrl).host}\r\n`;
    const garbage = 'X-not-a-request\r\n\r\n';
    const sent: Array<[string, string, number[]]> = [
      ['a page', `GET / HTTP/1.1\r\n${host}\r\n${garbage}`, [200, 400]],
      ['a form POST', `POST /language HTTP/1.1\r\n${host}Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 7\r\n\r\nlang=en${garbage}`, [303, 400]],
      ['two requests', `GET / HTTP/1.1\r\n${host}\r\nGET /healthz HTTP/1.1\r\n${host}\r\n${garbage}`, [200, 200, 400]],
    ];
    for (const [what, bytes, expected] of sent) {
      const { text, closed } = await exchange(t.baseUrl, bytes);
      const answers = answersIn(text);
      assert.deepEqual(answers.map((a) => a.status), expected, `${what}: ${text.slice(0, 120)}`);
      assert.ok(closed, `${what}: the connection is closed`);
      if (what === 'a form POST') assert.match(answers[0]!.headers.get('set-cookie')!, /^lang=en;/, what);
      const refusal = answers.at(-1)!;
      assert.deepEqual(JSON.parse(refusal.body), { error: 'invalid_request', error_description: 'The request is not well-formed HTTP/1.1.' }, what);
      assert.equal(refusal.headers.get('connection'), 'close', what);
    }
  });
});
