/** POST /api/oauth/revoke (RFC 7009) and /api/oauth/introspect (RFC 7662), and what ends tokens (INTERFACE section 2). */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { setAccountStatus } from '../../src/core/accounts/accounts.js';
import { deactivateClient } from '../../src/core/oauth/clients.js';
import { hashSecret } from '../../src/core/credentials/formats.js';
import { withdrawConsent } from '../../src/core/oauth/tokens/revocation.js';
import type { TestApp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';
import {
  type TestClient, authorizeQuery, clientFields, introspect, newClient, obtainTokens, signedInBrowser, startOAuthApp, tokenRequest,
} from './helpers.js';

forEachDatabase('revocation and introspection', (database) => {
  let t: TestApp;
  before(async () => { t = await startOAuthApp(database); });
  after(() => t.close());

  const post = (path: string, fields: Record<string, string>, headers: Record<string, string> = {}) =>
    fetch(`${t.baseUrl}${path}`, {
      method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, body: new URLSearchParams(fields).toString(),
    });
  const revoke = (c: TestClient, token: string, extra: Record<string, string> = {}) =>
    post('/api/oauth/revoke', { token, ...clientFields(c), ...extra });

  async function setup() {
    const c = await newClient(t);
    const { browser, user } = await signedInBrowser(t);
    const tokens = await obtainTokens(t, browser, c);
    return { c, browser, user, tokens };
  }

  /** What the resource API (issue 4) decides on: the bearer record's revocation. */
  async function bearerRevoked(accessToken: string): Promise<boolean> {
    const record = await t.deps.stores.tokens.findAccessBearer(hashSecret(accessToken));
    return record?.revokedAt !== null;
  }

  /** INTERFACE section 6: 200, `Content-Type: application/json`, the body `{}`. */
  async function assertRevokeAnswer(response: Response): Promise<void> {
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^application\/json\b/);
    assert.equal(response.headers.get('cache-control'), 'no-store');
    assert.equal(await response.text(), '{}');
  }

  test('revoking an access token answers 200 with the JSON body {} and ends only that token', async () => {
    const { c, tokens } = await setup();
    await assertRevokeAnswer(await revoke(c, tokens.access_token, { token_type_hint: 'access_token' }));
    assert.deepEqual(await introspect(t, c, tokens.access_token), { active: false });
    assert.equal((await introspect(t, c, tokens.refresh_token)).active, true);
  });

  test("revoking a refresh token ends its grant's access tokens too", async () => {
    const { c, tokens } = await setup();
    assert.equal((await revoke(c, tokens.refresh_token)).status, 200);
    assert.deepEqual(await introspect(t, c, tokens.refresh_token), { active: false });
    assert.deepEqual(await introspect(t, c, tokens.access_token), { active: false });
    assert.equal(await bearerRevoked(tokens.access_token), true);
    const refreshed = await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, ...clientFields(c) });
    assert.equal(refreshed.status, 400);
  });

  test('a wrong token_type_hint still finds the token (RFC 7009 2.1)', async () => {
    const { c, tokens } = await setup();
    await revoke(c, tokens.refresh_token, { token_type_hint: 'access_token' });
    assert.deepEqual(await introspect(t, c, tokens.refresh_token), { active: false });
  });

  test('revoking an unknown or malformed token answers 200 with the JSON body {} too (RFC 7009 2.2, INTERFACE section 6)', async () => {
    const c = await newClient(t);
    for (const token of ['svco_unknown', 'garbage', 'svcr_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA']) {
      await assertRevokeAnswer(await revoke(c, token));
    }
  });

  test("a client cannot revoke another client's token", async () => {
    const { c, tokens } = await setup();
    const other = await newClient(t);
    assert.equal((await revoke(other, tokens.refresh_token)).status, 200);
    assert.equal((await revoke(other, tokens.access_token)).status, 200);
    assert.equal((await introspect(t, c, tokens.access_token)).active, true);
    assert.equal((await introspect(t, c, tokens.refresh_token)).active, true);
  });

  /** `tokens_revoked_total{reason="revoked_by_client"}` and the `token.revoked` audit lines so far. */
  async function revokedByClient(): Promise<{ counted: number; audited: number }> {
    const counted = (await t.deps.metrics.registry.getSingleMetric('tokens_revoked_total')!.get()).values
      .find((v) => v.labels.reason === 'revoked_by_client')?.value ?? 0;
    return { counted, audited: t.audit.filter((event) => event.audit === 'token.revoked').length };
  }

  test('a token that had already ended (expired, or its grant revoked) is neither counted nor audited when revoked', async () => {
    const expired = await setup();
    t.clock.advance(3600_000);
    const before = await revokedByClient();
    await assertRevokeAnswer(await revoke(expired.c, expired.tokens.access_token));
    assert.deepEqual(await revokedByClient(), before);

    const withdrawn = await setup();
    assert.equal(await withdrawConsent(t.deps, withdrawn.user.id, withdrawn.c.client.clientId), true);
    for (const token of [withdrawn.tokens.access_token, withdrawn.tokens.refresh_token]) await assertRevokeAnswer(await revoke(withdrawn.c, token));
    assert.deepEqual(await revokedByClient(), before);
  });

  test('a token revoked again is counted and audited once', async () => {
    for (const kind of ['access_token', 'refresh_token'] as const) {
      const { c, tokens } = await setup();
      const before = await revokedByClient();
      for (let i = 0; i < 3; i++) await assertRevokeAnswer(await revoke(c, tokens[kind]));
      assert.deepEqual(await revokedByClient(), { counted: before.counted + 1, audited: before.audited + 1 }, kind);
    }
  });

  test('revocation needs client authentication', async () => {
    const { c, tokens } = await setup();
    const response = await post('/api/oauth/revoke', { token: tokens.access_token, client_id: c.client.clientId, client_secret: 'svcs_wrong' });
    assert.equal(response.status, 401);
    assert.equal(((await response.json()) as { error: string }).error, 'invalid_client');
    assert.equal((await introspect(t, c, tokens.access_token)).active, true);
  });

  test('revocation without a token is invalid_request', async () => {
    const c = await newClient(t);
    const response = await post('/api/oauth/revoke', clientFields(c));
    assert.equal(response.status, 400);
    assert.equal(((await response.json()) as { error: string }).error, 'invalid_request');
  });

  test('introspection of a live access token gives its fields (RFC 7662 2.2)', async () => {
    const { c, user, tokens } = await setup();
    const body = await introspect(t, c, tokens.access_token);
    const now = Math.floor(t.clock.now() / 1000);
    assert.deepEqual(body, {
      active: true, scope: 'profile:read posts:read', client_id: c.client.clientId, username: user.username,
      sub: String(user.id), exp: now + 3600, iat: now, token_type: 'Bearer',
      aud: `${t.baseUrl}/api/open/v1`, // RFC 8707: every access token is for the resource API
    });
  });

  test('introspection of a live refresh token says it is one', async () => {
    const { c, tokens } = await setup();
    const body = await introspect(t, c, tokens.refresh_token);
    assert.equal(body.active, true);
    assert.equal(body.token_type, 'refresh_token');
  });

  test("introspection of another client's token is exactly {active:false}", async () => {
    const { tokens } = await setup();
    assert.deepEqual(await introspect(t, await newClient(t), tokens.access_token), { active: false });
  });

  test('introspection of an expired access token is {active:false}', async () => {
    const { c, tokens } = await setup();
    t.clock.advance(3600_000);
    assert.deepEqual(await introspect(t, c, tokens.access_token), { active: false });
    assert.equal((await introspect(t, c, tokens.refresh_token)).active, true);
  });

  test('introspection of garbage is {active:false}', async () => {
    const c = await newClient(t);
    assert.deepEqual(await introspect(t, c, 'not-a-token'), { active: false });
  });

  test('introspection needs client authentication', async () => {
    const { c, tokens } = await setup();
    const response = await post('/api/oauth/introspect', { token: tokens.access_token, client_id: c.client.clientId });
    assert.equal(response.status, 401);
  });

  test('an account that is no longer active ends its tokens (INTERFACE section 4)', async () => {
    const { c, user, tokens } = await setup();
    await setAccountStatus(t.deps.stores, t.deps.clock, user.id, 'suspended');
    assert.deepEqual(await introspect(t, c, tokens.access_token), { active: false });
    assert.deepEqual(await introspect(t, c, tokens.refresh_token), { active: false });
    assert.equal(await bearerRevoked(tokens.access_token), true);
  });

  test("a deactivated client's tokens end and it can no longer authenticate", async () => {
    const { c, tokens } = await setup();
    await deactivateClient(t.deps.stores, t.deps.clock, c.client.clientId);
    assert.equal(await bearerRevoked(tokens.access_token), true);
    const refreshed = await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, ...clientFields(c) });
    assert.equal(refreshed.status, 401);
  });

  test('withdrawn consent ends the tokens and the consent page is shown again', async () => {
    const { c, user, browser, tokens } = await setup();
    assert.equal(await withdrawConsent(t.deps, user.id, c.client.clientId), true);
    assert.deepEqual(await introspect(t, c, tokens.access_token), { active: false });
    assert.deepEqual(await introspect(t, c, tokens.refresh_token), { active: false });
    assert.equal(await bearerRevoked(tokens.access_token), true);
    const page = await browser.fetch(`/oauth/authorize?${authorizeQuery(c)}`);
    assert.equal(page.status, 200);
    await page.text();
  });
});
