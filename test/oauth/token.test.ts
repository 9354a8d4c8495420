/**
 * POST /api/oauth/token: every row of seed table 7.1, every rule of seed section 3, the response
 * of seed table 2.1, and client authentication (RFC 6749 2.3.1), over real HTTP.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { setAccountStatus } from '../../src/core/accounts/accounts.js';
import { deactivateClient, rotateClientSecret } from '../../src/core/oauth/clients.js';
import { hashSecret } from '../../src/core/credentials/formats.js';
import { MAX_PARAMETER_LENGTH } from '../../src/core/oauth/params.js';
import { withdrawConsent } from '../../src/core/oauth/tokens/revocation.js';
import type { TestApp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';
import { rawRequest } from '../support/raw-request.js';
import {
  type TestClient, type Tokens, clientFields, codeExchangeFields, freshCode, introspect, newClient, obtainCode, obtainTokens, pkcePair,
  signedInBrowser, startOAuthApp, tokenRequest,
} from './helpers.js';

function basic(id: string, secret: string): string {
  const form = (s: string) => encodeURIComponent(s).replace(/%20/g, '+');
  return `Basic ${Buffer.from(`${form(id)}:${form(secret)}`).toString('base64')}`;
}

forEachDatabase('token endpoint', (database) => {
  let t: TestApp;
  before(async () => { t = await startOAuthApp(database); });
  after(() => t.close());

  async function assertError(response: Response, status: number, error: string): Promise<Record<string, unknown>> {
    const body = (await response.json()) as Record<string, unknown>;
    assert.equal(response.status, status, JSON.stringify(body));
    assert.equal(body.error, error);
    assert.equal(typeof body.error_description, 'string');
    assert.deepEqual(Object.keys(body).sort(), ['error', 'error_description']);
    assert.equal(response.headers.get('cache-control'), 'no-store');
    return body;
  }

  const refresh = (c: TestClient, refreshToken: string, extra: Record<string, string> = {}) =>
    tokenRequest(t, { grant_type: 'refresh_token', refresh_token: refreshToken, ...clientFields(c), ...extra });

  test('the token response is exactly seed table 2.1, never cached', async () => {
    const { fields } = await freshCode(t);
    const response = await tokenRequest(t, fields);
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('cache-control'), 'no-store');
    assert.equal(response.headers.get('pragma'), 'no-cache');
    const body = (await response.json()) as Tokens;
    assert.deepEqual(Object.keys(body).sort(), ['access_token', 'expires_in', 'refresh_token', 'scope', 'token_type']);
    assert.match(body.access_token, /^svco_[0-9A-Za-z]{38}$/);
    assert.match(body.refresh_token, /^svcr_[0-9A-Za-z]{38}$/);
    assert.equal(body.token_type, 'Bearer');
    assert.equal(body.expires_in, 3600);
    assert.equal(body.scope, 'profile:read posts:read');
  });

  // Seed table 7.1, invalid_client (401).
  test('invalid_client: a wrong client_secret', async () => {
    const { fields } = await freshCode(t);
    await assertError(await tokenRequest(t, { ...fields, client_secret: 'svcs_wrong' }), 401, 'invalid_client');
  });

  test('invalid_client: a rotated client_secret fails at once', async () => {
    const { fields, c } = await freshCode(t);
    await rotateClientSecret(t.deps.stores, t.deps.clock, c.client.clientId, t.deps.settings.previousClientSecretHours);
    await assertError(await tokenRequest(t, fields), 401, 'invalid_client');
  });

  test('invalid_client: a deactivated application', async () => {
    const { fields, c } = await freshCode(t);
    await deactivateClient(t.deps.stores, t.deps.clock, c.client.clientId);
    await assertError(await tokenRequest(t, fields), 401, 'invalid_client');
  });

  test('invalid_client: an unknown client_id', async () => {
    const { fields } = await freshCode(t);
    await assertError(await tokenRequest(t, { ...fields, client_id: 'nobody' }), 401, 'invalid_client');
  });

  test('invalid_client: a confidential client without its secret', async () => {
    const { fields } = await freshCode(t);
    const { client_secret: _s, ...withoutSecret } = fields;
    await assertError(await tokenRequest(t, withoutSecret), 401, 'invalid_client');
  });

  test('invalid_client: a public client that sends a secret', async () => {
    const { fields } = await freshCode(t, { type: 'public' });
    await assertError(await tokenRequest(t, { ...fields, client_secret: 'svcs_anything' }), 401, 'invalid_client');
  });

  test('invalid_client with Basic authentication carries WWW-Authenticate: Basic', async () => {
    const { fields, c } = await freshCode(t);
    const { client_secret: _s, client_id: _i, ...rest } = fields;
    const response = await tokenRequest(t, rest, { authorization: basic(c.client.clientId, 'svcs_wrong') });
    assert.match(response.headers.get('www-authenticate') ?? '', /^Basic realm="[^"]+"$/);
    await assertError(response, 401, 'invalid_client');
  });

  test('a client_id or client secret too long for any parameter, or holding NUL, is invalid_request in HTTP Basic as in the body: a malformed request, not a failed authentication (RFC 6749 5.2)', async () => {
    const { fields, c } = await freshCode(t);
    const { client_secret: _s, client_id: _i, ...rest } = fields;
    const long = 'a'.repeat(MAX_PARAMETER_LENGTH + 1);
    const cases: Array<[string, string, string]> = [['a long client_id', long, c.secret!], ['a long secret', c.client.clientId, long], ['a NUL in the client_id', 'a\u0000b', c.secret!]];
    for (const [what, id, secret] of cases) {
      const inBody = await assertError(await tokenRequest(t, { ...rest, client_id: id, client_secret: secret }), 400, 'invalid_request');
      const inBasic = await assertError(await tokenRequest(t, rest, { authorization: basic(id, secret) }), 400, 'invalid_request');
      assert.equal(inBasic.error_description, inBody.error_description, what);
    }
    assert.equal((await tokenRequest(t, rest, { authorization: basic(c.client.clientId, c.secret!) })).status, 200, 'the code was left for a well-formed request');
  });

  test('HTTP Basic credentials are form-urlencoded before base64 and decoded so (RFC 6749 2.3.1); a malformed percent-escape is invalid_client with the Basic challenge, never a server error', async () => {
    const { fields, c } = await freshCode(t);
    const { client_secret: _s, client_id: _i, ...rest } = fields;
    const everyByte = (s: string) => [...Buffer.from(s)].map((byte) => `%${byte.toString(16).padStart(2, '0')}`).join('');
    for (const credentials of ['%ZZ:x', `${c.client.clientId}:%E0%A4%A`, `${c.client.clientId}:%ED%A0%80`, `${everyByte(c.client.clientId)}:svcs_%`]) {
      const response = await tokenRequest(t, rest, { authorization: `Basic ${Buffer.from(credentials).toString('base64')}` });
      assert.match(response.headers.get('www-authenticate') ?? '', /^Basic realm="[^"]+"$/, credentials);
      await assertError(response, 401, 'invalid_client');
    }
    const encoded = `Basic ${Buffer.from(`${everyByte(c.client.clientId)}:${everyByte(c.secret!)}`).toString('base64')}`;
    assert.equal((await tokenRequest(t, rest, { authorization: encoded })).status, 200, 'every byte percent-encoded, the credentials are the client\'s');
  });

  test('client_secret_basic authenticates, with form-urlencoded credentials (RFC 6749 2.3.1)', async () => {
    const { fields, c } = await freshCode(t);
    const { client_secret: _s, client_id: _i, ...rest } = fields;
    const response = await tokenRequest(t, rest, { authorization: basic(c.client.clientId, c.secret!) });
    assert.equal(response.status, 200, await response.clone().text());
  });

  test('Basic with a public client\'s id and an empty password is its client_id alone: an empty secret is no secret (RFC 6749 2.3.1), as golang.org/x/oauth2 sends it', async () => {
    const { fields, c } = await freshCode(t, { type: 'public' });
    const { client_id: _i, ...rest } = fields;
    const response = await tokenRequest(t, rest, { authorization: basic(c.client.clientId, '') });
    assert.equal(response.status, 200, await response.clone().text());
    // A confidential client's empty password is its secret missing.
    const confidential = await freshCode(t);
    const { client_secret: _s, client_id: _j, ...others } = confidential.fields;
    const refused = await tokenRequest(t, others, { authorization: basic(confidential.c.client.clientId, '') });
    assert.match(refused.headers.get('www-authenticate') ?? '', /^Basic realm="[^"]+"$/);
    await assertError(refused, 401, 'invalid_client');
  });

  test('an empty client_secret in the body is no secret, as an empty Basic password is: a public client\'s exchange succeeds with it, a confidential client\'s is refused for its secret missing (RFC 6749 2.3.1)', async () => {
    const { fields } = await freshCode(t, { type: 'public' });
    const response = await tokenRequest(t, { ...fields, client_secret: '' });
    assert.equal(response.status, 200, await response.clone().text());
    const confidential = await freshCode(t);
    const refused = await assertError(await tokenRequest(t, { ...confidential.fields, client_secret: '' }), 401, 'invalid_client');
    assert.match(String(refused.error_description), /confidential, so send the client secret/);
  });

  test('invalid_request: two client authentication methods at once', async () => {
    const { fields, c } = await freshCode(t);
    await assertError(await tokenRequest(t, fields, { authorization: basic(c.client.clientId, c.secret!) }), 400, 'invalid_request');
  });

  test('invalid_request: two Authorization headers, even both right (RFC 6749 2.3)', async () => {
    const { fields, c } = await freshCode(t);
    const { client_secret: _s, client_id: _i, ...rest } = fields;
    const right = basic(c.client.clientId, c.secret!);
    const answer = await rawRequest('POST', `${t.baseUrl}/api/oauth/token`,
      ['Content-Type', 'application/x-www-form-urlencoded', 'Authorization', right, 'Authorization', right], new URLSearchParams(rest).toString());
    assert.equal(answer.status, 400);
    assert.equal(answer.headers['cache-control'], 'no-store');
    assert.equal((JSON.parse(answer.body) as { error: string }).error, 'invalid_request');
    assert.equal((await tokenRequest(t, rest, { authorization: right })).status, 200, 'the code was left for a well-formed request');
  });

  test('a public client authenticates with client_id and PKCE only', async () => {
    const { fields } = await freshCode(t, { type: 'public' });
    assert.equal((await tokenRequest(t, fields)).status, 200);
  });

  // Seed table 7.1, invalid_grant (400).
  test('invalid_grant: the code has expired (seed section 3 rule 1: 5 minutes)', async () => {
    const { fields } = await freshCode(t);
    t.clock.advance(300_000);
    await assertError(await tokenRequest(t, fields), 400, 'invalid_grant');
  });

  test('a code is still good just before 5 minutes', async () => {
    const { fields } = await freshCode(t);
    t.clock.advance(299_000);
    assert.equal((await tokenRequest(t, fields)).status, 200);
  });

  test('invalid_grant: the code was already used (seed section 3 rule 2)', async () => {
    const { fields } = await freshCode(t);
    assert.equal((await tokenRequest(t, fields)).status, 200);
    await assertError(await tokenRequest(t, fields), 400, 'invalid_grant');
  });

  test('a reused code revokes every token of that user for that application (seed section 3 rule 2)', async () => {
    const c = await newClient(t);
    const { browser } = await signedInBrowser(t);
    const earlier = await obtainTokens(t, browser, c);
    const pkce = pkcePair();
    const code = await obtainCode(browser, c, { pkce });
    const fields = codeExchangeFields(c, code, pkce);
    const first = (await (await tokenRequest(t, fields)).json()) as Tokens;
    assert.equal((await introspect(t, c, first.access_token)).active, true);
    await assertError(await tokenRequest(t, fields), 400, 'invalid_grant');
    for (const token of [first.access_token, first.refresh_token, earlier.access_token, earlier.refresh_token]) {
      assert.deepEqual(await introspect(t, c, token), { active: false });
    }
    await assertError(await refresh(c, first.refresh_token), 400, 'invalid_grant');
  });

  test('a reused code leaves the same user\'s tokens for other applications alone', async () => {
    const other = await newClient(t);
    const { browser, fields } = await freshCode(t);
    const kept = await obtainTokens(t, browser, other);
    await tokenRequest(t, fields);
    await tokenRequest(t, fields);
    assert.equal((await introspect(t, other, kept.access_token)).active, true);
  });

  test('invalid_grant: code_verifier does not match (RFC 7636 4.6)', async () => {
    const { fields } = await freshCode(t);
    await assertError(await tokenRequest(t, { ...fields, code_verifier: pkcePair().verifier }), 400, 'invalid_grant');
  });

  test('invalid_grant: code_verifier missing when a code_challenge was sent', async () => {
    const { fields } = await freshCode(t);
    const { code_verifier: _v, ...rest } = fields;
    await assertError(await tokenRequest(t, rest), 400, 'invalid_grant');
  });

  test('invalid_grant: code_verifier sent when no code_challenge was', async () => {
    const c = await newClient(t);
    const { browser } = await signedInBrowser(t);
    const code = await obtainCode(browser, c, { pkce: null });
    await assertError(await tokenRequest(t, codeExchangeFields(c, code, null, { code_verifier: pkcePair().verifier })), 400, 'invalid_grant');
  });

  test('a confidential client without PKCE can redeem its code', async () => {
    const c = await newClient(t);
    const { browser } = await signedInBrowser(t);
    const tokens = await obtainTokens(t, browser, c, { pkce: null });
    assert.ok(tokens.access_token);
  });

  test('invalid_grant: redirect_uri differs from the authorization request', async () => {
    const { fields } = await freshCode(t, { redirectUris: ['https://app.example/callback', 'https://app.example/other'] });
    await assertError(await tokenRequest(t, { ...fields, redirect_uri: 'https://app.example/other' }), 400, 'invalid_grant');
  });

  test('invalid_grant: a code issued to another client, which neither consumes it nor counts as reuse (INTERFACE section 3)', async () => {
    const { fields } = await freshCode(t);
    const thief = await newClient(t);
    await assertError(await tokenRequest(t, { ...fields, ...clientFields(thief) }), 400, 'invalid_grant');
    const own = await tokenRequest(t, fields);
    assert.equal(own.status, 200, 'its own client still redeems it');
    const { access_token: token } = await own.json() as { access_token: string };
    assert.equal((await fetch(`${t.baseUrl}/api/open/v1/`, { headers: { authorization: `Bearer ${token}` } })).status, 200, 'and its tokens were not revoked');
  });

  test('a request that does not match the code (wrong verifier, redirect_uri or none) leaves it for the right one, and revokes nothing (INTERFACE section 3)', async () => {
    for (const type of ['public', 'confidential'] as const) {
      const { fields, browser, c } = await freshCode(t, { type });
      // The user's earlier tokens with this app, which a counted "reuse" would end.
      const earlier = await obtainTokens(t, browser, c);
      const { code_verifier: _, ...withoutVerifier } = fields;
      for (const wrong of [
        { ...fields, code_verifier: pkcePair().verifier }, { ...fields, redirect_uri: `${c.redirectUri}/` }, withoutVerifier,
      ]) {
        await assertError(await tokenRequest(t, wrong), 400, 'invalid_grant');
      }
      assert.equal((await tokenRequest(t, fields)).status, 200, `${type}: the app's own request still redeems the code`);
      const me = await fetch(`${t.baseUrl}/api/open/v1/`, { headers: { authorization: `Bearer ${earlier.access_token}` } });
      assert.equal(me.status, 200, `${type}: nothing was revoked`);
    }
  });

  test('a used code presented by a request it is not bound to (wrong verifier, redirect_uri or none) is refused and revokes nothing: only its own request again is reuse', async () => {
    for (const type of ['public', 'confidential'] as const) {
      const { fields, c } = await freshCode(t, { type });
      const redeemed = await tokenRequest(t, fields);
      assert.equal(redeemed.status, 200);
      const { access_token: token } = await redeemed.json() as { access_token: string };
      const { code_verifier: _, ...withoutVerifier } = fields;
      // Whoever merely saw the code (a log, a referrer, a race with the app) holds none of these.
      for (const wrong of [
        { ...fields, code_verifier: pkcePair().verifier }, { ...fields, redirect_uri: `${fields.redirect_uri}/` }, withoutVerifier,
      ]) {
        await assertError(await tokenRequest(t, wrong), 400, 'invalid_grant');
      }
      const me = () => fetch(`${t.baseUrl}/api/open/v1/`, { headers: { authorization: `Bearer ${token}` } });
      assert.equal((await me()).status, 200, `${type}: the redeemed code's tokens still work`);
      assert.equal(t.audit.filter((e) => e.audit === 'code.used_presented_unbound' && e.presentedBy === c.client.clientId).length, 3, `${type}: each is an audit line`);
      assert.ok(!t.audit.some((e) => e.audit === 'code.reuse_detected' && e.clientId === c.client.clientId), `${type}: none is reuse`);
      await assertError(await tokenRequest(t, fields), 400, 'invalid_grant');
      assert.equal((await me()).status, 401, `${type}: its own request again is reuse, and ends them (seed section 3 rule 2)`);
    }
  });

  test('an expired code presented again is not reuse: the user\'s other tokens with the app live on', async () => {
    const { fields, browser, c } = await freshCode(t);
    const earlier = await obtainTokens(t, browser, c);
    t.clock.advance(300_000);
    await assertError(await tokenRequest(t, fields), 400, 'invalid_grant');
    await assertError(await tokenRequest(t, fields), 400, 'invalid_grant');
    assert.equal((await fetch(`${t.baseUrl}/api/open/v1/`, { headers: { authorization: `Bearer ${earlier.access_token}` } })).status, 200);
  });

  test('invalid_grant: an unknown code', async () => {
    const { fields } = await freshCode(t);
    await assertError(await tokenRequest(t, { ...fields, code: 'A'.repeat(43) }), 400, 'invalid_grant');
  });

  test('invalid_grant: consent withdrawn between authorization and redemption', async () => {
    const { fields, user, c } = await freshCode(t);
    await withdrawConsent(t.deps, user.id, c.client.clientId);
    await assertError(await tokenRequest(t, fields), 400, 'invalid_grant');
  });

  test('with openid the grant keeps the nonce and the session auth_time for the id_token', async () => {
    const c = await newClient(t);
    const { browser } = await signedInBrowser(t);
    const signedInAt = t.clock.now();
    t.clock.advance(5_000);
    const tokens = await obtainTokens(t, browser, c, { scope: 'openid profile:read', extra: { nonce: 'n-0S6_WzA2Mj' } });
    assert.equal(tokens.scope, 'openid profile:read');
    const access = await t.deps.stores.tokens.findAccess(hashSecret(tokens.access_token));
    const grant = await t.deps.stores.grants.findById(access!.grantId);
    assert.equal(grant?.nonce, 'n-0S6_WzA2Mj');
    assert.equal(grant?.authTime, signedInAt);
  });

  test('invalid_grant: the account is no longer active when the code is redeemed', async () => {
    const { fields, user } = await freshCode(t);
    await setAccountStatus(t.deps.stores, t.deps.clock, user.id, 'suspended');
    await assertError(await tokenRequest(t, fields), 400, 'invalid_grant');
  });

  test('invalid_grant: the refresh token obtains nothing new after rotation (seed section 3 rule 3)', async () => {
    const { fields, c } = await freshCode(t);
    const tokens = (await (await tokenRequest(t, fields)).json()) as Tokens;
    const rotated = await refresh(c, tokens.refresh_token);
    assert.equal(rotated.status, 200);
    const next = (await rotated.json()) as Tokens;
    assert.notEqual(next.refresh_token, tokens.refresh_token);
    assert.match(next.refresh_token, /^svcr_/);
    assert.deepEqual(Object.keys(next).sort(), ['access_token', 'expires_in', 'refresh_token', 'scope', 'token_type']);
    // Invalid the moment its successor is issued: no replay window by default (INTERFACE section 11).
    await assertError(await refresh(c, tokens.refresh_token), 400, 'invalid_grant');
  });

  test('a rotated refresh token presented again revokes its whole family (RFC 9700 4.14.2)', async () => {
    const { fields, c } = await freshCode(t);
    const tokens = (await (await tokenRequest(t, fields)).json()) as Tokens;
    const next = (await (await refresh(c, tokens.refresh_token)).json()) as Tokens;
    await refresh(c, tokens.refresh_token);
    assert.deepEqual(await introspect(t, c, next.access_token), { active: false });
    await assertError(await refresh(c, next.refresh_token), 400, 'invalid_grant');
  });

  test('invalid_grant: a refresh token of another client', async () => {
    const { fields, c } = await freshCode(t);
    const tokens = (await (await tokenRequest(t, fields)).json()) as Tokens;
    await assertError(await refresh(await newClient(t), tokens.refresh_token), 400, 'invalid_grant');
    assert.equal((await refresh(c, tokens.refresh_token)).status, 200);
  });

  test('invalid_grant: an expired refresh token (30 days)', async () => {
    const { fields, c } = await freshCode(t);
    const tokens = (await (await tokenRequest(t, fields)).json()) as Tokens;
    t.clock.advance(30 * 86_400_000);
    await assertError(await refresh(c, tokens.refresh_token), 400, 'invalid_grant');
  });

  test('invalid_grant: refresh for an account that is no longer active', async () => {
    const { fields, c, user } = await freshCode(t);
    const tokens = (await (await tokenRequest(t, fields)).json()) as Tokens;
    await setAccountStatus(t.deps.stores, t.deps.clock, user.id, 'banned');
    await assertError(await refresh(c, tokens.refresh_token), 400, 'invalid_grant');
  });

  test('refresh may narrow the scope; the refresh token keeps the granted scope', async () => {
    const { fields, c } = await freshCode(t);
    const tokens = (await (await tokenRequest(t, fields)).json()) as Tokens;
    const narrowed = (await (await refresh(c, tokens.refresh_token, { scope: 'posts:read' })).json()) as Tokens;
    assert.equal(narrowed.scope, 'posts:read');
    assert.equal((await introspect(t, c, narrowed.refresh_token)).scope, 'profile:read posts:read');
    const again = (await (await refresh(c, narrowed.refresh_token)).json()) as Tokens;
    assert.equal(again.scope, 'profile:read posts:read');
  });

  test('invalid_scope: refresh may not widen the scope, and the token survives the refusal', async () => {
    const c = await newClient(t);
    const { browser } = await signedInBrowser(t);
    const tokens = await obtainTokens(t, browser, c, { scope: 'profile:read' });
    await assertError(await refresh(c, tokens.refresh_token, { scope: 'profile:read posts:read' }), 400, 'invalid_scope');
    await assertError(await refresh(c, tokens.refresh_token, { scope: 'admin' }), 400, 'invalid_scope');
    assert.equal((await refresh(c, tokens.refresh_token)).status, 200);
  });

  // Seed table 7.1, invalid_request (400).
  for (const missing of ['grant_type', 'client_id', 'code', 'redirect_uri']) {
    test(`invalid_request: ${missing} is missing`, async () => {
      const { fields } = await freshCode(t);
      const without = Object.fromEntries(Object.entries(fields).filter(([k]) => k !== missing && !(missing === 'client_id' && k === 'client_secret')));
      await assertError(await tokenRequest(t, without), 400, 'invalid_request');
    });
  }

  test('invalid_request: refresh_token is missing', async () => {
    const c = await newClient(t);
    await assertError(await tokenRequest(t, { grant_type: 'refresh_token', ...clientFields(c) }), 400, 'invalid_request');
  });

  test('invalid_request: a repeated parameter (RFC 6749 3.2)', async () => {
    const { fields } = await freshCode(t);
    await assertError(await tokenRequest(t, [...Object.entries(fields), ['code', fields.code]]), 400, 'invalid_request');
  });

  test('invalid_request: a body that is not a form, saying what came instead', async () => {
    const { fields } = await freshCode(t);
    const said = async (response: Response) => (await assertError(response, 400, 'invalid_request')).error_description;
    const json = await fetch(`${t.baseUrl}/api/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(fields) });
    assert.match(String(await said(json)), /this request sent JSON/);
    const none = await fetch(`${t.baseUrl}/api/oauth/token`, { method: 'POST' });
    assert.match(String(await said(none)), /this request sent no form body/);
    const text = await fetch(`${t.baseUrl}/api/oauth/token`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: new URLSearchParams(fields).toString() });
    assert.match(String(await said(text)), /this request sent another type/);
    const multipart = new FormData();
    for (const [name, value] of Object.entries(fields)) multipart.append(name, value);
    assert.match(String(await said(await fetch(`${t.baseUrl}/api/oauth/token`, { method: 'POST', body: multipart }))), /this request sent multipart\/form-data/);
  });

  test('a form body with a charset is accepted', async () => {
    const { fields } = await freshCode(t);
    const response = await fetch(`${t.baseUrl}/api/oauth/token`, {
      method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded; charset=UTF-8' }, body: new URLSearchParams(fields).toString(),
    });
    assert.equal(response.status, 200);
  });

  // Seed table 7.1, unsupported_grant_type (400).
  for (const grantType of ['password', 'client_credentials', 'implicit', 'urn:ietf:params:oauth:grant-type:device_code']) {
    test(`unsupported_grant_type: ${grantType}`, async () => {
      const c = await newClient(t);
      await assertError(await tokenRequest(t, { grant_type: grantType, ...clientFields(c) }), 400, 'unsupported_grant_type');
    });
  }

  test('issued and revoked tokens are counted', async () => {
    const counter = async (name: string, label: string) =>
      (await t.deps.metrics.registry.getSingleMetric(name)!.get()).values.find((v) => Object.values(v.labels).includes(label))?.value ?? 0;
    const before = await counter('tokens_issued_total', 'access');
    const revokedBefore = await counter('tokens_revoked_total', 'code_reuse');
    const { fields } = await freshCode(t);
    await tokenRequest(t, fields);
    await tokenRequest(t, fields);
    assert.equal(await counter('tokens_issued_total', 'access'), before + 1);
    assert.equal(await counter('tokens_revoked_total', 'code_reuse'), revokedBefore + 1);
  });
});
