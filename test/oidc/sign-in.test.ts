/**
 * Sign-in with OpenID Connect as a certified relying-party library does it: openid-client v6 with
 * discovery and its default validation, and jose verifying the same id_token by hand (issue 5).
 * The app runs on the real clock here, because the library checks iat and exp against it.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import * as client from 'openid-client';
import { accessTokenHash } from '../../src/core/oidc/id-token.js';
import type { TestApp } from '../support/app.js';
import { TestClock } from '../support/clock.js';
import { forEachDatabase } from '../support/databases.js';
import {
  type Browser, type TestClient, consentForm, newClient, obtainTokens, signedInBrowser, startOAuthApp,
} from '../oauth/helpers.js';

forEachDatabase('OpenID Connect sign-in', (database) => {
  let t: TestApp;
  before(async () => { t = await startOAuthApp(database, { clock: new TestClock(Date.now()) }); });
  after(() => t.close());

  async function discover(c: TestClient): Promise<client.Configuration> {
    return client.discovery(new URL(t.baseUrl), c.client.clientId, c.secret, undefined, { execute: [client.allowInsecureRequests] });
  }

  async function approve(browser: Browser, url: URL): Promise<URL> {
    const consent = await browser.fetch(url.href);
    assert.equal(consent.status, 200);
    const answer = await browser.postForm('/oauth/authorize', [...consentForm(await consent.text()), ['decision', 'approve']]);
    return new URL(answer.headers.get('location')!);
  }

  async function signInWithLibrary(c: TestClient, scope = 'openid profile:read') {
    const config = await discover(c);
    const { browser, user } = await signedInBrowser(t);
    const verifier = client.randomPKCECodeVerifier();
    const nonce = client.randomNonce();
    const state = client.randomState();
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: c.redirectUri, scope, nonce, state,
      code_challenge: await client.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256',
    });
    const callback = await approve(browser, url);
    // The library's defaults: iss, aud, azp, exp, iat, nonce, signature against the JWKS, at_hash.
    const tokens = await client.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: state, expectedNonce: nonce });
    return { config, tokens, user, nonce };
  }

  test('openid-client with discovery signs a user in and validates the id_token with its defaults (public client)', async () => {
    const c = await newClient(t, { type: 'public' });
    const { tokens, user } = await signInWithLibrary(c);
    const claims = tokens.claims()!;
    assert.equal(claims.sub, String(user.id));
    assert.equal(claims.preferred_username, user.username);
    assert.equal(claims.picture, `${t.baseUrl}/avatars/${user.id}`);
    assert.equal(claims.profile, `${t.baseUrl}/u/${user.username}`);
  });

  test('the same id_token verifies by hand with jose against the JWKS, with nonce, at_hash and auth_time right', async () => {
    const c = await newClient(t, { type: 'confidential' });
    const { tokens, nonce } = await signInWithLibrary(c);
    const { payload, protectedHeader } = await jwtVerify(tokens.id_token!, createRemoteJWKSet(new URL(`${t.baseUrl}/.well-known/jwks.json`)), {
      issuer: t.baseUrl, audience: c.client.clientId, algorithms: ['RS256'],
    });
    assert.equal(protectedHeader.alg, 'RS256');
    assert.equal(payload.nonce, nonce);
    assert.equal(payload.azp, c.client.clientId);
    assert.equal(payload.at_hash, accessTokenHash(tokens.access_token));
    assert.equal(payload.exp! - payload.iat!, 3600);
    assert.ok(typeof payload.auth_time === 'number' && payload.auth_time <= payload.iat!);
  });

  test('a client registered for ES256 gets an ES256 id_token that the library accepts', async () => {
    const c = await newClient(t, { type: 'confidential' });
    await t.deps.database.db.updateTable('clients').set({ id_token_alg: 'ES256' }).where('client_id', '=', c.client.clientId).execute();
    const { tokens } = await signInWithLibrary(c);
    assert.equal(decodeProtectedHeader(tokens.id_token!).alg, 'ES256');
  });

  test('refresh brings a new id_token without nonce and with the original auth_time', async () => {
    const c = await newClient(t, { type: 'confidential' });
    const { config, tokens } = await signInWithLibrary(c);
    const first = tokens.claims()!;
    const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!);
    const again = refreshed.claims()!;
    assert.equal(again.sub, first.sub);
    assert.equal(again.auth_time, first.auth_time);
    assert.equal(again.nonce, undefined);
    assert.equal(again.at_hash, accessTokenHash(refreshed.access_token));
  });

  test('without openid there is no id_token', async () => {
    const c = await newClient(t, { type: 'confidential' });
    const { browser } = await signedInBrowser(t);
    const tokens = await obtainTokens(t, browser, c, { scope: 'profile:read' });
    assert.equal('id_token' in tokens, false);
  });

  test('UserInfo answers GET and POST with sub and, with profile:read, the profile claims', async () => {
    const c = await newClient(t, { type: 'confidential' });
    const { config, tokens, user } = await signInWithLibrary(c);
    const info = await client.fetchUserInfo(config, tokens.access_token, String(user.id));
    assert.deepEqual(info, {
      sub: String(user.id), preferred_username: user.username, name: user.nickname,
      picture: `${t.baseUrl}/avatars/${user.id}`, profile: `${t.baseUrl}/u/${user.username}`, zoneinfo: t.deps.settings.siteTimeZone,
    });
    const post = await fetch(`${t.baseUrl}/api/oauth/userinfo`, { method: 'POST', headers: { authorization: `Bearer ${tokens.access_token}` } });
    assert.equal(post.status, 200);
    assert.equal(post.headers.get('cache-control'), 'no-store');
    assert.deepEqual(await post.json(), info);
  });

  test('UserInfo without profile:read gives sub alone', async () => {
    const c = await newClient(t, { type: 'confidential' });
    const { tokens, user } = await signInWithLibrary(c, 'openid');
    const res = await fetch(`${t.baseUrl}/api/oauth/userinfo`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
    assert.deepEqual(await res.json(), { sub: String(user.id) });
  });

  test('UserInfo errors are RFC 6750: no token 401, a token without openid 403 insufficient_scope', async () => {
    const none = await fetch(`${t.baseUrl}/api/oauth/userinfo`);
    assert.equal(none.status, 401);
    assert.match(none.headers.get('www-authenticate')!, /^Bearer realm="[^"]+", DPoP realm="[^"]+", algs="[^"]+"$/);
    assert.equal((await none.json()).error, 'invalid_token');

    const c = await newClient(t, { type: 'confidential' });
    const { browser } = await signedInBrowser(t);
    const tokens = await obtainTokens(t, browser, c, { scope: 'profile:read' });
    const res = await fetch(`${t.baseUrl}/api/oauth/userinfo`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
    assert.equal(res.status, 403);
    assert.match(res.headers.get('www-authenticate')!, /error="insufficient_scope", scope="openid"/);
    assert.equal((await res.json()).error, 'insufficient_scope');

    const bogus = await fetch(`${t.baseUrl}/api/oauth/userinfo`, { headers: { authorization: 'Bearer svco_nottherealthing' } });
    assert.equal(bogus.status, 401);
    assert.match(bogus.headers.get('www-authenticate')!, /error="invalid_token"/);
  });

  test("PKCE stands in for state and nonce: openid-client's quick start (PKCE, no state, no nonce) signs in, and the id_token has no nonce", async () => {
    const c = await newClient(t, { type: 'public' });
    const config = await discover(c);
    assert.equal(config.serverMetadata().supportsPKCE(), true, 'so the quick start sends no state');
    const { browser, user } = await signedInBrowser(t);
    const verifier = client.randomPKCECodeVerifier();
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: c.redirectUri, scope: 'openid profile:read',
      code_challenge: await client.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256',
    });
    assert.equal(url.searchParams.get('state'), null);
    assert.equal(url.searchParams.get('nonce'), null);
    const callback = await approve(browser, url);
    // No expectedState: the library insists that the answer carries no state; idTokenExpected
    // without expectedNonce: it insists that the id_token carries no nonce.
    const tokens = await client.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, idTokenExpected: true });
    const claims = tokens.claims()!;
    assert.equal(claims.sub, String(user.id));
    assert.equal('nonce' in claims, false);
  });

  test('without PKCE, nonce is required with openid: the authorization request is refused back to the app', async () => {
    const c = await newClient(t, { type: 'confidential' });
    const { browser } = await signedInBrowser(t);
    const query = new URLSearchParams({
      response_type: 'code', client_id: c.client.clientId, redirect_uri: c.redirectUri, scope: 'openid', state: 's1',
    });
    const res = await browser.fetch(`/oauth/authorize?${query}`);
    assert.equal(res.status, 302);
    const back = new URL(res.headers.get('location')!).searchParams;
    assert.equal(back.get('error'), 'invalid_request');
    assert.equal(back.get('state'), 's1');
    assert.equal(back.get('iss'), t.baseUrl);
  });
});
