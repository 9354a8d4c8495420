/** Discovery, JWKS and id_token signing over real HTTP on each database (issue 5). */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createLocalJWKSet, createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { rotateSigningKeys } from '../../src/core/keys.js';
import { accessTokenHash, issueIdToken } from '../../src/core/oidc/id-token.js';
import { siteUrls } from '../../src/core/urls.js';
import { type TestApp, startTestApp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';

const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'];

forEachDatabase('OpenID Connect keys and discovery', (database) => {
  let t: TestApp;
  before(async () => { t = await startTestApp(database); });
  after(() => t.close());

  const sign = (alg: 'RS256' | 'ES256', accessToken = 'svco_example') =>
    issueIdToken(t.deps.keys, siteUrls(t.baseUrl), {
      issuer: t.baseUrl, client: { clientId: 'client-1', idTokenAlg: alg }, user: { id: 42, username: 'ann' },
      scopes: ['openid', 'profile:read'], nonce: 'n-0S6', authTime: t.clock.now() - 60_000, accessToken, now: t.clock.now(),
    });

  const jwks = async () => (await (await fetch(`${t.baseUrl}/.well-known/jwks.json`)).json()) as { keys: Array<Record<string, unknown>> };

  test('discovery names the issuer and every endpoint under it, and is cacheable', async () => {
    for (const path of ['/.well-known/openid-configuration', '/.well-known/oauth-authorization-server']) {
      const res = await fetch(`${t.baseUrl}${path}`);
      assert.equal(res.status, 200);
      assert.match(res.headers.get('cache-control')!, /^public, max-age=\d+$/);
      const m = await res.json();
      assert.equal(m.issuer, t.baseUrl);
      assert.equal(m.authorization_endpoint, `${t.baseUrl}/oauth/authorize`);
      assert.equal(m.token_endpoint, `${t.baseUrl}/api/oauth/token`);
      assert.equal(m.userinfo_endpoint, `${t.baseUrl}/api/oauth/userinfo`);
      assert.equal(m.jwks_uri, `${t.baseUrl}/.well-known/jwks.json`);
      assert.equal(m.revocation_endpoint, `${t.baseUrl}/api/oauth/revoke`);
      assert.equal(m.introspection_endpoint, `${t.baseUrl}/api/oauth/introspect`);
      assert.deepEqual(m.scopes_supported, ['openid', 'profile:read', 'posts:read']);
      assert.deepEqual(m.response_types_supported, ['code']);
      assert.deepEqual(m.grant_types_supported, ['authorization_code', 'refresh_token']);
      assert.deepEqual(m.code_challenge_methods_supported, ['S256']);
      assert.deepEqual(m.id_token_signing_alg_values_supported, ['RS256', 'ES256']);
      assert.deepEqual(m.subject_types_supported, ['public']);
      assert.equal(m.authorization_response_iss_parameter_supported, true);
      assert.ok(m.token_endpoint_auth_methods_supported.includes('client_secret_basic'));
      assert.ok(m.token_endpoint_auth_methods_supported.includes('client_secret_post'));
      for (const claim of ['sub', 'nonce', 'at_hash', 'auth_time', 'preferred_username', 'picture', 'profile']) {
        assert.ok(m.claims_supported.includes(claim), claim);
      }
    }
  });

  test('the JWKS lists an RS256 and an ES256 key with kid, use and alg, and never a private member', async () => {
    const { keys } = await jwks();
    assert.deepEqual(keys.map((k) => k.alg).sort(), ['ES256', 'RS256']);
    for (const key of keys) {
      assert.equal(key.use, 'sig');
      assert.match(String(key.kid), /^[A-Za-z0-9_-]{43}$/);
      for (const member of PRIVATE_MEMBERS) assert.equal(member in key, false, member);
    }
  });

  test('an id_token verifies against the JWKS with the claims of INTERFACE section 5', async () => {
    const token = await sign('RS256', 'svco_accesstoken');
    const { payload, protectedHeader } = await jwtVerify(token, createRemoteJWKSet(new URL(`${t.baseUrl}/.well-known/jwks.json`)), {
      issuer: t.baseUrl, audience: 'client-1', currentDate: new Date(t.clock.now()),
    });
    assert.equal(protectedHeader.alg, 'RS256');
    assert.equal(payload.sub, '42');
    assert.equal(payload.azp, 'client-1');
    assert.equal(payload.nonce, 'n-0S6');
    assert.equal(payload.auth_time, Math.floor((t.clock.now() - 60_000) / 1000));
    assert.equal(payload.exp! - payload.iat!, 3600);
    assert.equal(payload.at_hash, accessTokenHash('svco_accesstoken'));
    assert.equal(payload.preferred_username, 'ann');
    assert.equal(payload.picture, `${t.baseUrl}/avatars/42`);
    assert.equal(payload.profile, `${t.baseUrl}/u/ann`);
  });

  test('a client registered for ES256 gets an ES256 id_token', async () => {
    const token = await sign('ES256');
    assert.equal(decodeProtectedHeader(token).alg, 'ES256');
    await jwtVerify(token, createLocalJWKSet(await jwks() as never), { currentDate: new Date(t.clock.now()) });
  });

  test('after a rotation the old id_token still verifies, the next carries the new kid, and the old key leaves after the window', async () => {
    const before = await sign('RS256');
    const oldKid = decodeProtectedHeader(before).kid;
    const { RS256: newKid } = await rotateSigningKeys(t.deps.stores, t.deps.clock, t.deps.settings.keysSecret);
    t.deps.keys.invalidate();
    const next = await sign('RS256');
    assert.equal(decodeProtectedHeader(next).kid, newKid);
    assert.notEqual(newKid, oldKid);
    const set = createLocalJWKSet(await jwks() as never);
    await jwtVerify(before, set, { currentDate: new Date(t.clock.now()) });
    await jwtVerify(next, set, { currentDate: new Date(t.clock.now()) });
    // Once every id_token the old key signed has expired, it is no longer published.
    t.clock.advance((3600 + 301) * 1000);
    t.deps.keys.invalidate();
    const kids = (await jwks()).keys.map((k) => k.kid);
    assert.ok(kids.includes(newKid));
    assert.ok(!kids.includes(oldKid));
  });
});

test('with KEYS_SECRET, private keys are encrypted at rest and still sign', async () => {
  const { temporarySqlitePath } = await import('../support/databases.js');
  const path = temporarySqlitePath();
  const secret = 'a-keys-secret-of-at-least-32-characters!';
  const t = await startTestApp({ name: 'sqlite', target: { kind: 'sqlite', path }, url: `sqlite:${path}` }, { env: { KEYS_SECRET: secret } });
  try {
    const rows = await t.deps.database.db.selectFrom('signing_keys').select('private_jwk').execute();
    assert.ok(rows.length >= 2);
    for (const row of rows) {
      assert.match(row.private_jwk, /^enc:v1:/);
      assert.doesNotMatch(row.private_jwk, /"d"/);
    }
    const token = await issueIdToken(t.deps.keys, siteUrls(t.baseUrl), {
      issuer: t.baseUrl, client: { clientId: 'c', idTokenAlg: 'ES256' }, user: { id: 1, username: 'x' },
      scopes: ['openid'], nonce: null, authTime: t.clock.now(), accessToken: 'a', now: t.clock.now(),
    });
    const { payload } = await jwtVerify(token, createRemoteJWKSet(new URL(`${t.baseUrl}/.well-known/jwks.json`)), { currentDate: new Date(t.clock.now()) });
    assert.equal(payload.nonce, undefined, 'no nonce when none was given (refresh)');
    assert.equal(payload.preferred_username, undefined, 'no profile claims without profile:read');
  } finally {
    await t.close();
  }
});
