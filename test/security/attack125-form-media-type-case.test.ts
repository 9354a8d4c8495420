/**
 * attack125: a media type's type and subtype are case-insensitive (RFC 9110 8.3.1), and the form
 * parsers read `Application/X-WWW-Form-Urlencoded` as a form. The bearer gate knew a form body by
 * `application/x-www-form-urlencoded` in lower case alone: a token sent in such a form body, which
 * the API does not read (RFC 6750 2.2 is not supported), was taken for no token at all, so
 * UserInfo and the resource API told that client it sent none, and never that a token in a form
 * body is not accepted.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { MCP_PATH } from '../../src/core/api/resource.js';
import { type TestApp, startTestApp } from '../support/app.js';
import { temporarySqliteDatabase } from '../support/databases.js';

let t: TestApp;
before(async () => { t = await startTestApp(temporarySqliteDatabase()); });
after(() => t.close());

test('a form body is known as one whatever the case of its media type (RFC 9110 8.3.1): a token in it is told it is not accepted (RFC 6750 2.2), or, where no form is read, that none is', async () => {
  // MCP is the address under the resource API that takes POST; elsewhere there POST is 405 unread.
  for (const path of ['/api/oauth/userinfo', MCP_PATH]) {
    for (const type of ['Application/X-WWW-Form-Urlencoded', 'APPLICATION/X-WWW-FORM-URLENCODED; charset=UTF-8']) {
      const response = await fetch(`${t.baseUrl}${path}`, { method: 'POST', headers: { 'content-type': type }, body: 'access_token=svco_x' });
      const body = (await response.json()) as { error: string; error_description: string };
      assert.equal(response.status, 401, `${path} ${type}`);
      assert.equal(body.error, 'invalid_token', `${path} ${type}`);
      // UserInfo reads its form, and finds the token; the resource API reads none, and says so.
      assert.match(body.error_description, path === '/api/oauth/userinfo' ? /form body are not accepted: send the access token in the header/ : /reads no form body, so no token in one is read: send the access token in the header/, `${path} ${type}`);
    }
  }
  // A form without a token in it is still told it has none, whatever the case.
  const none = await fetch(`${t.baseUrl}/api/oauth/userinfo`, { method: 'POST', headers: { 'content-type': 'Application/X-WWW-Form-Urlencoded' }, body: 'scope=openid' });
  assert.equal(none.status, 401);
  assert.match(((await none.json()) as { error_description: string }).error_description, /^This endpoint needs an access token/);
});
