/**
 * attack103: bad input is never a 500, and every error keeps the RFC's shape (INTERFACE section 6).
 *
 * F1: every page reads its language from the `return_to` of the request (OpenID Connect Core
 * 3.1.2.1 `ui_locales` of the authorization request a sign-in leads back to), and a `return_to`
 * that is no URL to the WHATWG parser (`/\%zz`: a backslash is a slash in http: URLs, so a host
 * `%zz`; `/<TAB>/%zz`, the tab dropped) threw there. Any page given one in its query (`/`,
 * `/login`, `/signup`, an address that does not exist) or a form given one in its body answered 500
 * in Fastify's own shape, `{"statusCode":500,"code":"ERR_INVALID_URL",…}`, since the error page
 * read the language again and failed too (the same throw ended the process when the router
 * refused the address, helper-102's guard).
 *
 * F2: an error page that cannot be made is answered as the same error in JSON, the RFC 6749 5.2
 * shape, never passed on to Fastify's own error handler.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Deps } from '../../src/deps.js';
import { type TestApp, startTestApp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';
import { rawRequest } from '../support/raw-request.js';

/** `return_to` values that are no URL, as a query parameter's encoded value. */
const NO_URLS = ['/\\%zz', '%2F%5C%25zz', '/%09/%25zz', '/%0A/x%25zz'];

/** Fastify's own error shape, which names the failure. */
const FASTIFY_SHAPE = /"statusCode"|ERR_[A-Z_]+/;

forEachDatabase('attack103: bad input is never a 500, and every error keeps the RFC shape', (database) => {
  let t: TestApp;
  before(async () => { t = await startTestApp(database); });
  after(() => t.close());

  test('a return_to that is no URL leaves every page its answer: the page, in HTML, never a 500', async () => {
    const pages: Array<[string, number]> = [['/', 200], ['/login', 200], ['/signup', 200], ['/password/forgot', 200], ['/no-such-page', 404], ['/settings', 303]];
    for (const returnTo of NO_URLS) {
      for (const [path, status] of pages) {
        const target = `${path}?return_to=${returnTo}`;
        const answer = await rawRequest('GET', t.baseUrl, [], undefined, { target });
        assert.equal(answer.status, status, target);
        assert.doesNotMatch(answer.body, FASTIFY_SHAPE, target);
        if (status !== 303) assert.match(String(answer.headers['content-type']), /^text\/html/, target);
      }
    }
  });

  test('a form whose return_to is no URL is refused as any form without its CSRF token is: 403, the error page', async () => {
    for (const returnTo of NO_URLS) {
      const body = `username=someone&password=x&return_to=${returnTo}`;
      const answer = await rawRequest('POST', `${t.baseUrl}/login`, ['Content-Type', 'application/x-www-form-urlencoded'], body);
      assert.equal(answer.status, 403, body);
      assert.match(String(answer.headers['content-type']), /^text\/html/, body);
      assert.doesNotMatch(answer.body, FASTIFY_SHAPE, body);
    }
    // A body Fastify refuses (415) on a page whose query carries one: the refusal, on its page.
    const answer = await rawRequest('POST', t.baseUrl, ['Content-Type', 'application/*'], 'x=1', { target: '/settings/profile/avatar?return_to=/\\%zz' });
    assert.equal(answer.status, 415);
    assert.match(String(answer.headers['content-type']), /^text\/html/);
    assert.doesNotMatch(answer.body, FASTIFY_SHAPE);
  });

  test('an error page that cannot be made is the same error in JSON, never Fastify\'s 500', async () => {
    const deps = t.deps as { -readonly [K in keyof Deps]: Deps[K] };
    const words = deps.words;
    deps.words = () => { throw new TypeError('no words today'); };
    try {
      const answer = await rawRequest('POST', `${t.baseUrl}/login`, ['Content-Type', 'application/x-www-form-urlencoded'], 'username=a&password=b');
      assert.equal(answer.status, 403);
      assert.match(String(answer.headers['content-type']), /^application\/json/);
      const error = JSON.parse(answer.body) as { error: string; error_description: string };
      assert.equal(error.error, 'invalid_request');
      assert.equal(typeof error.error_description, 'string');
      assert.doesNotMatch(answer.body, /no words today|statusCode/);
      assert.equal(answer.headers['cache-control'], 'no-store');
    } finally {
      deps.words = words;
    }
  });
});
