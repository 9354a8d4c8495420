/**
 * Hostile input (fast-check) at the bearer endpoints and the public metadata: the resource API
 * (`/api/open/v1/*`) and its MCP server (random JSON-RPC), UserInfo, discovery and JWKS. Random and repeated query strings, random
 * headers, and every kind of wrong token in `Authorization` (garbage, bad checksums, refresh and
 * personal tokens, a revoked token, an id_token, a JWT with `alg: none`). Each gets 200 or a
 * well-formed error — never a 5xx — and nothing stored changes.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import fc from 'fast-check';
import { generateToken } from '../../src/core/credentials/formats.js';
import { createPersonalToken } from '../../src/core/credentials/personal-tokens.js';
import { type Tokens, clientFields, newClient, obtainTokens, signedInBrowser, startOAuthApp } from '../oauth/helpers.js';
import type { TestApp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';
import { unsignedJwt } from '../support/jwt.js';
import { snapshotTables } from '../support/snapshot.js';

/** Columns a valid read is allowed to touch ("last used"). */
const VOLATILE = ['last_used_at', 'last_seen_at'];
const BEARER_PATHS = ['/api/open/v1/', '/api/open/v1/me', '/api/open/v1/me/posts', '/api/oauth/userinfo', '/api/open/v1', '/api/open/v1/me/', '/api/open/v1/me/posts/1', '/api/open/v2/me'];
const API_ERRORS = new Set(['invalid_token', 'insufficient_scope', 'invalid_request', 'not_found', 'rate_limited']);

/** Values fetch will send in a header: visible ASCII words separated by single spaces (undici refuses the rest). */
const headerValue = fc.array(fc.string({ minLength: 1, maxLength: 20, unit: fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c)) }), { maxLength: 3 })
  .map((words) => words.join(' '));

forEachDatabase('hostile input at the bearer endpoints', (database) => {
  let t: TestApp;
  let tokens: Record<string, string>;

  before(async () => {
    t = await startOAuthApp(database);
    const c = await newClient(t);
    const { browser, user } = await signedInBrowser(t);
    const full: Tokens & { id_token?: string } = await obtainTokens(t, browser, c, { scope: 'openid profile:read posts:read', extra: { nonce: 'n-1' } });
    const narrow = await obtainTokens(t, browser, c, { scope: 'posts:read' });
    const revoked = await obtainTokens(t, browser, c, { scope: 'profile:read' });
    const revoke = await fetch(`${t.baseUrl}/api/oauth/revoke`, {
      method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: revoked.refresh_token, ...clientFields(c) }),
    });
    assert.equal(revoke.status, 200);
    const personal = await createPersonalToken(t.deps.stores, t.deps.clock, t.deps.tokenMarks, { userId: user.id, name: 'fuzz', scopes: ['profile:read'], expiresInDays: 7 });
    assert.ok(full.id_token, 'an id_token to present as a bearer token');
    const now = Math.floor(t.deps.clock.now() / 1000);
    tokens = {
      valid: full.access_token,
      narrow: narrow.access_token,
      revoked: revoked.access_token,
      refresh: full.refresh_token,
      personal: personal.token,
      idToken: full.id_token!,
      algNone: unsignedJwt({ iss: t.baseUrl, sub: String(user.id), aud: c.client.clientId, exp: now + 3600, iat: now, scope: 'openid profile:read posts:read' }),
      badChecksum: `${full.access_token.slice(0, -1)}${full.access_token.endsWith('0') ? '1' : '0'}`,
      unknown: generateToken('access'),
      secretShaped: generateToken('clientSecret'),
    };
  });
  after(() => t.close());

  const authorization = () => fc.oneof(
    fc.constant(undefined),
    fc.constantFrom(...Object.values(tokens)).map((token) => `Bearer ${token}`),
    fc.constantFrom(...Object.values(tokens)).map((token) => `bearer   ${token}`),
    fc.constantFrom(...Object.values(tokens)).map((token) => `Basic ${token}`),
    fc.constantFrom(...Object.values(tokens)).map((token) => `Bearer ${token} ${token}`),
    headerValue.map((v) => `Bearer ${v}`),
    headerValue,
    fc.constant('Bearer'),
    fc.constant('Bearer '),
  );

  const query = fc.array(fc.tuple(
    fc.oneof(fc.constantFrom('page', 'size', 'access_token', 'scope', 'callback', '__proto__', 'constructor'), fc.string({ maxLength: 8 })),
    fc.oneof(
      fc.integer({ min: -5, max: 100 }).map(String),
      fc.constantFrom('', '0', '1e3', '0x10', '1.5', ' 1', 'NaN', 'Infinity', '99999999999999999999999', '-0', '%00', '\u0000', '٣'),
      fc.string({ maxLength: 30 }),
      fc.string({ unit: 'grapheme', maxLength: 10 }),
    ),
  ), { maxLength: 6 });

  const extraHeaders = fc.dictionary(
    fc.oneof(fc.constantFrom('accept', 'accept-language', 'origin', 'cookie', 'x-forwarded-for', 'x-forwarded-host', 'if-none-match', 'range'), fc.stringMatching(/^x-[a-z0-9-]{1,12}$/)),
    headerValue, { maxKeys: 4 },
  );

  test('the resource API and UserInfo answer random tokens, headers and query strings with 200 or a well-formed error, never a 5xx, and change nothing', async () => {
    const before = await snapshotTables(t.deps.database.db, VOLATILE);
    await fc.assert(fc.asyncProperty(fc.constantFrom(...BEARER_PATHS), query, authorization(), extraHeaders, fc.constantFrom('GET', 'HEAD', 'POST', 'OPTIONS', 'DELETE'),
      async (path, params, auth, headers, method) => {
        const all: Record<string, string> = { ...headers };
        if (auth !== undefined) all.authorization = auth;
        const response = await fetch(`${t.baseUrl}${path}?${new URLSearchParams(params)}`, { method, headers: all, redirect: 'manual' });
        const text = await response.text();
        assert.ok(response.status < 500, `${method} ${path} answered ${response.status}: ${text}`);
        if (response.status < 300 || method === 'HEAD') return;
        const body = JSON.parse(text) as Record<string, unknown>;
        assert.deepEqual(Object.keys(body).sort(), ['error', 'error_description'], text);
        assert.ok(API_ERRORS.has(body.error as string), text);
        if (response.status === 401) {
          assert.match(response.headers.get('www-authenticate') ?? '', /^Bearer realm=/);
          assert.equal(body.error, 'invalid_token');
        }
      }), { numRuns: 300 });
    assert.equal(await snapshotTables(t.deps.database.db, VOLATILE), before);
  });

  for (const kind of ['algNone', 'idToken', 'refresh', 'revoked', 'badChecksum', 'unknown', 'secretShaped'] as const) {
    test(`a ${kind} token presented as a bearer token is 401 invalid_token at every resource and UserInfo`, async () => {
      for (const path of ['/api/open/v1/', '/api/open/v1/me', '/api/open/v1/me/posts', '/api/oauth/userinfo']) {
        const response = await fetch(`${t.baseUrl}${path}`, { headers: { authorization: `Bearer ${tokens[kind]}` } });
        assert.equal(response.status, 401, `${path}`);
        assert.equal((await response.json()).error, 'invalid_token');
        assert.match(response.headers.get('www-authenticate')!, /error="invalid_token"/);
      }
    });
  }

  test('the MCP server answers random JSON-RPC messages, bodies, headers and tokens with 2xx or a well-formed error, never a 5xx, and changes nothing', async () => {
    const tool = fc.constantFrom('get_profile', 'list_posts', 'delete_posts', '__proto__', 'constructor', 'hasOwnProperty', '');
    const params = fc.oneof(
      fc.jsonValue({ maxDepth: 2 }),
      fc.record({ name: fc.oneof(tool, fc.jsonValue({ maxDepth: 1 })), arguments: fc.oneof(fc.dictionary(fc.constantFrom('page', 'size', '__proto__', 'x'), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 3 }), fc.jsonValue({ maxDepth: 1 })) }, { requiredKeys: [] }),
      fc.record({ protocolVersion: fc.oneof(fc.constantFrom('2025-11-25', '2025-06-18', '2024-11-05'), fc.string({ maxLength: 12 })), capabilities: fc.jsonValue({ maxDepth: 1 }), clientInfo: fc.jsonValue({ maxDepth: 1 }) }, { requiredKeys: [] }),
    );
    const message = fc.record({
      jsonrpc: fc.constantFrom('2.0', '1.0'),
      id: fc.oneof(fc.integer(), fc.string({ maxLength: 8 }), fc.constant(null)),
      method: fc.oneof(fc.constantFrom('initialize', 'tools/list', 'tools/call', 'ping', 'resources/list', 'notifications/initialized', 'logging/setLevel', '__proto__'), fc.string({ maxLength: 12 })),
      params,
    }, { requiredKeys: [] });
    const body = fc.oneof(
      message.map((m) => JSON.stringify(m)),
      fc.array(message, { maxLength: 3 }).map((m) => JSON.stringify(m)),
      fc.jsonValue({ maxDepth: 2 }).map((v) => JSON.stringify(v)),
      fc.string({ maxLength: 40 }),
    );
    const mcpHeaders = fc.record({
      accept: fc.oneof(fc.constantFrom('application/json, text/event-stream', 'application/json', 'text/event-stream', '*/*'), headerValue),
      'content-type': fc.oneof(fc.constantFrom('application/json', 'application/json; charset=utf-8', 'text/plain', 'application/x-www-form-urlencoded'), headerValue),
      'mcp-protocol-version': fc.oneof(fc.constantFrom('2025-11-25', '2025-06-18', '2025-03-26'), headerValue),
      'mcp-session-id': headerValue,
    }, { requiredKeys: [] });
    const before = await snapshotTables(t.deps.database.db, VOLATILE);
    await fc.assert(fc.asyncProperty(body, mcpHeaders, authorization(), fc.constantFrom('POST', 'POST', 'POST', 'GET', 'DELETE', 'PUT'),
      async (payload, headers, auth, method) => {
        const all: Record<string, string> = { ...headers };
        if (auth !== undefined) all.authorization = auth;
        const response = await fetch(`${t.baseUrl}/api/open/v1/mcp`, { method, headers: all, ...(method === 'GET' ? {} : { body: payload }), redirect: 'manual' });
        const text = await response.text();
        assert.ok(response.status < 500, `${method} ${payload} answered ${response.status}: ${text}`);
        if (text === '') return;
        const answer = JSON.parse(text) as Record<string, unknown>;
        if ('jsonrpc' in answer) {
          if (response.status >= 400) assert.equal(typeof (answer.error as { code?: unknown }).code, 'number', text);
          return;
        }
        if (response.status >= 300) {
          assert.deepEqual(Object.keys(answer).sort(), ['error', 'error_description'], text);
          assert.ok(API_ERRORS.has(answer.error as string), text);
        }
      }), { numRuns: 300 });
    assert.equal(await snapshotTables(t.deps.database.db, VOLATILE), before);
  });

  test('discovery and JWKS answer random query strings and headers with the same document, never a 5xx', async () => {
    const paths = ['/.well-known/openid-configuration', '/.well-known/oauth-authorization-server', '/.well-known/jwks.json'];
    const baseline = new Map<string, string>();
    for (const path of paths) baseline.set(path, await (await fetch(`${t.baseUrl}${path}`)).text());
    const before = await snapshotTables(t.deps.database.db);
    await fc.assert(fc.asyncProperty(fc.constantFrom(...paths), query, authorization(), extraHeaders, async (path, params, auth, headers) => {
      const all: Record<string, string> = { ...headers };
      if (auth !== undefined) all.authorization = auth;
      const response = await fetch(`${t.baseUrl}${path}?${new URLSearchParams(params)}`, { headers: all });
      assert.equal(response.status, 200);
      assert.equal(await response.text(), baseline.get(path));
    }), { numRuns: 100 });
    for (const path of ['/.well-known/jwks.json/', '/.well-known/../jwks.json', '/.well-known/openid-configuration%00', '/.well-known/%2e%2e/etc/passwd']) {
      const response = await fetch(`${t.baseUrl}${path}`);
      assert.ok(response.status < 500, `${path}: ${response.status}`);
    }
    const jwks = JSON.parse(baseline.get('/.well-known/jwks.json')!) as { keys: Array<Record<string, unknown>> };
    for (const key of jwks.keys) for (const secret of ['d', 'p', 'q', 'dp', 'dq', 'qi']) assert.equal(key[secret], undefined, 'no private key material in the JWKS');
    assert.equal(await snapshotTables(t.deps.database.db), before);
  });
});
