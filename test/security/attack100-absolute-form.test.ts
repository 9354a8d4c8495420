/**
 * attack100 F1: a request line in absolute form (RFC 9112 3.2.2, `POST http://host/api/open/v1/me`,
 * which Node accepts and the router routes by its path) is answered as its path is. Outside /admin
 * `routableUrl` gave the router the target as sent, so `request.url` stayed absolute: the answers
 * that read it (the not-found handler's 405 and its JSON under /api/ and /.well-known/, the
 * malformed address's 400) took the API's addresses for pages, and an API client talking to the
 * service as to a proxy got the site's HTML 404 page where the same request in origin form gets
 * the RFC-shaped JSON (405 with `Allow`, `not_found`, `invalid_request`).
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type TestApp, startTestApp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';
import { rawRequest } from '../support/raw-request.js';

forEachDatabase('attack100 F1: absolute-form request lines to the JSON endpoints', (database) => {
  let t: TestApp;
  before(async () => { t = await startTestApp(database); });
  after(() => t.close());

  test('an absolute-form request line gets the answer its path and query get: JSON under /api/ and /.well-known/, a 405 with Allow where the path takes other methods', async () => {
    const requests: Array<[string, string]> = [
      ['POST', '/api/open/v1/me'], ['DELETE', '/api/open/v1/me/posts'], ['GET', '/api/oauth/token'],
      ['GET', '/api/open/v1/no-such-thing'], ['GET', '/api/no-such-thing'], ['GET', '/.well-known/no-such-thing'],
      ['GET', '/api/open/v1/me/%zz'], ['GET', '/api/x/%E0%A4%A'],
    ];
    for (const [method, path] of requests) {
      const what = `${method} ${t.baseUrl}${path}`;
      const asPath = await rawRequest(method, t.baseUrl + path, [], method === 'GET' ? undefined : '');
      const absolute = await rawRequest(method, t.baseUrl, [], method === 'GET' ? undefined : '', { target: t.baseUrl + path });
      assert.match(String(asPath.headers['content-type']), /^application\/json/, `${what} in origin form`);
      assert.equal(absolute.status, asPath.status, what);
      assert.equal(absolute.headers['content-type'], asPath.headers['content-type'], what);
      assert.equal(absolute.headers.allow, asPath.headers.allow, what);
      assert.deepEqual(JSON.parse(absolute.body), JSON.parse(asPath.body), what);
    }
  });
});
