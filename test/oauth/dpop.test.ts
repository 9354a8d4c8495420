/**
 * DPoP (RFC 9449, issue 19 item 2) over real HTTP: tokens bound to the key of the token request's
 * proof, server nonces at the token endpoint and the resource API, `Authorization: DPoP` at /me
 * and UserInfo, bound refresh tokens, `dpop_jkt`, introspection's `cnf.jkt`, and jti replay across
 * two instances on one database (and one Redis when there is one). Without a proof, everything
 * stays Bearer (seed 2.1).
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { setAccountStatus } from '../../src/core/accounts/accounts.js';
import { generateToken } from '../../src/core/credentials/formats.js';
import { ACCOUNT_NOT_ACTIVE } from '../../src/core/errors.js';
import { DPOP_ALGS } from '../../src/core/oauth/dpop/proof.js';
import type { TestApp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';
import { type DpopKey, dpopKey, dpopProof } from '../support/dpop.js';
import { type Instances, startInstances } from '../support/instances.js';
import { redisUrl } from '../support/redis.js';
import {
  type TestClient, type Tokens, clientFields, codeExchangeFields, freshCode, introspect, newClient, obtainCode, pkcePair, signedInBrowser,
  startOAuthApp, tokenRequest,
} from './helpers.js';

const ALGS = DPOP_ALGS.join(' ');

forEachDatabase('DPoP (RFC 9449)', (database) => {
  let t: TestApp;
  // The replay window turned on: a bound token's replay is tested below (INTERFACE section 11).
  before(async () => { t = await startOAuthApp(database, { env: { REFRESH_REPLAY_SECONDS: '20' } }); });
  after(() => t.close());

  const tokenUrl = () => `${t.baseUrl}/api/oauth/token`;
  const meUrl = () => `${t.baseUrl}/api/open/v1/me`;

  /** The nonce the token endpoint asks for: a proof without one is refused with it. */
  async function nonceFromTokenEndpoint(key: DpopKey, fields: Record<string, string>): Promise<string> {
    const asked = await tokenRequest(t, fields, { dpop: await dpopProof(key, { htu: tokenUrl(), nowMs: t.clock.now() }) });
    assert.equal(asked.status, 400);
    assert.equal(((await asked.json()) as { error: string }).error, 'use_dpop_nonce');
    return asked.headers.get('dpop-nonce')!;
  }

  /** A code redeemed with a proof of `key` (after the nonce round trip). */
  async function dpopTokens(c: TestClient, key: DpopKey, options: { dpopJkt?: string } = {}): Promise<{ tokens: Tokens; nonce: string; user: { id: number } }> {
    const { browser, user } = await signedInBrowser(t);
    const pkce = pkcePair();
    const code = await obtainCode(browser, c, { pkce, ...(options.dpopJkt ? { extra: { dpop_jkt: options.dpopJkt } } : {}) });
    const fields = codeExchangeFields(c, code, pkce);
    const nonce = await nonceFromTokenEndpoint(key, fields);
    const response = await tokenRequest(t, fields, { dpop: await dpopProof(key, { htu: tokenUrl(), nowMs: t.clock.now(), nonce }) });
    assert.equal(response.status, 200, await response.clone().text());
    return { tokens: (await response.json()) as Tokens, nonce, user };
  }

  async function me(authorization: string, dpop?: string): Promise<Response> {
    return fetch(meUrl(), { headers: { authorization, ...(dpop === undefined ? {} : { dpop }) } });
  }

  /** RFC 9728 5.1: every challenge of the API names its metadata. */
  const rm = () => `resource_metadata="${t.baseUrl}/.well-known/oauth-protected-resource/api/open/v1"`;

  const meProof = (key: DpopKey, token: string, nonce?: string) =>
    dpopProof(key, { htm: 'GET', htu: meUrl(), nowMs: t.clock.now(), accessToken: token, ...(nonce === undefined ? {} : { nonce }) });

  test('a code exchanged with a DPoP proof gives token_type DPoP; introspection shows token_type DPoP and cnf.jkt on both tokens', async () => {
    const c = await newClient(t);
    const key = await dpopKey();
    const { tokens } = await dpopTokens(c, key);
    assert.equal(tokens.token_type, 'DPoP');
    assert.match(tokens.access_token, /^svco_/);
    const access = await introspect(t, c, tokens.access_token);
    assert.equal(access.active, true);
    assert.equal(access.token_type, 'DPoP');
    assert.deepEqual(access.cnf, { jkt: key.jkt });
    const refresh = await introspect(t, c, tokens.refresh_token);
    assert.equal(refresh.token_type, 'refresh_token');
    assert.deepEqual(refresh.cnf, { jkt: key.jkt });
  });

  test('without a proof everything stays Bearer (seed 2.1): token_type Bearer, no cnf', async () => {
    const { c, fields } = await freshCode(t);
    const response = await tokenRequest(t, fields);
    const tokens = (await response.json()) as Tokens;
    assert.equal(tokens.token_type, 'Bearer');
    assert.equal(response.headers.get('dpop-nonce'), null);
    const access = await introspect(t, c, tokens.access_token);
    assert.equal(access.token_type, 'Bearer');
    assert.equal(access.cnf, undefined);
    assert.equal((await me(`Bearer ${tokens.access_token}`)).status, 200);
  });

  test('the token endpoint requires a nonce: 400 use_dpop_nonce with DPoP-Nonce, readable cross-origin; the code is not consumed', async () => {
    const { fields } = await freshCode(t, { type: 'public' });
    const key = await dpopKey();
    const asked = await tokenRequest(t, fields, { dpop: await dpopProof(key, { htu: tokenUrl(), nowMs: t.clock.now() }), origin: 'https://spa.example' });
    assert.equal(asked.status, 400);
    assert.equal(((await asked.json()) as { error: string }).error, 'use_dpop_nonce');
    const nonce = asked.headers.get('dpop-nonce');
    assert.match(nonce ?? '', /^[A-Za-z0-9_-]{43}$/);
    assert.match(asked.headers.get('access-control-expose-headers') ?? '', /DPoP-Nonce/);
    const preflight = await fetch(tokenUrl(), { method: 'OPTIONS', headers: { origin: 'https://spa.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'dpop' } });
    assert.match(preflight.headers.get('access-control-allow-headers') ?? '', /\bDPoP\b/);
    const redeemed = await tokenRequest(t, fields, { dpop: await dpopProof(key, { htu: tokenUrl(), nowMs: t.clock.now(), nonce: nonce! }) });
    assert.equal(redeemed.status, 200, 'the code survived the nonce round trip');
    assert.equal(((await redeemed.json()) as Tokens).token_type, 'DPoP');
  });

  test('a bad proof at the token endpoint is 400 invalid_dpop_proof and leaves the code unused', async () => {
    const { fields } = await freshCode(t);
    const key = await dpopKey();
    const nonce = await nonceFromTokenEndpoint(key, fields);
    const wrongUri = await tokenRequest(t, fields, { dpop: await dpopProof(key, { htu: `${t.baseUrl}/api/oauth/revoke`, nowMs: t.clock.now(), nonce }) });
    assert.equal(wrongUri.status, 400);
    assert.equal(((await wrongUri.json()) as { error: string }).error, 'invalid_dpop_proof');
    const ok = await tokenRequest(t, fields, { dpop: await dpopProof(key, { htu: tokenUrl(), nowMs: t.clock.now(), nonce }) });
    assert.equal(ok.status, 200);
  });

  test('/me with Authorization: DPoP and a proof works; the same token as Bearer is refused with a DPoP challenge (RFC 9449 7.1)', async () => {
    const c = await newClient(t);
    const key = await dpopKey();
    const { tokens, nonce } = await dpopTokens(c, key);
    const ok = await me(`DPoP ${tokens.access_token}`, await meProof(key, tokens.access_token, nonce));
    assert.equal(ok.status, 200, await ok.clone().text());
    assert.ok(((await ok.json()) as { username: string }).username);

    const asBearer = await me(`Bearer ${tokens.access_token}`);
    assert.equal(asBearer.status, 401);
    assert.equal(((await asBearer.json()) as { error: string }).error, 'invalid_token');
    assert.equal(asBearer.headers.get('www-authenticate'), `DPoP realm="api", algs="${ALGS}", error="invalid_token", ${rm()}, Bearer realm="api", ${rm()}`);

    // A revoked or unknown token sent with the DPoP scheme: the error is on the DPoP challenge.
    const stranger = generateToken('access');
    const unknown = await me(`DPoP ${stranger}`, await meProof(key, stranger, nonce));
    assert.equal(unknown.status, 401);
    assert.match(((await unknown.json()) as { error_description: string }).error_description, /unknown/);
    assert.match(unknown.headers.get('www-authenticate') ?? '', /^DPoP realm="api", algs="[^"]+", error="invalid_token", resource_metadata="[^"]+", Bearer realm="api", resource_metadata="[^"]+"$/);

    const withoutProof = await me(`DPoP ${tokens.access_token}`);
    assert.equal(withoutProof.status, 401);
    assert.equal(((await withoutProof.json()) as { error: string }).error, 'invalid_dpop_proof');
  });

  test('at the resource API, a proof must carry ath of the token, htm and htu of the request, and the token\'s key', async () => {
    const c = await newClient(t);
    const key = await dpopKey();
    const { tokens, nonce } = await dpopTokens(c, key);
    const refused = async (proof: string) => {
      const response = await me(`DPoP ${tokens.access_token}`, proof);
      assert.equal(response.status, 401);
      assert.match(response.headers.get('www-authenticate') ?? '', /^DPoP realm="api", algs="[^"]+", error="(invalid_dpop_proof|invalid_token)"/);
      return ((await response.json()) as { error: string; error_description: string });
    };
    const wrongAth = await refused(await meProof(key, 'svco_another_token', nonce));
    assert.equal(wrongAth.error, 'invalid_dpop_proof');
    assert.match(wrongAth.error_description, /ath/);
    assert.equal((await refused(await dpopProof(key, { htm: 'POST', htu: meUrl(), nowMs: t.clock.now(), accessToken: tokens.access_token, nonce }))).error, 'invalid_dpop_proof');
    assert.equal((await refused(await dpopProof(key, { htm: 'GET', htu: `${t.baseUrl}/api/open/v1/me/posts`, nowMs: t.clock.now(), accessToken: tokens.access_token, nonce }))).error, 'invalid_dpop_proof');
    const otherKey = await refused(await meProof(await dpopKey(), tokens.access_token, nonce));
    assert.equal(otherKey.error, 'invalid_token');
    assert.match(otherKey.error_description, /another key/);
  });

  test('a bound access token tells that its account is not active only with a proof of its key: as Bearer, or with another key\'s proof, it is told what an active account\'s is', async () => {
    const c = await newClient(t);
    const key = await dpopKey();
    const { tokens, nonce, user } = await dpopTokens(c, key);
    const thiefProof = await meProof(await dpopKey(), tokens.access_token, nonce);
    const keyless = async () => Promise.all([me(`Bearer ${tokens.access_token}`), me(`DPoP ${tokens.access_token}`, thiefProof)].map(async (sent) => {
      const response = await sent;
      return [response.status, response.headers.get('www-authenticate'), await response.json()];
    }));
    const whileActive = await keyless();
    await setAccountStatus(t.deps.stores, t.deps.clock, user.id, 'suspended');
    for (const attempt of ['first', 'second']) assert.deepEqual(await keyless(), whileActive, `${attempt}: one without the key learns nothing of the status`);
    const held = await me(`DPoP ${tokens.access_token}`, await meProof(key, tokens.access_token, nonce));
    assert.equal(held.status, 401);
    assert.match(held.headers.get('www-authenticate') ?? '', /^DPoP realm="api", algs="[^"]+", error="invalid_token"/);
    assert.equal(((await held.json()) as { error_description: string }).error_description, ACCOUNT_NOT_ACTIVE, 'the key\'s holder is told');
  });

  test('a proof of another key than the token\'s is refused before its jti is remembered: one who holds a stolen token but not its key has nothing written (attack94)', async () => {
    const c = await newClient(t);
    const { tokens, nonce } = await dpopTokens(c, await dpopKey());
    const thief = await meProof(await dpopKey(), tokens.access_token, nonce);
    // Sent twice: a proof remembered the first time would be refused the second as used already.
    for (const attempt of ['first', 'second']) {
      const response = await me(`DPoP ${tokens.access_token}`, thief);
      assert.equal(response.status, 401);
      const body = (await response.json()) as { error: string; error_description: string };
      assert.equal(body.error, 'invalid_token', attempt);
      assert.match(body.error_description, /another key/, attempt);
    }
  });

  test('the resource API asks for a fresh nonce: 401 WWW-Authenticate DPoP error="use_dpop_nonce" with DPoP-Nonce', async () => {
    const c = await newClient(t);
    const key = await dpopKey();
    const { tokens } = await dpopTokens(c, key);
    const asked = await me(`DPoP ${tokens.access_token}`, await meProof(key, tokens.access_token));
    assert.equal(asked.status, 401);
    assert.equal(asked.headers.get('www-authenticate'), `DPoP realm="api", algs="${ALGS}", error="use_dpop_nonce", ${rm()}, Bearer realm="api", ${rm()}`);
    assert.equal(((await asked.json()) as { error: string }).error, 'use_dpop_nonce');
    const nonce = asked.headers.get('dpop-nonce')!;
    assert.equal((await me(`DPoP ${tokens.access_token}`, await meProof(key, tokens.access_token, nonce))).status, 200);
    // Three minutes later the nonce has expired: asked again, with a new one.
    t.clock.advance(180_000);
    const again = await me(`DPoP ${tokens.access_token}`, await meProof(key, tokens.access_token, nonce));
    assert.equal(again.status, 401);
    assert.notEqual(again.headers.get('dpop-nonce'), nonce);
  });

  test('at an address refused for unknown tokens, a DPoP client whose nonce expired is told a fresh one and served with it', async () => {
    const c = await newClient(t);
    const key = await dpopKey();
    const { tokens, nonce } = await dpopTokens(c, key);
    t.clock.advance(180_000);
    // A page on another site has its visitors' browsers present 300 made-up tokens.
    for (let i = 0; i < 300; i++) await me(`Bearer ${generateToken('access')}`);
    assert.equal((await me(`Bearer ${generateToken('access')}`)).status, 429);
    const asked = await me(`DPoP ${tokens.access_token}`, await meProof(key, tokens.access_token, nonce));
    assert.equal(asked.status, 401);
    assert.equal(((await asked.json()) as { error: string }).error, 'use_dpop_nonce');
    const fresh = asked.headers.get('dpop-nonce')!;
    assert.notEqual(fresh, nonce);
    assert.equal((await me(`DPoP ${tokens.access_token}`, await meProof(key, tokens.access_token, fresh))).status, 200);
    const otherKey = await meProof(await dpopKey(), tokens.access_token, fresh);
    assert.equal((await me(`DPoP ${tokens.access_token}`, otherKey)).status, 429, 'any other refusal is the address\'s');
    t.clock.advance(60_000);
  });

  test('a replayed proof is refused (jti)', async () => {
    const c = await newClient(t);
    const key = await dpopKey();
    const { tokens, nonce } = await dpopTokens(c, key);
    const proof = await meProof(key, tokens.access_token, nonce);
    assert.equal((await me(`DPoP ${tokens.access_token}`, proof)).status, 200);
    const replay = await me(`DPoP ${tokens.access_token}`, proof);
    assert.equal(replay.status, 401);
    assert.match(((await replay.json()) as { error_description: string }).error_description, /used already/);
  });

  test('Authorization: DPoP with access_token in the query string is 400 invalid_request on the DPoP challenge, even with a valid proof (RFC 6750 2, 3.1; RFC 9449 7.1)', async () => {
    const c = await newClient(t);
    const key = await dpopKey();
    const { tokens, nonce } = await dpopTokens(c, key);
    const answer = await fetch(`${meUrl()}?access_token=${tokens.access_token}`, {
      headers: { authorization: `DPoP ${tokens.access_token}`, dpop: await meProof(key, tokens.access_token, nonce) },
    });
    assert.equal(answer.status, 400, await answer.clone().text());
    assert.equal(answer.headers.get('www-authenticate'), `DPoP realm="api", algs="${ALGS}", error="invalid_request", ${rm()}, Bearer realm="api", ${rm()}`);
    const error = (await answer.json()) as Record<string, string>;
    assert.equal(error.error, 'invalid_request');
    assert.match(error.error_description!, /Authorization header and access_token in the query string: .*Authorization: DPoP <token>/);
    assert.equal((await me(`DPoP ${tokens.access_token}`, await meProof(key, tokens.access_token, nonce))).status, 200, 'the header alone is served');
  });

  test('UserInfo accepts Authorization: DPoP with a proof', async () => {
    const { fields } = await freshCode(t, {}, { scope: 'openid profile:read' });
    const key = await dpopKey();
    const nonce = await nonceFromTokenEndpoint(key, fields);
    const tokens = (await (await tokenRequest(t, fields, { dpop: await dpopProof(key, { htu: tokenUrl(), nowMs: t.clock.now(), nonce }) })).json()) as Tokens;
    const url = `${t.baseUrl}/api/oauth/userinfo`;
    const proof = await dpopProof(key, { htm: 'GET', htu: url, nowMs: t.clock.now(), accessToken: tokens.access_token, nonce });
    const info = await fetch(url, { headers: { authorization: `DPoP ${tokens.access_token}`, dpop: proof } });
    assert.equal(info.status, 200, await info.clone().text());
    assert.ok(((await info.json()) as { sub: string }).sub);
    assert.equal((await fetch(url, { headers: { authorization: `Bearer ${tokens.access_token}` } })).status, 401);
  });

  test('UserInfo refuses a DPoP POST whose body is neither a form nor absent: 400 invalid_request on the DPoP challenge (OIDC Core 5.3.1, RFC 6750 2.2 and 3.1)', async () => {
    const { fields } = await freshCode(t, {}, { scope: 'openid profile:read' });
    const key = await dpopKey();
    const nonce = await nonceFromTokenEndpoint(key, fields);
    const tokens = (await (await tokenRequest(t, fields, { dpop: await dpopProof(key, { htu: tokenUrl(), nowMs: t.clock.now(), nonce }) })).json()) as Tokens;
    const url = `${t.baseUrl}/api/oauth/userinfo`;
    const post = async (headers: Record<string, string>, body?: string) => fetch(url, {
      method: 'POST', body,
      headers: { ...headers, authorization: `DPoP ${tokens.access_token}`, dpop: await dpopProof(key, { htm: 'POST', htu: url, nowMs: t.clock.now(), accessToken: tokens.access_token, nonce }) },
    });
    const answer = await post({ 'content-type': 'application/json' }, '{}');
    assert.equal(answer.status, 400, await answer.clone().text());
    assert.equal(answer.headers.get('www-authenticate'), `DPoP realm="api", algs="${ALGS}", error="invalid_request", Bearer realm="api"`);
    const error = (await answer.json()) as Record<string, string>;
    assert.equal(error.error, 'invalid_request');
    assert.match(error.error_description!, /A POST to UserInfo carries no body or a form .*Authorization: DPoP <token>/);
    assert.equal((await post({})).status, 200, 'a POST with no body is served');
  });

  test('a bound refresh token needs a proof of the same key; refusals leave it usable, and its successors stay bound', async () => {
    const c = await newClient(t, { type: 'public' });
    const key = await dpopKey();
    const { tokens, nonce } = await dpopTokens(c, key);
    const fields = { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, ...clientFields(c) };
    const noProof = await tokenRequest(t, fields);
    assert.equal(noProof.status, 400);
    assert.match(((await noProof.json()) as { error_description: string }).error_description, /bound to a DPoP key/);
    const otherKey = await dpopKey();
    const wrongKey = await tokenRequest(t, fields, { dpop: await dpopProof(otherKey, { htu: tokenUrl(), nowMs: t.clock.now(), nonce }) });
    assert.equal(wrongKey.status, 400);
    assert.equal(((await wrongKey.json()) as { error: string }).error, 'invalid_grant');
    const refreshed = await tokenRequest(t, fields, { dpop: await dpopProof(key, { htu: tokenUrl(), nowMs: t.clock.now(), nonce }) });
    assert.equal(refreshed.status, 200, await refreshed.clone().text());
    const next = (await refreshed.json()) as Tokens;
    assert.equal(next.token_type, 'DPoP');
    assert.notEqual(next.refresh_token, tokens.refresh_token, 'rotation applies to bound tokens too (seed section 3 rule 3)');
    assert.deepEqual((await introspect(t, c, next.refresh_token)).cnf, { jkt: key.jkt });
  });

  test('a bound refresh token tells that its account is not active only to a proof of its key: without one, or with another key, it is told what an active account\'s is', async () => {
    const c = await newClient(t, { type: 'public' });
    const key = await dpopKey();
    const { tokens, nonce, user } = await dpopTokens(c, key);
    const refresh = { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, ...clientFields(c) };
    // One thief's proof, sent again and again: a proof claimed once would be refused the next time as used (attack99).
    const thiefProof = await dpopProof(await dpopKey(), { htu: tokenUrl(), nowMs: t.clock.now(), nonce });
    const keyless = async () => Promise.all([tokenRequest(t, refresh), tokenRequest(t, refresh, { dpop: thiefProof })].map(async (sent) => (await sent).json()));
    const whileActive = await keyless();
    await setAccountStatus(t.deps.stores, t.deps.clock, user.id, 'suspended');
    for (const attempt of ['first', 'second']) assert.deepEqual(await keyless(), whileActive, `${attempt}: one without the key learns nothing of the status`);
    const held = await tokenRequest(t, refresh, { dpop: await dpopProof(key, { htu: tokenUrl(), nowMs: t.clock.now(), nonce }) });
    assert.deepEqual(await held.json(), { error: 'invalid_grant', error_description: ACCOUNT_NOT_ACTIVE }, 'the key\'s holder is told');
  });

  test('at the token endpoint a proof of another key than the refresh token\'s or the code\'s dpop_jkt is refused before its jti is remembered (helper-96)', async () => {
    const key = await dpopKey();
    const thief = await dpopKey();
    const c = await newClient(t, { type: 'public' });
    const { tokens, nonce } = await dpopTokens(c, key);
    const { fields: codeFields } = await freshCode(t, {}, { extra: { dpop_jkt: key.jkt } });
    const doors = [
      { grant: 'refresh_token', fields: { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, ...clientFields(c) }, words: /another key than the one this refresh token is bound to/ },
      { grant: 'authorization_code', fields: codeFields, words: /another key than the dpop_jkt/ },
    ];
    for (const { grant, fields, words } of doors) {
      const proof = await dpopProof(thief, { htu: tokenUrl(), nowMs: t.clock.now(), nonce });
      // Sent twice: a proof remembered the first time would be refused the second as used already.
      for (const attempt of ['first', 'second']) {
        const response = await tokenRequest(t, fields, { dpop: proof });
        assert.equal(response.status, 400, `${grant}, ${attempt}`);
        const body = (await response.json()) as { error: string; error_description: string };
        assert.equal(body.error, 'invalid_grant', `${grant}, ${attempt}`);
        assert.match(body.error_description, words, `${grant}, ${attempt}`);
      }
      const rightful = await tokenRequest(t, fields, { dpop: await dpopProof(key, { htu: tokenUrl(), nowMs: t.clock.now(), nonce }) });
      assert.equal(rightful.status, 200, `${grant}: the refusals left it usable`);
    }
  });

  test('the replay window gives a bound token\'s successor again only to a proof of its key; a replay without one ends the family', async () => {
    const c = await newClient(t, { type: 'public' });
    const key = await dpopKey();
    const { tokens, nonce } = await dpopTokens(c, key);
    const fields = { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, ...clientFields(c) };
    const refresh = async () => tokenRequest(t, fields, { dpop: await dpopProof(key, { htu: tokenUrl(), nowMs: t.clock.now(), nonce }) });
    const first = (await (await refresh()).json()) as Tokens;
    const again = await refresh();
    assert.equal(again.status, 200, await again.clone().text());
    const replayed = (await again.json()) as Tokens;
    assert.equal(replayed.token_type, 'DPoP');
    assert.equal(replayed.refresh_token, first.refresh_token, 'the same successor, within the window');
    assert.equal((await tokenRequest(t, fields)).status, 400, 'the old token alone yields nothing');
    assert.equal((await introspect(t, c, first.refresh_token)).active, false, 'and its family ends (RFC 9700 4.14.2)');
  });

  test('dpop_jkt at the authorization request binds the code to that key (RFC 9449 10)', async () => {
    const key = await dpopKey();
    const other = await dpopKey();
    const { fields } = await freshCode(t, {}, { extra: { dpop_jkt: key.jkt } });
    const noProof = await tokenRequest(t, fields);
    assert.equal(noProof.status, 400);
    assert.match(((await noProof.json()) as { error_description: string }).error_description, /named a DPoP key \(dpop_jkt\)/);
    const nonce = await nonceFromTokenEndpoint(other, fields);
    const wrongKey = await tokenRequest(t, fields, { dpop: await dpopProof(other, { htu: tokenUrl(), nowMs: t.clock.now(), nonce }) });
    assert.equal(wrongKey.status, 400);
    assert.match(((await wrongKey.json()) as { error_description: string }).error_description, /another key than the dpop_jkt/);
    const redeemed = await tokenRequest(t, fields, { dpop: await dpopProof(key, { htu: tokenUrl(), nowMs: t.clock.now(), nonce }) });
    assert.equal(redeemed.status, 200, 'the refusals did not consume the code');
    assert.equal(((await redeemed.json()) as Tokens).token_type, 'DPoP');
  });

  test('a malformed dpop_jkt is invalid_request, redirected back', async () => {
    const c = await newClient(t);
    const { browser } = await signedInBrowser(t);
    const response = await browser.fetch(`/oauth/authorize?${new URLSearchParams({
      response_type: 'code', client_id: c.client.clientId, redirect_uri: c.redirectUri, scope: 'profile:read', state: 's', dpop_jkt: 'short',
    })}`);
    assert.equal(response.status, 302);
    const back = new URL(response.headers.get('location')!);
    assert.equal(back.searchParams.get('error'), 'invalid_request');
    assert.match(back.searchParams.get('error_description') ?? '', /dpop_jkt/);
  });

  test('every 401 of the API advertises DPoP and its algorithms beside Bearer; the metadata lists them', async () => {
    const none = await fetch(meUrl());
    assert.equal(none.headers.get('www-authenticate'), `Bearer realm="api", ${rm()}, DPoP realm="api", algs="${ALGS}", ${rm()}`);
    const metadata = (await (await fetch(`${t.baseUrl}/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
    assert.deepEqual(metadata.dpop_signing_alg_values_supported, [...DPOP_ALGS]);
  });

  test('a proof is accepted once across two instances on the same database' + (redisUrl ? ' and Redis' : ''), async () => {
    const cluster: Instances = await startInstances(database.url, 2, redisUrl ? { REDIS_URL: redisUrl } : {}, { clock: t.clock });
    try {
      const [a, b] = cluster.list as [Instances['list'][0], Instances['list'][0]];
      const { fields } = await freshCode(t);
      const key = await dpopKey();
      const post = (base: string, dpop: string) => fetch(`${base}/api/oauth/token`, {
        method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', dpop }, body: new URLSearchParams(fields).toString(),
      });
      const htu = `${cluster.issuer}/api/oauth/token`;
      // A nonce given by A is valid on B (stateless, one shared secret).
      const asked = await post(a.base, await dpopProof(key, { htu, nowMs: t.clock.now() }));
      assert.equal(asked.status, 400);
      const nonce = asked.headers.get('dpop-nonce')!;
      // The proof is spent on A, on a request that fails for another reason (no such code, say)…
      const proof = await dpopProof(key, { htu, nonce, nowMs: t.clock.now() });
      const spent = await fetch(`${a.base}/api/oauth/token`, {
        method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', dpop: proof },
        body: new URLSearchParams({ ...fields, code: 'x'.repeat(43) }).toString(),
      });
      assert.equal(((await spent.json()) as { error: string }).error, 'invalid_grant');
      // …and B refuses it.
      const replayed = await post(b.base, proof);
      assert.equal(replayed.status, 400);
      const body = (await replayed.json()) as { error: string; error_description: string };
      assert.equal(body.error, 'invalid_dpop_proof');
      assert.match(body.error_description, /used already/);
      assert.equal((await post(b.base, await dpopProof(key, { htu, nonce, nowMs: t.clock.now() }))).status, 200, 'a new proof with the nonce of A works on B');
    } finally {
      await cluster.close();
    }
  });
});
