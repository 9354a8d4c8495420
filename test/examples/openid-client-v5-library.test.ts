/**
 * openid-client 5.7 (the most installed major version), in this process against the real service,
 * with its defaults: `Issuer.discover`, a `Client` with `client_secret_basic` (its default for a
 * client with a secret) and `none` for a public one, PKCE without state or nonce (its README's
 * flow), the id_token checked by `callback` (signature, iss, aud, exp, at_hash, RS256), UserInfo,
 * /me, a refresh (whose id_token it checks again, sub unchanged), introspection, revocation and
 * `endSessionUrl`, which brings the person back with `state` and ends the session at the service.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Issuer, generators } from 'openid-client-v5';
import type { TestApp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';
import { newClient } from '../oauth/helpers.js';
import { TwoSiteBrowser, grantOf, startLibraryService } from './in-process.js';

forEachDatabase('openid-client 5.7', (database) => {
  let t: TestApp;
  before(async () => { t = await startLibraryService(database); });
  after(() => t.close());

  for (const type of ['confidential', 'public'] as const) {
    test(`a ${type} client: code flow with PKCE, id_token, UserInfo, /me, refresh, introspection, revocation, end session`, async () => {
      const redirectUri = 'http://localhost:3000/cb';
      const afterLogout = 'http://localhost:3000/signed-out';
      const c = await newClient(t, { type, redirectUris: [redirectUri], postLogoutRedirectUris: [afterLogout] });
      const issuer = await Issuer.discover(t.baseUrl);
      const client = type === 'confidential'
        ? new issuer.Client({ client_id: c.client.clientId, client_secret: c.secret!, redirect_uris: [redirectUri], response_types: ['code'] })
        : new issuer.Client({ client_id: c.client.clientId, redirect_uris: [redirectUri], response_types: ['code'], token_endpoint_auth_method: 'none' });
      const codeVerifier = generators.codeVerifier();
      const url = client.authorizationUrl({
        scope: 'openid profile profile:read', code_challenge: generators.codeChallenge(codeVerifier), code_challenge_method: 'S256',
      });
      const browser = await TwoSiteBrowser.signedIn(t);
      const back = await browser.visit(url, { stop: (to) => to.href.startsWith(redirectUri) });
      const tokens = await client.callback(redirectUri, client.callbackParams(back.url.href), { code_verifier: codeVerifier });
      const claims = tokens.claims();
      assert.equal(claims.iss, t.baseUrl);
      assert.equal(claims.nonce, undefined, 'no nonce was sent, none comes back');

      const userinfo = await client.userinfo(tokens);
      assert.equal(userinfo.sub, claims.sub);
      const me = await client.requestResource(`${t.baseUrl}/api/open/v1/me`, tokens);
      assert.equal(me.statusCode, 200);
      assert.equal((JSON.parse(me.body!.toString()) as { username: string }).username, userinfo.preferred_username);

      const refreshed = await client.refresh(tokens);
      assert.equal(refreshed.claims().sub, claims.sub);
      assert.equal((await grantOf(t, c.client.clientId)).rotated, 1);
      assert.equal((await client.introspect(refreshed.access_token!)).active, true);
      await client.revoke(refreshed.refresh_token!, 'refresh_token');
      assert.equal((await client.introspect(refreshed.access_token!)).active, false);
      assert.equal((await grantOf(t, c.client.clientId)).revokedReason, 'revoked_by_client');

      const end = client.endSessionUrl({ id_token_hint: refreshed.id_token!, post_logout_redirect_uri: afterLogout, state: 'bye' });
      const returned = await browser.visit(end, { stop: (to) => to.href.startsWith(afterLogout) });
      assert.equal(returned.url.searchParams.get('state'), 'bye');
      assert.equal(await browser.signedInAtService(), false);
    });
  }
});
