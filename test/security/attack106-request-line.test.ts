/**
 * attack106 F1: a request target that starts with `*` is only OPTIONS' asterisk form (RFC 9112
 * 3.2.4), yet Node's parser takes `*` and anything after it for every method, and the router served
 * it: `GET * HTTP/1.1` was the home page (200) and `GET *login` the sign-in page. RFC 9112 3.2: such
 * a target is no request target, a 400 in the service's shape (a page in the reader's language
 * here, JSON nowhere else to be had as the target names no path), the connection closed.
 *
 * F2: the request line's version. Node's parser takes `HTTP/2.0` on HTTP/1.1's syntax, and the
 * service answered it as HTTP/1.1; with no Host it passed the Host rule, which asks for Host from
 * version 1.1 on and read only the minor number. RFC 9112 2.3 / RFC 9110 15.6.6: 505, in the
 * service's shape (JSON under /api/, a page elsewhere), the connection closed.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type TestApp, startTestApp } from '../support/app.js';
import { temporarySqliteDatabase } from '../support/databases.js';
import { answersIn, exchange } from '../support/raw-socket.js';

let t: TestApp;
before(async () => { t = await startTestApp(temporarySqliteDatabase()); });
after(() => t.close());

const FASTIFY_SHAPE = /"statusCode"|ERR_[A-Z_]+/;

async function only(bytes: string): Promise<{ status: number; headers: Map<string, string>; body: string }> {
  const { text, closed } = await exchange(t.baseUrl, bytes, { quietMs: 5000 });
  assert.ok(closed, `the connection is closed after ${JSON.stringify(bytes.slice(0, 40))}`);
  const answers = answersIn(text);
  assert.equal(answers.length, 1, text.slice(0, 200));
  assert.doesNotMatch(answers[0]!.body, FASTIFY_SHAPE);
  return answers[0]!;
}

test('a target that starts with * is refused for every method but OPTIONS *, in the service\'s shape', async () => {
  const host = `Host: ${new URL(t.baseUrl).host}\r\n`;
  for (const [method, target] of [['GET', '*'], ['GET', '*login'], ['HEAD', '*'], ['POST', '*'], ['OPTIONS', '*login'], ['GET', '*/api/open/v1/']]) {
    const answer = await only(`${method} ${target} HTTP/1.1\r\n${host}Accept-Language: zh-CN\r\nContent-Length: 0\r\n\r\n`);
    assert.equal(answer.status, 400, `${method} ${target}`);
    assert.equal(answer.headers.get('connection'), 'close', `${method} ${target}`);
    assert.match(answer.headers.get('content-type') ?? '', /^text\/html/, `${method} ${target}`);
    assert.equal(answer.headers.get('content-language'), 'zh-CN', `${method} ${target}`);
  }
  // OPTIONS * asks about the server as a whole: it is no refused target.
  const options = await only(`OPTIONS * HTTP/1.1\r\n${host}Connection: close\r\n\r\n`);
  assert.notEqual(options.status, 400);
});

test('a request line of another version than HTTP/1.x is answered 505 in the service\'s shape, with or without Host', async () => {
  const host = `Host: ${new URL(t.baseUrl).host}\r\n`;
  for (const withHost of [host, '']) {
    const api = await only(`GET /api/open/v1/me HTTP/2.0\r\n${withHost}\r\n`);
    assert.equal(api.status, 505);
    assert.equal(api.headers.get('connection'), 'close');
    assert.equal(JSON.parse(api.body).error, 'invalid_request');
    const page = await only(`GET /login HTTP/2.0\r\n${withHost}Accept-Language: zh-TW\r\n\r\n`);
    assert.equal(page.status, 505);
    assert.match(page.headers.get('content-type') ?? '', /^text\/html/);
    assert.equal(page.headers.get('content-language'), 'zh-TW');
  }
  // HTTP/1.0 and HTTP/1.1 are served as before, and the server keeps serving.
  assert.equal((await only(`GET /healthz HTTP/1.0\r\n\r\n`)).status, 200);
  assert.equal((await only(`GET /healthz HTTP/1.1\r\n${host}Connection: close\r\n\r\n`)).status, 200);
});
