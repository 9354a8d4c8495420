/**
 * Every status row of seed table 7.2, with a personal token and with an OAuth access token
 * (seed section 5, RFC 6750, INTERFACE section 6), and the record of each token's last use.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { setAccountStatus } from '../../src/core/accounts/accounts.js';
import { deactivateClient, registerClient } from '../../src/core/oauth/clients.js';
import { generateToken, hashSecret } from '../../src/core/credentials/formats.js';
import { MCP_PATH } from '../../src/core/api/resource.js';
import { BODY_LIMIT_BYTES } from '../../src/app.js';
import { AccountUnusableError } from '../../src/core/errors.js';
import type { User } from '../../src/core/accounts/ports.js';
import { type TestApp, startTestApp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';
import { rawRequest } from '../support/raw-request.js';
import { get, newAccessToken, newPersonalToken, newUser } from './fixtures.js';

const MINUTE = 60_000;

forEachDatabase('resource API authentication', (database) => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp(database);
  });
  after(() => t.close());

  async function expectInvalidToken(response: Response, what: string) {
    assert.equal(response.status, 401, what);
    assert.equal(response.headers.get('www-authenticate'), `Bearer realm="api", error="invalid_token", resource_metadata="${t.baseUrl}/.well-known/oauth-protected-resource/api/open/v1", DPoP realm="api", algs="ES256 EdDSA Ed25519 PS256 RS256", resource_metadata="${t.baseUrl}/.well-known/oauth-protected-resource/api/open/v1"`, what);
    assert.equal(response.headers.get('cache-control'), 'no-store');
    const body = await response.json() as Record<string, unknown>;
    assert.deepEqual(Object.keys(body).sort(), ['error', 'error_description'], what);
    assert.equal(body.error, 'invalid_token', what);
    assert.equal(response.headers.get('x-ratelimit-limit'), null, 'no rate-limit headers for an invalid token');
  }

  /** The two kinds of token, each with a way to end it. */
  const kinds = {
    personal: async (user: User, scopes: string[]) => {
      const { token, record } = await newPersonalToken(t.deps, user, scopes, 7);
      return { token, revoke: async () => { await t.deps.stores.personalTokens.revoke(record.id, user.id, t.clock.now()); } };
    },
    oauth: async (user: User, scopes: string[]) => {
      const issued = await newAccessToken(t.deps, user, scopes.join(' '));
      return { token: issued.token, issued, revoke: async () => { await t.deps.stores.grants.revoke(issued.grantId, 'consent_withdrawn', t.clock.now()); } };
    },
  };

  for (const [kind, make] of Object.entries(kinds)) {
    test(`200: a valid ${kind} token reads what its scopes allow`, async () => {
      const user = await newUser(t.deps);
      const { token } = await make(user, ['profile:read', 'posts:read']);
      for (const path of ['/api/open/v1/', '/api/open/v1/me', '/api/open/v1/me/posts']) {
        const response = await get(t.baseUrl, path, { token });
        assert.equal(response.status, 200, path);
        assert.equal(response.headers.get('x-ratelimit-limit'), '60');
      }
    });

    test(`401: an expired ${kind} token`, async () => {
      const user = await newUser(t.deps);
      const { token } = await make(user, ['profile:read']);
      t.clock.advance(kind === 'personal' ? 7 * 24 * 60 * MINUTE : 3600_000);
      await expectInvalidToken(await get(t.baseUrl, '/api/open/v1/me', { token }), `expired ${kind}`);
    });

    test(`401: a revoked ${kind} token`, async () => {
      const user = await newUser(t.deps);
      const { token, revoke } = await make(user, ['profile:read']);
      assert.equal((await get(t.baseUrl, '/api/open/v1/me', { token })).status, 200);
      await revoke();
      await expectInvalidToken(await get(t.baseUrl, '/api/open/v1/me', { token }), `revoked ${kind}`);
    });

    for (const status of ['suspended', 'banned', 'deleted'] as const) {
      test(`401: a ${kind} token of a ${status} account, from the next request on`, async () => {
        const user = await newUser(t.deps);
        const { token } = await make(user, ['profile:read']);
        assert.equal((await get(t.baseUrl, '/api/open/v1/', { token })).status, 200);
        await setAccountStatus(t.deps.stores, t.clock, user.id, status);
        await expectInvalidToken(await get(t.baseUrl, '/api/open/v1/', { token }), `${status} ${kind}`);
      });

      test(`401: a ${kind} token stays dead when a ${status} account is made active again (INTERFACE section 4)`, async () => {
        const user = await newUser(t.deps);
        const { token } = await make(user, ['profile:read']);
        await setAccountStatus(t.deps.stores, t.clock, user.id, status);
        await setAccountStatus(t.deps.stores, t.clock, user.id, 'active');
        await expectInvalidToken(await get(t.baseUrl, '/api/open/v1/', { token }), `${kind} token after ${status} and back`);
      });
    }

    test(`403: a ${kind} token without the endpoint's scope gets insufficient_scope naming it`, async () => {
      const user = await newUser(t.deps);
      const { token } = await make(user, ['profile:read']);
      const response = await get(t.baseUrl, '/api/open/v1/me/posts', { token });
      assert.equal(response.status, 403);
      assert.equal(response.headers.get('www-authenticate'), `Bearer realm="api", error="insufficient_scope", scope="posts:read", resource_metadata="${t.baseUrl}/.well-known/oauth-protected-resource/api/open/v1"`);
      assert.equal(response.headers.get('x-ratelimit-limit'), '60', 'a valid token gets the rate-limit headers');
      assert.equal((await response.json() as { error: string }).error, 'insufficient_scope');
      const other = await make(await newUser(t.deps), ['posts:read']);
      const profile = await get(t.baseUrl, '/api/open/v1/me', { token: other.token });
      assert.equal(profile.status, 403);
      assert.match(profile.headers.get('www-authenticate') ?? '', /scope="profile:read"/);
    });

    test(`429: the ${kind} token's 61st request in a minute, with Retry-After: 60`, async () => {
      const user = await newUser(t.deps);
      const { token } = await make(user, ['profile:read']);
      for (let i = 0; i < 60; i++) assert.equal((await get(t.baseUrl, '/api/open/v1/', { token })).status, 200);
      const refused = await get(t.baseUrl, '/api/open/v1/me', { token });
      assert.equal(refused.status, 429);
      assert.equal(refused.headers.get('retry-after'), '60');
      assert.equal(refused.headers.get('x-ratelimit-remaining'), '0');
      assert.equal((await refused.json() as { error: string }).error, 'rate_limited');
    });
  }

  for (const status of ['suspended', 'banned', 'deleted'] as const) {
    test(`a personal token is made only for an active account: none for a ${status} one, so none comes alive with it (INTERFACE section 4)`, async () => {
      const user = await newUser(t.deps);
      await setAccountStatus(t.deps.stores, t.clock, user.id, status);
      await assert.rejects(newPersonalToken(t.deps, user, ['profile:read']),
        (error: Error) => error instanceof AccountUnusableError && error.message === `account "${user.username}" is ${status}; only an active account can have a personal token`);
      await setAccountStatus(t.deps.stores, t.clock, user.id, 'active');
      assert.deepEqual(await t.deps.stores.personalTokens.listForUser(user.id), []);
      assert.ok(await newPersonalToken(t.deps, user, ['profile:read']), 'active again, it can have new ones');
    });

    test(`an app is registered only to an owner whose account is active: none to a ${status} one`, async () => {
      const owner = await newUser(t.deps);
      await setAccountStatus(t.deps.stores, t.clock, owner.id, status);
      const registration = { name: 'Owned app', type: 'confidential' as const, redirectUris: ['https://owned.example/cb'], ownerId: owner.id };
      await assert.rejects(registerClient(t.deps.stores, t.clock, registration),
        (error: Error) => error instanceof AccountUnusableError && /is .+; only an active account can own a new app/.test(error.message));
      assert.deepEqual(await t.deps.stores.clients.listByOwner(owner.id), []);
    });
  }

  test('making an account active again revives nothing: a token, a grant and a session that raced its leaving end then', async () => {
    const user = await newUser(t.deps);
    await setAccountStatus(t.deps.stores, t.clock, user.id, 'suspended');
    // What a creation that read the account as active just before it left `active` writes just
    // after its revocation: straight to the stores, past the core's check.
    const now = t.clock.now();
    const personal = generateToken('personal');
    await t.deps.stores.personalTokens.insert({ userId: user.id, name: 'raced', tokenHash: hashSecret(personal), scope: 'profile:read', expiresAt: null }, now);
    const oauth = await newAccessToken(t.deps, user, 'profile:read');
    const sessionId = hashSecret(generateToken('personal'));
    await t.deps.stores.sessions.create({ idHash: sessionId, userId: user.id, authTime: now, expiresAt: now + 3600_000 }, now);
    await setAccountStatus(t.deps.stores, t.clock, user.id, 'active');
    await expectInvalidToken(await get(t.baseUrl, '/api/open/v1/', { token: personal }), 'the raced personal token');
    await expectInvalidToken(await get(t.baseUrl, '/api/open/v1/', { token: oauth.token }), 'the raced access token');
    assert.notEqual((await t.deps.stores.grants.findById(oauth.grantId))?.revokedAt, null);
    assert.equal(await t.deps.stores.sessions.findLive(sessionId, t.clock.now()), undefined);
    // Active to active is no change: what the account holds stays.
    const { token } = await newPersonalToken(t.deps, user, ['profile:read']);
    await setAccountStatus(t.deps.stores, t.clock, user.id, 'active');
    assert.equal((await get(t.baseUrl, '/api/open/v1/', { token })).status, 200);
  });

  test('401 without an error attribute when no credentials are sent at all (RFC 6750 3.1)', async () => {
    for (const path of ['/api/open/v1/', '/api/open/v1/me', '/api/open/v1/me/posts']) {
      const response = await get(t.baseUrl, path);
      assert.equal(response.status, 401);
      assert.equal(response.headers.get('www-authenticate'), `Bearer realm="api", resource_metadata="${t.baseUrl}/.well-known/oauth-protected-resource/api/open/v1", DPoP realm="api", algs="ES256 EdDSA Ed25519 PS256 RS256", resource_metadata="${t.baseUrl}/.well-known/oauth-protected-resource/api/open/v1"`);
      assert.equal((await response.json() as { error: string }).error, 'invalid_token');
    }
  });

  test('401 invalid_token for malformed credentials, bad checksums, and tokens of another kind', async () => {
    const valid = generateToken('personal');
    const badChecksum = valid.slice(0, -1) + (valid.endsWith('0') ? '1' : '0');
    const headers = [
      'Bearer', 'Bearer ', 'Bearer not-a-token', `Basic ${Buffer.from('a:b').toString('base64')}`, `Bearer ${badChecksum}`,
      `Bearer ${generateToken('refresh')}`, `Bearer ${generateToken('clientSecret')}`, `Token ${valid}`, `Bearer ${valid} extra`,
    ];
    for (const header of headers) await expectInvalidToken(await get(t.baseUrl, '/api/open/v1/', { header }), header);
  });

  test('400 invalid_request for two Authorization headers, even if one holds a valid token (RFC 6750 3.1)', async () => {
    const user = await newUser(t.deps);
    const { token } = await newPersonalToken(t.deps, user, ['profile:read'], 7);
    for (const fields of [[`Bearer ${token}`, 'Bearer svcp_other'], [`Bearer ${token}`, `Bearer ${token}`]]) {
      const answer = await rawRequest('GET', `${t.baseUrl}/api/open/v1/me`, fields.flatMap((value) => ['Authorization', value]));
      assert.equal(answer.status, 400);
      assert.match(String(answer.headers['www-authenticate']), /^Bearer realm="api", error="invalid_request"/);
      assert.equal(answer.headers['cache-control'], 'no-store');
      const body = JSON.parse(answer.body) as Record<string, unknown>;
      assert.deepEqual(Object.keys(body).sort(), ['error', 'error_description']);
      assert.equal(body.error, 'invalid_request');
    }
    const one = await rawRequest('GET', `${t.baseUrl}/api/open/v1/me`, ['Authorization', `Bearer ${token}`]);
    assert.equal(one.status, 200, 'one header is read as ever');
  });

  test('400 invalid_request for a token in the Authorization header and access_token in the query string, even a valid one: one method a request (RFC 6750 2, 3.1)', async () => {
    const user = await newUser(t.deps);
    const { token } = await newAccessToken(t.deps, user, 'openid profile:read');
    const personal = (await newPersonalToken(t.deps, user, ['profile:read'], 7)).token;
    const json = ['Content-Type', 'application/json', 'Accept', 'application/json, text/event-stream'];
    const cases: Array<[string, string, string, string[], string?]> = [
      ['GET', `/api/open/v1/me?access_token=${token}`, token, []],
      ['GET', '/api/open/v1/me?page=0&access_token=svcp_x', personal, []],
      ['GET', '/api/open/v1/me?access%5Ftoken=svcp_x', personal, []],
      ['GET', '/api/open/v1/me?access_token', personal, []],
      ['HEAD', '/api/open/v1/me?access_token=svcp_x', personal, []],
      ['GET', '/api/open/v1/nope?access_token=svcp_x', personal, []],
      ['POST', `${MCP_PATH}?access_token=svco_x`, token, json, '{"jsonrpc":"2.0","id":1,"method":"ping"}'],
      ['GET', `/api/oauth/userinfo?access_token=${token}`, token, []],
      ['POST', '/api/oauth/userinfo?access_token=svco_x', token, ['Content-Type', 'application/x-www-form-urlencoded'], 'a=b'],
    ];
    for (const [method, path, bearer, fields, body] of cases) {
      const asked = `${method} ${path}`;
      const answer = await rawRequest(method, `${t.baseUrl}${path}`, ['Authorization', `Bearer ${bearer}`, ...fields], body);
      assert.equal(answer.status, 400, asked);
      assert.match(String(answer.headers['www-authenticate']), /^Bearer realm="api", error="invalid_request"/, asked);
      assert.equal(answer.headers['cache-control'], 'no-store', asked);
      assert.ok(answer.headers['x-ratelimit-remaining'], `${asked}: the valid token is counted, with its rate-limit fields`);
      if (method === 'HEAD') continue;
      const error = JSON.parse(answer.body) as Record<string, string>;
      assert.deepEqual(Object.keys(error).sort(), ['error', 'error_description'], asked);
      assert.equal(error.error, 'invalid_request', asked);
      assert.match(error.error_description!, /Authorization header and access_token in the query string/, asked);
    }
    // A query without access_token is read as ever, and so is one parameter whose name only begins so.
    for (const path of ['/api/open/v1/me', '/api/open/v1/me?', '/api/open/v1/me?page=0', '/api/open/v1/me?access_tokens=x']) {
      assert.equal((await get(t.baseUrl, path, { token: personal })).status, 200, path);
    }
    // A token refused for itself is told so first: the header is judged before the query.
    await expectInvalidToken(await get(t.baseUrl, '/api/open/v1/me?access_token=svcp_x', { token: generateToken('personal') }), 'an unknown token');
  });

  test('400 invalid_request for a token in the Authorization header and access_token in a form POSTed to MCP, which takes no form: one method a request (RFC 6750 2, 3.1); a GET\'s body is never read (RFC 9110 9.3.1)', async () => {
    const user = await newUser(t.deps);
    const { token } = await newAccessToken(t.deps, user, 'profile:read');
    const metadata = `${t.baseUrl}/.well-known/oauth-protected-resource/api/open/v1/mcp`;
    const accept = ['Accept', 'application/json, text/event-stream'];
    for (const [contentType, body] of [['application/x-www-form-urlencoded', `access_token=${token}`], ['Application/X-WWW-Form-Urlencoded; charset=utf-8', 'a=b&access%5Ftoken=svco_x'], ['application/x-www-form-urlencoded', 'access_token']] as const) {
      const asked = `${contentType} ${body}`;
      const answer = await rawRequest('POST', `${t.baseUrl}${MCP_PATH}`, ['Authorization', `Bearer ${token}`, 'Content-Type', contentType, ...accept], body);
      assert.equal(answer.status, 400, asked);
      assert.match(String(answer.headers['www-authenticate']), new RegExp(`^Bearer realm="api", error="invalid_request", resource_metadata="${metadata}"`), asked);
      assert.equal(answer.headers['cache-control'], 'no-store', asked);
      assert.ok(answer.headers['x-ratelimit-remaining'], `${asked}: the valid token is counted, with its rate-limit fields`);
      const error = JSON.parse(answer.body) as Record<string, string>;
      assert.deepEqual(Object.keys(error).sort(), ['error', 'error_description'], asked);
      assert.equal(error.error, 'invalid_request', asked);
      assert.match(error.error_description!, /Authorization header and access_token in the form body/, asked);
    }
    // A form without it is still no type MCP takes; a refused token is told so first.
    const other = await rawRequest('POST', `${t.baseUrl}${MCP_PATH}`, ['Authorization', `Bearer ${token}`, 'Content-Type', 'application/x-www-form-urlencoded', ...accept], 'a=b');
    assert.equal(other.status, 415);
    assert.equal((JSON.parse(other.body) as { error: string }).error, 'invalid_request');
    const unknown = await rawRequest('POST', `${t.baseUrl}${MCP_PATH}`, ['Authorization', `Bearer ${generateToken('access')}`, 'Content-Type', 'application/x-www-form-urlencoded', ...accept], `access_token=${token}`);
    assert.equal(unknown.status, 401);
    // A GET's body has no meaning (and RFC 6750 2.2 excludes GET): /me answers whatever it holds.
    const me = await rawRequest('GET', `${t.baseUrl}/api/open/v1/me`, ['Authorization', `Bearer ${token}`, 'Content-Type', 'application/x-www-form-urlencoded'], `access_token=${token}`);
    assert.equal(me.status, 200);
  });

  test('without the Authorization header, access_token in the query string in any spelling it is read as (access%5Ftoken, no value, repeated) is told a token there is not accepted, never that none was sent (RFC 6750 2.3, 3.1)', async () => {
    for (const path of ['/api/open/v1/me?access_token=svcp_x', '/api/open/v1/me?access%5Ftoken=svcp_x', '/api/open/v1/me?access_tok%65n=svcp_x', '/api/open/v1/me?page=0&access_token', '/api/open/v1/me?access_token&access_token=svcp_x', '/api/oauth/userinfo?access%5Ftoken=svco_x']) {
      const answer = await rawRequest('GET', `${t.baseUrl}${path}`, []);
      assert.equal(answer.status, 401, path);
      assert.match(String(answer.headers['www-authenticate']), /^Bearer realm="api"/, path);
      const error = JSON.parse(answer.body) as Record<string, string>;
      assert.equal(error.error, 'invalid_token', path);
      assert.match(error.error_description!, /^Tokens in the query string or a form body are not accepted/, path);
    }
    // A name that only looks like it is not the parameter: no token was sent.
    for (const path of ['/api/open/v1/me?ACCESS_TOKEN=svcp_x', '/api/open/v1/me?access_token[]=svcp_x', '/api/open/v1/me?access+token=svcp_x', '/api/open/v1/me?a=1;access_token=svcp_x']) {
      const error = JSON.parse((await rawRequest('GET', `${t.baseUrl}${path}`, [])).body) as Record<string, string>;
      assert.match(error.error_description!, /^This endpoint needs an access token/, path);
    }
  });

  test('malformed tokens and bad checksums are refused without a storage lookup', async () => {
    const { tokens, personalTokens } = t.deps.stores;
    const originals = { access: tokens.findAccessBearer, personal: personalTokens.findBearer };
    let lookups = 0;
    tokens.findAccessBearer = async (hash) => { lookups++; return originals.access.call(tokens, hash); };
    personalTokens.findBearer = async (hash) => { lookups++; return originals.personal.call(personalTokens, hash); };
    try {
      for (const kind of ['access', 'personal'] as const) {
        const valid = generateToken(kind);
        const badChecksum = valid.slice(0, -1) + (valid.endsWith('0') ? '1' : '0');
        await expectInvalidToken(await get(t.baseUrl, '/api/open/v1/', { token: badChecksum }), badChecksum);
        await expectInvalidToken(await get(t.baseUrl, '/api/open/v1/', { token: `${valid}x` }), 'too long');
      }
      assert.equal(lookups, 0);
      await expectInvalidToken(await get(t.baseUrl, '/api/open/v1/', { token: generateToken('access') }), 'well-formed');
      assert.equal(lookups, 1, 'a well-formed token costs one lookup');
    } finally {
      tokens.findAccessBearer = originals.access;
      personalTokens.findBearer = originals.personal;
    }
  });

  test('401 invalid_token for a well-formed token that was never issued', async () => {
    for (const kind of ['access', 'personal'] as const) {
      await expectInvalidToken(await get(t.baseUrl, '/api/open/v1/', { token: generateToken(kind) }), kind);
    }
  });

  test('the Bearer scheme is matched in any letter case', async () => {
    const user = await newUser(t.deps);
    const { token } = await newPersonalToken(t.deps, user, ['profile:read']);
    assert.equal((await get(t.baseUrl, '/api/open/v1/me', { header: `bearer ${token}` })).status, 200);
  });

  test('401: an OAuth token of a deactivated client', async () => {
    const user = await newUser(t.deps);
    const { token, client } = await newAccessToken(t.deps, user, 'profile:read');
    assert.equal((await get(t.baseUrl, '/api/open/v1/me', { token })).status, 200);
    await deactivateClient(t.deps.stores, t.clock, client.clientId);
    await expectInvalidToken(await get(t.baseUrl, '/api/open/v1/me', { token }), 'deactivated client');
  });

  test('401: an OAuth token revoked by itself, its grant still live', async () => {
    const user = await newUser(t.deps);
    const { token, client } = await newAccessToken(t.deps, user, 'profile:read');
    assert.equal((await get(t.baseUrl, '/api/open/v1/me', { token })).status, 200);
    await t.deps.stores.tokens.revokeAccess(hashSecret(token), client.clientId, t.clock.now());
    await expectInvalidToken(await get(t.baseUrl, '/api/open/v1/me', { token }), 'revoked access token');
  });

  test('an access token is valid until the last millisecond of its lifetime', async () => {
    const user = await newUser(t.deps);
    const { token } = await newAccessToken(t.deps, user, 'profile:read');
    t.clock.advance(3600_000 - 1);
    assert.equal((await get(t.baseUrl, '/api/open/v1/me', { token })).status, 200);
    t.clock.advance(1);
    await expectInvalidToken(await get(t.baseUrl, '/api/open/v1/me', { token }), 'at expiry');
  });

  test('a personal token\'s last use is recorded, at most once a minute', async () => {
    const user = await newUser(t.deps);
    const { token, record } = await newPersonalToken(t.deps, user, ['profile:read']);
    const lastUsed = async () => (await t.deps.stores.personalTokens.listForUser(user.id)).find((p) => p.id === record.id)?.lastUsedAt;
    assert.equal(await lastUsed(), null);
    const first = t.clock.now();
    await get(t.baseUrl, '/api/open/v1/me', { token });
    assert.equal(await lastUsed(), first);
    t.clock.advance(30_000);
    await get(t.baseUrl, '/api/open/v1/me', { token });
    assert.equal(await lastUsed(), first, 'not written again within the minute');
    t.clock.advance(31_000);
    await get(t.baseUrl, '/api/open/v1/me', { token });
    assert.equal(await lastUsed(), t.clock.now());
  });

  /** A new user's access token for `scope`, made 5 minutes ago, and its grant's last use. */
  async function tokenMadeEarlier(scope = 'openid profile:read') {
    const user = await newUser(t.deps);
    const created = t.clock.now();
    const { token, grantId } = await newAccessToken(t.deps, user, scope);
    t.clock.advance(5 * MINUTE);
    return { token, created, header: ['Authorization', `Bearer ${token}`], lastUsed: async () => (await t.deps.stores.grants.findById(grantId))?.lastUsedAt };
  }

  test('a request refused for carrying its token two ways is no use of it: its last use is not recorded (RFC 6750 2)', async () => {
    const { token, created, header, lastUsed } = await tokenMadeEarlier();
    const form = ['Content-Type', 'application/x-www-form-urlencoded'];
    const cases: Array<[string, string, string[], string?]> = [
      ['POST', '/api/oauth/userinfo', form, `access_token=${token}`],
      ['POST', MCP_PATH, [...form, 'Accept', 'application/json, text/event-stream'], `access_token=${token}`],
      ['GET', `/api/open/v1/me?access_token=${token}`, []],
    ];
    for (const [method, path, fields, body] of cases) {
      const answer = await rawRequest(method, `${t.baseUrl}${path}`, [...header, ...fields], body);
      assert.equal(answer.status, 400, `${method} ${path}`);
      assert.equal(await lastUsed(), created, `${method} ${path}: not recorded as a use`);
    }
    const served = await rawRequest('POST', `${t.baseUrl}/api/oauth/userinfo`, [...header, ...form], 'a=b');
    assert.equal(served.status, 200);
    assert.equal(await lastUsed(), t.clock.now(), 'a form without access_token is a use, recorded');
  });

  test('a request refused for a scope its token lacks is no use of it, the gate\'s 403 at an API address or MCP\'s for a tool: its last use is not recorded', async () => {
    const { created, header, lastUsed } = await tokenMadeEarlier();
    const mcpCall = (tool: string) => rawRequest('POST', `${t.baseUrl}${MCP_PATH}`, [...header, 'Content-Type', 'application/json', 'Accept', 'application/json, text/event-stream'],
      JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: tool, arguments: {} } }));
    assert.equal((await rawRequest('GET', `${t.baseUrl}/api/open/v1/me/posts`, header)).status, 403);
    assert.equal(await lastUsed(), created, 'the API\'s 403: not recorded as a use');
    assert.equal((await mcpCall('list_posts')).status, 403);
    assert.equal(await lastUsed(), created, 'MCP\'s 403 for the tool: not recorded as a use');
    assert.equal((await mcpCall('get_profile')).status, 200);
    assert.equal(await lastUsed(), t.clock.now(), 'a tool the token has the scope of is a use, recorded');
  });

  test('a use of a token is an admitted request answered with success (2xx): every other answer once admitted, the route\'s refusals and the not-found answers, records none, at the API, MCP and UserInfo alike', async () => {
    const { created, header, lastUsed } = await tokenMadeEarlier('openid profile:read posts:read');
    const json = ['Content-Type', 'application/json'];
    const accept = ['Accept', 'application/json, text/event-stream'];
    const ping = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' });
    const cases: Array<[number, string, string, string[], string?]> = [
      [400, 'GET', '/api/open/v1/me/posts?page=x', []],
      [404, 'GET', '/api/open/v1/nothing-here', []],
      [405, 'POST', '/api/open/v1/me', json, '{}'],
      [400, 'POST', MCP_PATH, [...json, ...accept], '{"not json'],
      [400, 'POST', MCP_PATH, [...json, ...accept], '{"jsonrpc":"2.0"}'],
      [400, 'POST', MCP_PATH, [...json, ...accept, 'MCP-Protocol-Version', '1999-01-01'], ping],
      [406, 'POST', MCP_PATH, json, ping],
      [415, 'POST', MCP_PATH, ['Content-Type', 'text/plain', ...accept], ping],
      [415, 'POST', MCP_PATH, accept],
      [405, 'GET', MCP_PATH, accept],
      [400, 'POST', '/api/oauth/userinfo', json, '{}'],
      [405, 'PUT', '/api/oauth/userinfo', []],
    ];
    for (const [status, method, path, fields, body] of cases) {
      const asked = `${method} ${path} ${fields.join(' ')} ${body ?? ''}`;
      assert.equal((await rawRequest(method, `${t.baseUrl}${path}`, [...header, ...fields], body)).status, status, asked);
      assert.equal(await lastUsed(), created, `${asked}: not recorded as a use`);
    }
    const successes: Array<[string, string, string[], string?]> = [
      ['GET', '/api/open/v1/me', []],
      ['POST', MCP_PATH, [...json, ...accept], ping],
      ['GET', '/api/oauth/userinfo', []],
      ['POST', '/api/oauth/userinfo', []],
    ];
    for (const [method, path, fields, body] of successes) {
      t.clock.advance(MINUTE);
      assert.equal((await rawRequest(method, `${t.baseUrl}${path}`, [...header, ...fields], body)).status, 200, `${method} ${path}`);
      assert.equal(await lastUsed(), t.clock.now(), `${method} ${path}: a success, recorded as a use`);
    }
  });

  test('a token\'s uses are remembered once for the service: used at the API, MCP and UserInfo within a minute, its last use is written once', async () => {
    const { header, lastUsed } = await tokenMadeEarlier();
    const ping = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' });
    assert.equal((await rawRequest('GET', `${t.baseUrl}/api/open/v1/me`, header)).status, 200);
    const first = t.clock.now();
    assert.equal(await lastUsed(), first);
    t.clock.advance(20_000);
    assert.equal((await rawRequest('POST', `${t.baseUrl}${MCP_PATH}`, [...header, 'Content-Type', 'application/json', 'Accept', 'application/json, text/event-stream'], ping)).status, 200);
    assert.equal(await lastUsed(), first, 'MCP within the minute: not written again');
    t.clock.advance(20_000);
    assert.equal((await rawRequest('GET', `${t.baseUrl}/api/oauth/userinfo`, header)).status, 200);
    assert.equal(await lastUsed(), first, 'UserInfo within the minute: not written again');
  });

  test('an MCP refusal answered 200 is no use of the token, as the API\'s 400 for the same paging is none: a tool\'s isError result, a JSON-RPC error (an unknown tool or method, params of the wrong shape)', async () => {
    const { created, header, lastUsed } = await tokenMadeEarlier('openid profile:read posts:read');
    const mcp = (message: object) => rawRequest('POST', `${t.baseUrl}${MCP_PATH}`, [...header, 'Content-Type', 'application/json', 'Accept', 'application/json, text/event-stream'], JSON.stringify({ jsonrpc: '2.0', id: 1, ...message }));
    assert.equal((await rawRequest('GET', `${t.baseUrl}/api/open/v1/me/posts?page=-1`, header)).status, 400);
    assert.equal(await lastUsed(), created, 'the API\'s 400: not recorded as a use');
    const refusals: Array<[object, RegExp]> = [
      [{ method: 'tools/call', params: { name: 'list_posts', arguments: { page: -1 } } }, /"isError":true/],
      [{ method: 'tools/call', params: { name: 'no_such_tool' } }, /"code":-32602/],
      [{ method: 'no/such/method' }, /"code":-32601/],
      [{ method: 'tools/call', params: 'x' }, /"code":-32602/],
    ];
    for (const [message, refusal] of refusals) {
      // A minute on, so each use would be written (`UsageRecorder`), not one hidden by another.
      t.clock.advance(MINUTE);
      const answer = await mcp(message);
      assert.equal(answer.status, 200, JSON.stringify(message));
      assert.match(answer.body, refusal, JSON.stringify(message));
      assert.equal(await lastUsed(), created, `${JSON.stringify(message)}: not recorded as a use`);
    }
    assert.equal((await mcp({ method: 'tools/call', params: { name: 'list_posts', arguments: {} } })).status, 200);
    assert.equal(await lastUsed(), t.clock.now(), 'a tool\'s result is a use, recorded');
  });

  test('a body refused as too large (413) is no use of the token, a form and JSON alike', async () => {
    const { created, header, lastUsed } = await tokenMadeEarlier();
    const accept = ['Accept', 'application/json, text/event-stream'];
    const large = 'a='.padEnd(BODY_LIMIT_BYTES + 1, 'x');
    const cases: Array<[string, string[], string]> = [
      [MCP_PATH, ['Content-Type', 'application/json', ...accept], JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping', params: { _meta: { pad: large } } })],
      [MCP_PATH, ['Content-Type', 'application/x-www-form-urlencoded', ...accept], large],
      ['/api/oauth/userinfo', ['Content-Type', 'application/x-www-form-urlencoded'], large],
    ];
    for (const [path, fields, body] of cases) {
      const asked = `POST ${path} ${fields[1]}`;
      assert.equal((await rawRequest('POST', `${t.baseUrl}${path}`, [...header, ...fields], body)).status, 413, asked);
      assert.equal(await lastUsed(), created, `${asked}: not recorded as a use`);
    }
  });

  test('an authorized app\'s last use is recorded on its grant', async () => {
    const user = await newUser(t.deps);
    const created = t.clock.now();
    const { token, grantId } = await newAccessToken(t.deps, user, 'profile:read');
    t.clock.advance(5 * MINUTE);
    await get(t.baseUrl, '/api/open/v1/me', { token });
    const grant = await t.deps.stores.grants.findById(grantId);
    assert.equal(grant?.lastUsedAt, created + 5 * MINUTE);
  });
});
