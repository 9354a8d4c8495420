/**
 * The member's names, language and zone in the id_token and UserInfo, and the API's display name
 * (INTERFACE section 12, seed 2.2), read by openid-client v6 as an app reads them, on each database.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import * as client from 'openid-client';
import type { User } from '../../src/core/accounts/ports.js';
import type { Clock } from '../../src/core/time.js';
import type { TestApp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';
import { consentForm, newClient, signedInBrowser, startOAuthApp } from '../oauth/helpers.js';

/** The real clock: openid-client checks the id_token's `iat` and `exp` against its own. */
const realClock = { now: () => Date.now(), advance: () => { throw new Error('the real clock does not jump'); } } as unknown as Clock;

forEachDatabase('the profile claims and the display name', (database) => {
  let t: TestApp;
  before(async () => { t = await startOAuthApp(database, { clock: realClock as never }); });
  after(() => t.close());

  /** A member signs in to an openid-client app with `scopes`; what the app then holds. */
  async function signInWithOpenIdClient(profile: { nickname: string; language: 'zh-CN' | 'zh-TW' | null; timeZone: string | null }, scope: string) {
    const { browser, user } = await signedInBrowser(t);
    await t.deps.stores.users.updateProfile(user.id, profile, t.clock.now());
    const c = await newClient(t, { type: 'public', redirectUris: ['http://127.0.0.1/callback'] });
    const config = await client.discovery(new URL(t.baseUrl), c.client.clientId, undefined, client.None(), { execute: [client.allowInsecureRequests] });
    const verifier = client.randomPKCECodeVerifier();
    const nonce = client.randomNonce();
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: c.redirectUri, scope, nonce, code_challenge: await client.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256',
    });
    const consent = await browser.fetch(url.href);
    assert.equal(consent.status, 200);
    const answer = await browser.postForm('/oauth/authorize', [...consentForm(await consent.text()), ['decision', 'approve']]);
    const tokens = await client.authorizationCodeGrant(config, new URL(answer.headers.get('location')!), { pkceCodeVerifier: verifier, expectedNonce: nonce });
    return { config, tokens, user };
  }

  const addresses = (user: User) => ({ picture: `${t.baseUrl}/avatars/${user.id}`, profile: `${t.baseUrl}/u/${user.username}` });

  test('with profile, the id_token and UserInfo name the member by nickname beside the username, with the saved language and the site zone', async () => {
    const { config, tokens, user } = await signInWithOpenIdClient({ nickname: '林小伟', language: 'zh-TW', timeZone: null }, 'openid profile');
    const expected = {
      sub: String(user.id), preferred_username: user.username, name: '林小伟', ...addresses(user), locale: 'zh-TW', zoneinfo: t.deps.settings.siteTimeZone,
    };
    const idToken = tokens.claims()!;
    assert.deepEqual(Object.fromEntries(Object.keys(expected).map((k) => [k, idToken[k]])), expected);
    assert.deepEqual(await client.fetchUserInfo(config, tokens.access_token, String(user.id)), expected);
  });

  test('locale is left out when the member saved no language; zoneinfo is the zone they saved', async () => {
    const { config, tokens, user } = await signInWithOpenIdClient({ nickname: '陳大文', language: null, timeZone: 'Asia/Taipei' }, 'openid profile:read');
    const idToken = tokens.claims()!;
    assert.equal(idToken.name, '陳大文');
    assert.equal(idToken.zoneinfo, 'Asia/Taipei');
    assert.equal('locale' in idToken, false, 'no empty locale (OIDC Core 5.3.2)');
    const info = await client.fetchUserInfo(config, tokens.access_token, String(user.id));
    assert.deepEqual(info, { sub: String(user.id), preferred_username: user.username, name: '陳大文', ...addresses(user), zoneinfo: 'Asia/Taipei' });
  });

  test('the API\'s username is the nickname; the profile address keeps the username', async () => {
    const { config, tokens, user } = await signInWithOpenIdClient({ nickname: '林小伟', language: null, timeZone: null }, 'openid profile:read');
    const me = await client.fetchProtectedResource(config, tokens.access_token, new URL(`${t.baseUrl}/api/open/v1/me`), 'GET');
    assert.equal(me.status, 200);
    const body = (await me.json()) as { username: string; profileUrl: string };
    assert.equal(body.username, '林小伟');
    assert.equal(body.profileUrl, `${t.baseUrl}/u/${user.username}`);
  });

  test('discovery lists name, locale and zoneinfo among the claims it issues', async () => {
    const metadata = (await (await fetch(`${t.baseUrl}/.well-known/openid-configuration`)).json()) as { claims_supported: string[] };
    for (const claim of ['preferred_username', 'name', 'locale', 'zoneinfo']) assert.ok(metadata.claims_supported.includes(claim), claim);
  });
});
