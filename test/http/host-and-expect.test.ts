/**
 * Requests Node's HTTP server refused itself, before any route, with a bare status line and none
 * of the service's headers: an HTTP/1.1 request without Host (400, empty), an expectation other
 * than 100-continue (417, empty). And it served a request with two Host fields, or a Host that is
 * no host, which RFC 9112 3.2 says a server MUST answer 400. Each is now the service's answer: JSON
 * `invalid_request` under the JSON endpoints, the page in the reader's language elsewhere, with
 * the security headers and `Cache-Control: no-store`, and the connection closed after it, since
 * the request's body, if any, was not read.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type TestApp, startTestApp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';
import { type Answer, answersIn, exchange } from '../support/raw-socket.js';

/** The one answer to `bytes`, and whether the server closed the connection after it. */
async function answerTo(t: TestApp, bytes: string): Promise<Answer & { closed: boolean }> {
  const { text, closed } = await exchange(t.baseUrl, bytes);
  const answers = answersIn(text);
  assert.equal(answers.length, 1, `one answer to ${JSON.stringify(bytes)}: ${JSON.stringify(text.slice(0, 300))}`);
  return { ...answers[0]!, closed };
}

/**
 * The service's refusal of `bytes`: `status`, JSON `invalid_request` with the API's headers under
 * /api/ and /.well-known/ (by the path of a target in absolute form too), the page elsewhere, and
 * the connection closed unless told.
 */
async function assertRefused(t: TestApp, bytes: string, status: number, { closes = true } = {}): Promise<void> {
  const what = JSON.stringify(bytes);
  const answer = await answerTo(t, bytes);
  assert.equal(answer.status, status, what);
  assert.equal(answer.headers.get('cache-control'), 'no-store', what);
  assert.equal(answer.headers.get('connection'), closes ? 'close' : 'keep-alive', what);
  assert.equal(answer.closed, closes, `${what}: the connection is ${closes ? '' : 'not '}closed`);
  if (/^\w+ (?:http:\/\/[^/]*)?\/(?:api|\.well-known)\//.test(bytes)) {
    assert.equal(answer.headers.get('content-type'), 'application/json; charset=utf-8', what);
    assert.equal(answer.headers.get('x-content-type-options'), 'nosniff', what);
    assert.equal(answer.headers.get('access-control-allow-origin'), '*', what);
    const body = JSON.parse(answer.body) as Record<string, unknown>;
    assert.deepEqual(Object.keys(body), ['error', 'error_description'], what);
    assert.equal(body.error, 'invalid_request', what);
  } else {
    assert.equal(answer.headers.get('content-type'), 'text/html; charset=utf-8', what);
    assert.match(answer.headers.get('content-security-policy')!, /frame-ancestors 'none'/, what);
    assert.match(answer.body, /<html lang="zh-CN"/, `${what}: the reader's language`);
  }
}

forEachDatabase('Host and Expect, refused in the service\'s shape', (database) => {
  let t: TestApp;
  let host: string;
  before(async () => {
    t = await startTestApp(database);
    host = new URL(t.baseUrl).host;
  });
  after(() => t.close());

  test('an HTTP/1.1 request without Host is 400 in the service\'s shape, and an HTTP/1.0 one is served (RFC 9112 3.2)', async () => {
    await assertRefused(t, 'GET /api/open/v1/me HTTP/1.1\r\n\r\n', 400);
    await assertRefused(t, 'GET /settings HTTP/1.1\r\nAccept-Language: zh-CN\r\n\r\n', 400);
    const old = await answerTo(t, 'GET /healthz HTTP/1.0\r\n\r\n');
    assert.equal(old.status, 200);
  });

  test('a request with more than one Host field, or a Host that is no host and port, is 400 in the service\'s shape (RFC 9112 3.2)', async () => {
    await assertRefused(t, `GET /api/open/v1/me HTTP/1.1\r\nHost: ${host}\r\nHost: ${host}\r\n\r\n`, 400);
    await assertRefused(t, `GET /settings HTTP/1.1\r\nHost: ${host}\r\nhost: other.example\r\nAccept-Language: zh-CN\r\n\r\n`, 400);
    await assertRefused(t, `GET /healthz HTTP/1.0\r\nHost: a\r\nHost: b\r\nAccept-Language: zh-CN\r\n\r\n`, 400);
    for (const value of ['[::1', '[::1]x', '[not:an:address]', 'a@b', 'a b', 'a:b:c', 'a:8x', 'a/b', '%zz']) {
      await assertRefused(t, `GET /api/oauth/userinfo HTTP/1.1\r\nHost: ${value}\r\n\r\n`, 400);
    }
    // What RFC 3986 3.2.2 and 3.2.3 take: a name, an IPv4 or IPv6 address, a port, an empty port.
    for (const value of [host, 'localhost', 'id.example.com.', 'under_score.example', 'xn--bcher-kva.example', '%41.example', '[::1]:3000', '[v1.fe]', '127.0.0.1:']) {
      const answer = await answerTo(t, `GET /healthz HTTP/1.1\r\nHost: ${value}\r\nConnection: close\r\n\r\n`);
      assert.equal(answer.status, 200, `Host: ${value}`);
    }
  });

  test('an empty Host names no authority: 400 for a target in origin form or *, and a target in absolute form is served by its own (RFC 9112 3.2, 3.2.2 and 3.3; RFC 9110 4.2.1)', async () => {
    await assertRefused(t, 'GET /api/open/v1/me HTTP/1.1\r\nHost: \r\n\r\n', 400);
    await assertRefused(t, 'GET /settings HTTP/1.1\r\nHost:\r\nAccept-Language: zh-CN\r\n\r\n', 400);
    await assertRefused(t, 'GET /api/open/v1/me HTTP/1.1\r\nHost: :3000\r\n\r\n', 400);
    await assertRefused(t, 'OPTIONS * HTTP/1.1\r\nHost: \r\nAccept-Language: zh-CN\r\n\r\n', 400);
    await assertRefused(t, 'GET /healthz HTTP/1.0\r\nHost: \r\nAccept-Language: zh-CN\r\n\r\n', 400);
    const absolute = await answerTo(t, `GET http://${host}/healthz HTTP/1.1\r\nHost: \r\nConnection: close\r\n\r\n`);
    assert.equal(absolute.status, 200, 'the target\'s own authority');
    // An HTTP/1.0 request may carry no Host at all (RFC 9112 3.2 asks for it from HTTP/1.1 on).
    assert.equal((await answerTo(t, 'GET /healthz HTTP/1.0\r\n\r\n')).status, 200);
  });

  test('an expectation other than 100-continue is 417 in the service\'s shape, without waiting for the body, and 100-continue is met (RFC 9110 10.1.1)', async () => {
    const body = 'grant_type=nothing';
    const form = `Content-Type: application/x-www-form-urlencoded\r\nContent-Length: ${body.length}\r\n`;
    await assertRefused(t, `POST /api/oauth/token HTTP/1.1\r\nHost: ${host}\r\nExpect: 200-ok\r\n${form}\r\n`, 417);
    await assertRefused(t, `POST /language HTTP/1.1\r\nHost: ${host}\r\nExpect: something\r\nAccept-Language: zh-CN\r\n${form}\r\n`, 417);
    // A client with a large body (curl) asks first, and sends it after `100 Continue`.
    const { text } = await exchange(t.baseUrl, `POST /api/oauth/token HTTP/1.1\r\nHost: ${host}\r\nExpect: 100-continue\r\n${form}Connection: close\r\n\r\n`, {
      when: /^HTTP\/1\.1 100 Continue\r\n\r\n/, then: (socket) => socket.write(body),
    });
    const [interim, answer] = answersIn(text);
    assert.equal(interim?.status, 100);
    assert.equal(answer?.status, 400);
    assert.equal((JSON.parse(answer!.body) as { error: string }).error, 'unsupported_grant_type');
  });

  test('an Expect list with any member but 100-continue is 417 before the body is sent, and one of 100-continue alone is met (RFC 9110 10.1.1, 5.6.1)', async () => {
    const body = 'grant_type=nothing';
    const form = `Content-Type: application/x-www-form-urlencoded\r\nContent-Length: ${body.length}\r\n`;
    // Node finds 100-continue in each of these and, left to itself, answered `100 Continue`.
    for (const expect of ['100-continue, foo', 'foo,100-continue', '100-continue=1', '100-continue;x', 'x-100-continue', '100-continue\r\nExpect: foo']) {
      await assertRefused(t, `POST /api/oauth/token HTTP/1.1\r\nHost: ${host}\r\nExpect: ${expect}\r\n${form}\r\n`, 417);
    }
    await assertRefused(t, `POST /language HTTP/1.1\r\nHost: ${host}\r\nExpect: 100-continue, foo\r\nAccept-Language: zh-CN\r\n${form}\r\n`, 417);
    for (const expect of ['100-Continue', '100-CONTINUE ', '100-continue,', ' , 100-continue ,\t,', '100-continue\r\nExpect: 100-continue']) {
      const { text } = await exchange(t.baseUrl, `POST /api/oauth/token HTTP/1.1\r\nHost: ${host}\r\nExpect: ${expect}\r\n${form}Connection: close\r\n\r\n`, {
        when: /^HTTP\/1\.1 100 Continue\r\n\r\n/, then: (socket) => socket.write(body),
      });
      const [interim, answer] = answersIn(text);
      assert.equal(interim?.status, 100, `Expect: ${expect}`);
      assert.equal(answer?.status, 400, `Expect: ${expect}`);
    }
  });

  test('a request refused before any route is sent no 100 Continue, since its body will not be read (RFC 9110 10.1.1)', async () => {
    const form = 'Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 5000\r\n';
    await assertRefused(t, `POST /api/oauth/token HTTP/1.1\r\nHost: a@b\r\nExpect: 100-continue\r\n${form}\r\n`, 400);
    await assertRefused(t, `POST /login HTTP/1.1\r\nHost: ${host}\r\nHost: ${host}\r\nExpect: 100-continue\r\nAccept-Language: zh-CN\r\n${form}\r\n`, 400);
    await assertRefused(t, `POST /api/oauth/token HTTP/1.1\r\nExpect: 100-continue\r\n${form}\r\n`, 400);
  });

  test('an address that is not well-formed is refused by its path\'s kind, also in absolute form (RFC 9112 3.2.2), and keeps the connection', async () => {
    await assertRefused(t, `GET /api/open/v1/%zz HTTP/1.1\r\nHost: ${host}\r\n\r\n`, 400, { closes: false });
    // A target in absolute form that is no URL reaches the refusal as sent: its path still says API or page.
    await assertRefused(t, `GET http://%zz/api/open/v1/me HTTP/1.1\r\nHost: ${host}\r\n\r\n`, 400, { closes: false });
    await assertRefused(t, `GET http://%zz/.well-known/openid-configuration HTTP/1.1\r\nHost: ${host}\r\n\r\n`, 400, { closes: false });
    await assertRefused(t, `GET http://%zz/settings HTTP/1.1\r\nHost: ${host}\r\nAccept-Language: zh-CN\r\n\r\n`, 400, { closes: false });
    // Under /admin, the console's answer to what no route gave (INTERFACE section 14).
    const console = await answerTo(t, `GET http://%zz/admin/members HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
    assert.equal(console.status, 404);
    assert.equal(console.headers.get('x-robots-tag'), 'noindex');
  });

  test('an address that is not well-formed with a Host that breaks RFC 9112 3.2, or an expectation not met, is refused for those, and closes the connection', async () => {
    await assertRefused(t, 'GET /api/open/v1/%zz HTTP/1.1\r\n\r\n', 400);
    await assertRefused(t, 'GET /api/open/v1/%zz HTTP/1.1\r\nHost: a b\r\n\r\n', 400);
    await assertRefused(t, `GET http://%zz/api/open/v1/me HTTP/1.1\r\nHost: ${host}\r\nHost: ${host}\r\n\r\n`, 400);
    await assertRefused(t, 'GET /settings/%zz HTTP/1.1\r\nHost: a@b\r\nAccept-Language: zh-CN\r\n\r\n', 400);
    await assertRefused(t, 'GET /admin/%E0%A4%A HTTP/1.1\r\nAccept-Language: zh-CN\r\n\r\n', 400);
    await assertRefused(t, `POST /api/oauth/%zz HTTP/1.1\r\nHost: ${host}\r\nExpect: foo\r\nContent-Length: 3\r\n\r\n`, 417);
    const answer = await answerTo(t, 'GET /api/open/v1/%zz HTTP/1.1\r\nHost: a b\r\n\r\n');
    assert.match(answer.body, /Host/);
  });
});
