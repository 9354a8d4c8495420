/**
 * Bad input, as a property (fast-check): malformed, missing, repeated and huge parameters at the
 * token, revoke, introspect and authorization endpoints always get a well-formed RFC answer,
 * never a 5xx, and change nothing stored.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import fc from 'fast-check';
import { sql } from 'kysely';
import { generateToken } from '../../src/core/credentials/formats.js';
import type { TestApp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';
import { type Browser, type TestClient, newClient, pkcePair, signedInBrowser, startOAuthApp } from './helpers.js';

const TABLES = ['users', 'clients', 'consents', 'grants', 'authorization_codes', 'access_tokens', 'refresh_tokens'];
const ERRORS = new Set(['invalid_request', 'invalid_client', 'invalid_grant', 'unsupported_grant_type', 'invalid_scope', 'unauthorized_client']);
/** RFC 6749 4.1.2.1 and 5.2: error_description is printable ASCII without a quote or a backslash. */
const RFC_6749_DESCRIPTION = /^[\x20-\x21\x23-\x5B\x5D-\x7E]+$/;
const AUTHORIZE_ERRORS = new Set(['invalid_request', 'invalid_scope', 'unsupported_response_type', 'login_required', 'consent_required', 'interaction_required']);

forEachDatabase('bad input', (database) => {
  let t: TestApp;
  let confidential: TestClient;
  let publicClient: TestClient;
  let browser: Browser;

  before(async () => {
    // Hundreds of bad credentials from one address are a brute force to the endpoint limits
    // (test/oauth/endpoint-limits.test.ts); here they are only input.
    t = await startOAuthApp(database, { env: { CLIENT_AUTH_FAILURES_PER_ADDRESS: '1000000', CLIENT_AUTH_CLIENTS_PER_ADDRESS: '1000000', CLIENT_AUTH_FAILURES_PER_CLIENT: '1000000' } });
    confidential = await newClient(t);
    publicClient = await newClient(t, { type: 'public' });
    browser = (await signedInBrowser(t)).browser;
  });
  after(() => t.close());

  /** Every row of the tables the OAuth flow writes, as one comparable string. */
  async function snapshot(): Promise<string> {
    const parts: string[] = [];
    for (const table of TABLES) {
      const { rows } = await sql<Record<string, unknown>>`select * from ${sql.table(table)}`.execute(t.deps.database.db);
      parts.push(table, ...rows.map((r) => JSON.stringify(r)).sort());
    }
    return parts.join('\n');
  }

  const junk = fc.oneof(
    fc.constant(''),
    fc.string({ maxLength: 50 }),
    fc.string({ unit: 'grapheme', maxLength: 30 }),
    fc.string({ minLength: 5000, maxLength: 20_000 }),
    fc.constant('A'.repeat(43)),
    fc.constant('%00'),
    fc.constant('\u0000\r\n'),
    fc.constantFrom('authorization_code', 'refresh_token', 'password', 'profile:read', 'openid', 'S256', 'plain', 'none', 'access_token'),
  );

  const value = (name: string) => fc.oneof(
    junk,
    name === 'client_id' ? fc.constantFrom(confidential.client.clientId, publicClient.client.clientId) : junk,
    name === 'client_secret' ? fc.constant(confidential.secret!) : junk,
    name === 'refresh_token' || name === 'token' ? fc.constantFrom(generateToken('refresh'), generateToken('access'), 'svcr_x') : junk,
    name === 'redirect_uri' ? fc.constant(confidential.redirectUri) : junk,
    name === 'code_verifier' ? fc.constant(pkcePair().verifier) : junk,
  );

  const form = (names: string[]) => fc.array(
    fc.oneof(fc.constantFrom(...names), fc.string({ maxLength: 12 })).chain((name) => value(name).map((v): [string, string] => [name, v])),
    { maxLength: 12 },
  );

  const authorization = fc.oneof(
    fc.constant(undefined),
    fc.string({ maxLength: 40 }).map((s) => `Basic ${s}`),
    fc.string({ maxLength: 40 }).map((s) => `Basic ${Buffer.from(s).toString('base64')}`),
    fc.constant(`Basic ${Buffer.from('a:b').toString('base64')}`),
    fc.constant('Bearer abc'),
  );

  const contentType = fc.constantFrom('application/x-www-form-urlencoded', 'application/x-www-form-urlencoded; charset=utf-8', 'application/json', 'text/plain', undefined);

  async function assertWellFormedError(response: Response, allowed: Set<string>): Promise<void> {
    const text = await response.text();
    assert.ok(response.status >= 400 && response.status < 500, `status ${response.status}: ${text}`);
    assert.match(response.headers.get('content-type') ?? '', /application\/json/);
    const body = JSON.parse(text) as Record<string, unknown>;
    assert.deepEqual(Object.keys(body).sort(), ['error', 'error_description']);
    assert.ok(allowed.has(body.error as string), `error ${String(body.error)}`);
    assert.equal(typeof body.error_description, 'string');
    assert.match(body.error_description as string, RFC_6749_DESCRIPTION);
    assert.equal(response.headers.get('cache-control'), 'no-store');
  }

  for (const endpoint of ['token', 'revoke', 'introspect'] as const) {
    test(`POST /api/oauth/${endpoint}: bad input gets a well-formed error, never a 5xx, and changes nothing`, async () => {
      const names = endpoint === 'token'
        ? ['grant_type', 'code', 'redirect_uri', 'code_verifier', 'refresh_token', 'scope', 'client_id', 'client_secret']
        : ['token', 'token_type_hint', 'client_id', 'client_secret'];
      const before = await snapshot();
      await fc.assert(fc.asyncProperty(form(names), authorization, contentType, async (fields, auth, type) => {
        const headers: Record<string, string> = {};
        if (auth) headers.authorization = auth;
        if (type) headers['content-type'] = type;
        const response = await fetch(`${t.baseUrl}/api/oauth/${endpoint}`, { method: 'POST', headers, body: new URLSearchParams(fields).toString() });
        if (response.status === 200 && endpoint === 'revoke') assert.deepEqual(await response.json(), {});
        else if (response.status === 200 && endpoint === 'introspect') assert.deepEqual(await response.json(), { active: false });
        else await assertWellFormedError(response, ERRORS);
      }), { numRuns: 150 });
      assert.equal(await snapshot(), before);
    });
  }

  test('GET /oauth/authorize: bad input gets an error page or an error redirect, never a 5xx, and changes nothing', async () => {
    const names = ['response_type', 'client_id', 'redirect_uri', 'scope', 'state', 'code_challenge', 'code_challenge_method', 'nonce', 'prompt', 'max_age', 'login_hint'];
    const before = await snapshot();
    const query = fc.array(
      fc.oneof(fc.constantFrom(...names), fc.string({ maxLength: 12 })).chain((name) =>
        fc.oneof(
          value(name).filter((v) => v.length < 3000),
          name === 'response_type' ? fc.constant('code') : fc.constant('x'),
          name === 'scope' ? fc.constantFrom('profile:read', 'posts:read openid', 'profile:read  posts:read') : fc.constant('y'),
          name === 'code_challenge' ? fc.constant(pkcePair().challenge) : fc.constant('z'),
          name === 'prompt' ? fc.constantFrom('none', 'login', 'consent', 'none login') : fc.constant('w'),
        ).map((v): [string, string] => [name, v])),
      { maxLength: 12 },
    );
    await fc.assert(fc.asyncProperty(query, fc.boolean(), async (fields, signedIn) => {
      const path = `/oauth/authorize?${new URLSearchParams(fields)}`;
      const response = signedIn ? await browser.fetch(path) : await fetch(t.baseUrl + path, { redirect: 'manual' });
      const text = await response.text();
      assert.ok(response.status < 500, `status ${response.status}`);
      if (response.status === 302) {
        const location = response.headers.get('location')!;
        if (location.startsWith('/login?')) return;
        const back = new URL(location);
        assert.ok(location.startsWith(`${confidential.redirectUri}?`) || location.startsWith(`${publicClient.redirectUri}?`), location);
        assert.ok(AUTHORIZE_ERRORS.has(back.searchParams.get('error') ?? ''), location);
        assert.equal(back.searchParams.get('iss'), t.baseUrl);
        assert.equal(back.searchParams.get('code'), null);
        assert.match(back.searchParams.get('error_description') ?? '', RFC_6749_DESCRIPTION);
      } else if (response.status === 200) {
        assert.match(text, /name="decision" value="approve"/);
      } else {
        assert.equal(response.status, 400);
        assert.equal(response.headers.get('location'), null);
      }
    }), { numRuns: 200 });
    assert.equal(await snapshot(), before);
  });
});
