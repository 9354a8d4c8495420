/**
 * @badgateway/oauth2-client 3.3, in this process against the real service, with its defaults:
 * only `server` given, it finds every endpoint in /.well-known/oauth-authorization-server and
 * picks `client_secret_basic` from `token_endpoint_auth_methods_supported` (a public client sends
 * its `client_id` in the body); PKCE (S256) and state, the token, /me, a refresh, introspection
 * and revocation. It reads no id_token (plain OAuth 2.0), so `openid` only adds one to the answer.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { OAuth2Client, generateCodeVerifier } from '@badgateway/oauth2-client';
import type { TestApp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';
import { newClient } from '../oauth/helpers.js';
import { TwoSiteBrowser, grantOf, startLibraryService } from './in-process.js';

forEachDatabase('@badgateway/oauth2-client 3.3', (database) => {
  let t: TestApp;
  before(async () => { t = await startLibraryService(database); });
  after(() => t.close());

  for (const type of ['confidential', 'public'] as const) {
    test(`a ${type} client: discovery, code flow with PKCE and state, /me, refresh, introspection, revocation`, async () => {
      const redirectUri = 'http://localhost:3000/cb';
      const c = await newClient(t, { type, redirectUris: [redirectUri] });
      const client = new OAuth2Client({ server: `${t.baseUrl}/`, clientId: c.client.clientId, ...(c.secret ? { clientSecret: c.secret } : {}) });
      const codeVerifier = await generateCodeVerifier();
      const state = 'state-of-the-app';
      const url = await client.authorizationCode.getAuthorizeUri({ redirectUri, state, codeVerifier, scope: ['openid', 'profile:read'] });
      const browser = await TwoSiteBrowser.signedIn(t);
      const back = await browser.visit(url, { stop: (to) => to.href.startsWith(redirectUri) });
      const token = await client.authorizationCode.getTokenFromCodeRedirect(back.url.href, { redirectUri, state, codeVerifier });
      assert.ok(token.idToken, 'openid brings an id_token');

      const me = await fetch(`${t.baseUrl}/api/open/v1/me`, { headers: { authorization: `Bearer ${token.accessToken}` } });
      assert.equal(me.status, 200);
      const refreshed = await client.refreshToken(token);
      assert.notEqual(refreshed.refreshToken, token.refreshToken);
      assert.equal((await grantOf(t, c.client.clientId)).rotated, 1);
      assert.equal((await client.introspect(refreshed)).active, true);
      await client.revoke(refreshed, 'refresh_token');
      assert.equal((await client.introspect(refreshed)).active, false);
      assert.equal((await grantOf(t, c.client.clientId)).revokedReason, 'revoked_by_client');
    });
  }
});
