/**
 * Defences the threat model (docs/threat-model.md) names that had no test of their own: password
 * guessing is throttled (sign-in-throttling.test.ts), access tokens are never taken from the URL, nothing secret is stored in
 * plain text, and an https deployment pins HTTPS and marks its cookies Secure.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createPersonalToken } from '../../src/core/credentials/personal-tokens.js';
import { PASSWORD, freshCode, newClient, obtainTokens, signedInBrowser, startOAuthApp, tokenRequest } from '../oauth/helpers.js';
import { type TestApp, startTestApp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';
import { snapshotTables } from '../support/snapshot.js';

forEachDatabase('security guards', (database) => {
  let t: TestApp;
  before(async () => { t = await startTestApp(database); });
  after(() => t.close());

  test('an access token in the query string or a form body is not accepted (RFC 6750 2.3, RFC 9700 4.3.2)', async () => {
    const oauth = await startOAuthApp(database);
    try {
      const c = await newClient(oauth);
      const { browser, user } = await signedInBrowser(oauth);
      const tokens = await obtainTokens(oauth, browser, c);
      const inQuery = await fetch(`${oauth.baseUrl}/api/open/v1/me?access_token=${tokens.access_token}`);
      assert.equal(inQuery.status, 401);
      assert.equal(inQuery.headers.get('www-authenticate'), `Bearer realm="api", resource_metadata="${oauth.baseUrl}/.well-known/oauth-protected-resource/api/open/v1", DPoP realm="api", algs="ES256 EdDSA Ed25519 PS256 RS256", resource_metadata="${oauth.baseUrl}/.well-known/oauth-protected-resource/api/open/v1"`, 'treated as no credentials at all');
      const inBody = await fetch(`${oauth.baseUrl}/api/oauth/userinfo`, {
        method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ access_token: tokens.access_token }),
      });
      assert.equal(inBody.status, 401);
    } finally {
      await oauth.close();
    }
  });

  test('no code, token, client secret, session id or password is stored in plain text', async () => {
    const oauth = await startOAuthApp(database);
    try {
      const { c, browser, user, code, fields } = await freshCode(oauth);
      const redeemed = await tokenRequest(oauth, fields);
      const tokens = await redeemed.json() as { access_token: string; refresh_token: string };
      const more = await obtainTokens(oauth, browser, c, { scope: 'openid profile:read', extra: { nonce: 'n' } });
      const personal = await createPersonalToken(oauth.deps.stores, oauth.deps.clock, oauth.deps.tokenMarks, { userId: user.id, name: 'p', scopes: ['profile:read'], expiresInDays: 7 });
      const plain = [code, tokens.access_token, tokens.refresh_token, more.access_token, more.refresh_token, c.secret!, personal.token, PASSWORD,
        browser.cookies.get('svc_session')!];
      assert.ok(browser.cookies.get('svc_session'), 'the session cookie is among them');
      const stored = await snapshotTables(oauth.deps.database.db);
      for (const secret of plain) assert.ok(!stored.includes(secret), `a secret of ${secret.length} characters is stored in plain text`);
    } finally {
      await oauth.close();
    }
  });

  test('on https the service pins HTTPS (HSTS) and its cookies are Secure with the __Host- prefix', async () => {
    const secure = await startTestApp(database, { env: { BASE_URL: 'https://idp.example' } });
    try {
      const page = await fetch(`${secure.baseUrl}/login`);
      assert.match(page.headers.get('strict-transport-security') ?? '', /max-age=\d+/);
      const cookies = page.headers.getSetCookie();
      assert.ok(cookies.length > 0);
      for (const cookie of cookies) {
        assert.match(cookie, /^__Host-/);
        assert.match(cookie, /; Secure/i);
        assert.match(cookie, /; HttpOnly/i);
      }
    } finally {
      await secure.close();
    }
  });
});
