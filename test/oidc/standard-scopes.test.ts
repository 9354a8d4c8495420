/**
 * OpenID's standard scopes (INTERFACE section 3, issue 17.3): `profile` and `offline_access` are
 * granted, `email`, `address` and `phone` are dropped from the grant, anything else is
 * invalid_scope; the consent page and the token response say what is really granted.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { decodeJwt } from 'jose';
import { hashSecret } from '../../src/core/credentials/formats.js';
import { createPersonalToken } from '../../src/core/credentials/personal-tokens.js';
import type { TestApp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';
import {
  type TestClient, authorizeQuery, clientFields, codeExchangeFields, consentForm, newClient, obtainCode, obtainTokens, pkcePair, redirectParams,
  signedInBrowser, startOAuthApp, tokenRequest, unique,
} from '../oauth/helpers.js';

forEachDatabase("OpenID's standard scopes", (database) => {
  let t: TestApp;
  before(async () => { t = await startOAuthApp(database); });
  after(() => t.close());

  const bearer = (path: string, token: string) => fetch(`${t.baseUrl}${path}`, { headers: { authorization: `Bearer ${token}` } });

  /** A client stored as registrations were before these scopes existed: the three service scopes. */
  async function storedClient(allowedScopes: string[]): Promise<TestClient> {
    const redirectUri = 'https://stored.example/cb';
    const client = await t.deps.stores.clients.create({
      clientId: unique('stored'), name: 'Stored', description: '', homepageUrl: '', ownerId: null, type: 'confidential',
      redirectUris: [redirectUri], allowedScopes, secretHash: hashSecret('s'), idTokenAlg: 'RS256',
    }, t.clock.now());
    return { client, secret: 's', redirectUri };
  }

  test('scopes openid profile email offline_access are granted as openid profile offline_access', async () => {
    const { browser, user } = await signedInBrowser(t);
    const c = await newClient(t, { type: 'public' });
    const pkce = pkcePair();
    const consent = await browser.fetch(`/oauth/authorize?${authorizeQuery(c, { scope: 'openid profile email offline_access', pkce, extra: { nonce: 'n1' } })}`);
    assert.equal(consent.status, 200);
    const page = await consent.text();
    // The page shows what will really be granted, and says that e-mail will not be.
    assert.match(page, /<code>profile<\/code><\/small>\s*<br>Nickname, avatar and the address of the public profile page, as part of signing you in\./);
    assert.match(page, /<code>offline_access<\/code><\/small>\s*<br>The items above also while you are not using the app/);
    assert.ok(!page.includes('<code>email</code></small>'));
    assert.match(page, /It also asked for <code>email<\/code>\.\s+This site never shares that with applications, so it will not get it\./);
    const approved = await browser.postForm('/oauth/authorize', [...consentForm(page), ['decision', 'approve']]);
    const response = await tokenRequest(t, codeExchangeFields(c, redirectParams(approved).get('code')!, pkce));
    assert.equal(response.status, 200);
    const tokens = (await response.json()) as { access_token: string; refresh_token: string; scope: string; id_token: string };
    // RFC 6749 3.3: the response's scope says what was granted.
    assert.equal(tokens.scope, 'openid profile offline_access');
    assert.ok(tokens.refresh_token);
    const claims = decodeJwt(tokens.id_token);
    assert.equal(claims.preferred_username, user.username);
    assert.equal(claims.picture, `${t.baseUrl}/avatars/${user.id}`);
    assert.equal(claims.profile, `${t.baseUrl}/u/${user.username}`);
    assert.equal(claims.email, undefined);
    const info = await bearer('/api/oauth/userinfo', tokens.access_token);
    assert.deepEqual(await info.json(), {
      sub: String(user.id), preferred_username: user.username, name: user.nickname, picture: `${t.baseUrl}/avatars/${user.id}`, profile: `${t.baseUrl}/u/${user.username}`,
      zoneinfo: t.deps.settings.siteTimeZone,
    });
    // `profile` is no access to the API: /me needs profile:read.
    const me = await bearer('/api/open/v1/me', tokens.access_token);
    assert.equal(me.status, 403);
    assert.equal((await me.json()).error, 'insufficient_scope');
    const introspected = await fetch(`${t.baseUrl}/api/oauth/introspect`, {
      method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: tokens.refresh_token, ...clientFields(c) }).toString(),
    });
    assert.equal((await introspected.json()).scope, 'openid profile offline_access');
  });

  test('email, address and phone alone are invalid_scope: nothing would be granted', async () => {
    const { browser } = await signedInBrowser(t);
    const c = await newClient(t);
    const response = await browser.fetch(`/oauth/authorize?${authorizeQuery(c, { scope: 'email phone' })}`);
    const params = redirectParams(response);
    assert.equal(params.get('error'), 'invalid_scope');
    assert.match(params.get('error_description')!, /never grants email, phone/);
  });

  test('a dropped scope is not granted by asking again at refresh', async () => {
    const { browser } = await signedInBrowser(t);
    const c = await newClient(t);
    const tokens = await obtainTokens(t, browser, c, { scope: 'openid profile email', extra: { nonce: 'n2' } });
    assert.equal(tokens.scope, 'openid profile');
    const narrowed = await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, scope: 'openid profile email', ...clientFields(c) });
    assert.equal(narrowed.status, 200);
    const refreshed = (await narrowed.json()) as { scope: string; refresh_token: string };
    assert.equal(refreshed.scope, 'openid profile');
    const onlyEmail = await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: refreshed.refresh_token, scope: 'email', ...clientFields(c) });
    assert.equal(onlyEmail.status, 400);
    assert.equal((await onlyEmail.json()).error, 'invalid_scope');
    // The refused request left the refresh token as it was.
    const again = await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: refreshed.refresh_token, ...clientFields(c) });
    assert.equal(again.status, 200);
    assert.equal(((await again.json()) as { scope: string }).scope, 'openid profile');
  });

  test('a client registered before these scopes may ask for profile and offline_access; profile needs profile:read', async () => {
    const { browser } = await signedInBrowser(t);
    const old = await storedClient(['openid', 'profile:read', 'posts:read']);
    assert.ok(await obtainCode(browser, old, { scope: 'openid profile offline_access', extra: { nonce: 'n3' } }));
    const signInOnly = await storedClient(['openid']);
    assert.ok(await obtainCode(browser, signInOnly, { scope: 'openid offline_access', extra: { nonce: 'n4' } }));
    const refused = redirectParams(await browser.fetch(`/oauth/authorize?${authorizeQuery(signInOnly, { scope: 'openid profile', extra: { nonce: 'n5' } })}`));
    assert.equal(refused.get('error'), 'invalid_scope');
    assert.match(refused.get('error_description')!, /not registered for profile/);
  });

  test("discovery's scopes_supported lists profile and offline_access, never the dropped ones", async () => {
    const metadata = await (await fetch(`${t.baseUrl}/.well-known/openid-configuration`)).json() as { scopes_supported: string[]; claims_supported: string[] };
    assert.deepEqual(metadata.scopes_supported, ['openid', 'profile', 'offline_access', 'profile:read', 'posts:read']);
    for (const claim of ['preferred_username', 'picture', 'profile']) assert.ok(metadata.claims_supported.includes(claim));
    assert.ok(!metadata.claims_supported.includes('email'));
  });

  test('personal tokens stay limited to profile:read and posts:read', async () => {
    const { user } = await signedInBrowser(t);
    for (const scope of ['profile', 'offline_access', 'openid', 'email']) {
      await assert.rejects(createPersonalToken(t.deps.stores, t.deps.clock, t.deps.tokenMarks, { userId: user.id, name: 'x', scopes: [scope], expiresInDays: 7 }), /personal tokens can have profile:read, posts:read/);
    }
  });
});
