/**
 * CORS (INTERFACE section 3, issue 17.1) over real HTTP: the endpoints a browser app calls from
 * its own origin answer any origin, without credentials, on success, on every error and on the
 * preflight; no endpoint that reads the session cookie answers CORS at all.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { BODY_LIMIT_BYTES } from '../../src/app.js';
import type { TestApp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';
import {
  type TestClient, clientFields, codeExchangeFields, newClient, obtainCode, obtainTokens, pkcePair, signedInBrowser, startOAuthApp,
} from './helpers.js';

const ORIGIN = 'https://spa.example';

/** The headers a browser's preflight for a cross-origin request to a JSON endpoint carries. */
const PREFLIGHT_REQUEST = { 'access-control-request-headers': 'content-type,authorization,dpop' };

function basic(id: string, secret: string): string {
  return `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;
}

/** Any origin may read the answer, with no credentials, and the challenge headers are exposed. */
function assertCors(response: Response, what: string): void {
  assert.equal(response.headers.get('access-control-allow-origin'), '*', `${what}: allow-origin`);
  assert.equal(response.headers.get('access-control-allow-credentials'), null, `${what}: never credentials`);
  const exposed = (response.headers.get('access-control-expose-headers') ?? '').split(/, */).map((h) => h.toLowerCase());
  for (const header of ['www-authenticate', 'dpop-nonce', 'retry-after', 'x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset']) {
    assert.ok(exposed.includes(header), `${what}: exposes ${header}`);
  }
}

function assertNoCors(response: Response, what: string): void {
  for (const [name] of response.headers) assert.ok(!name.startsWith('access-control-'), `${what}: no ${name}`);
}

forEachDatabase('CORS', (database) => {
  let t: TestApp;
  let publicClient: TestClient;
  let confidential: TestClient;
  before(async () => {
    t = await startOAuthApp(database);
    publicClient = await newClient(t, { type: 'public' });
    confidential = await newClient(t);
  });
  after(() => t.close());

  const post = (path: string, body: string, headers: Record<string, string> = {}) => fetch(`${t.baseUrl}${path}`, {
    method: 'POST', headers: { origin: ORIGIN, 'content-type': 'application/x-www-form-urlencoded', ...headers }, body,
  });
  const get = (path: string, headers: Record<string, string> = {}) => fetch(`${t.baseUrl}${path}`, { headers: { origin: ORIGIN, ...headers } });
  const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();

  async function preflight(path: string, method: string): Promise<Response> {
    const response = await fetch(`${t.baseUrl}${path}`, {
      method: 'OPTIONS', headers: { origin: ORIGIN, 'access-control-request-method': method, ...PREFLIGHT_REQUEST },
    });
    await response.arrayBuffer();
    return response;
  }

  async function assertPreflight(path: string, methods: string[]): Promise<void> {
    for (const method of methods) {
      const response = await preflight(path, method);
      assert.equal(response.status, 204, `${path} ${method}`);
      assertCors(response, `OPTIONS ${path}`);
      const allowed = (response.headers.get('access-control-allow-methods') ?? '').split(/, */);
      assert.ok(allowed.includes(method), `${path}: allows ${method}`);
      const headers = (response.headers.get('access-control-allow-headers') ?? '').split(/, */).map((h) => h.toLowerCase());
      for (const header of ['content-type', 'authorization', 'dpop']) assert.ok(headers.includes(header), `${path}: allows ${header}`);
      const maxAge = Number(response.headers.get('access-control-max-age'));
      assert.ok(maxAge >= 600 && maxAge <= 7200, `${path}: max-age ${maxAge}`);
    }
  }

  test('the token endpoint answers CORS on success, on every error and on the preflight', async () => {
    const { browser } = await signedInBrowser(t);
    const pkce = pkcePair();
    const code = await obtainCode(browser, publicClient, { pkce });
    const exchange = codeExchangeFields(publicClient, code, pkce);
    const issued = await post('/api/oauth/token', form(exchange));
    assert.equal(issued.status, 200);
    assertCors(issued, 'token 200');
    const tokens = (await issued.json()) as { refresh_token: string };
    const refreshed = await post('/api/oauth/token', form({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token, ...clientFields(publicClient) }));
    assert.equal(refreshed.status, 200);
    assertCors(refreshed, 'refresh 200');
    await refreshed.arrayBuffer();

    const errors: Array<[string, Promise<Response>, number]> = [
      ['no grant_type', post('/api/oauth/token', form({ client_id: publicClient.client.clientId })), 400],
      ['unsupported grant', post('/api/oauth/token', form({ grant_type: 'password' })), 400],
      ['used code', post('/api/oauth/token', form(exchange)), 400],
      ['wrong secret in the body', post('/api/oauth/token', form({ grant_type: 'refresh_token', refresh_token: 'x', client_id: confidential.client.clientId, client_secret: 'wrong' })), 401],
      ['wrong secret with Basic', post('/api/oauth/token', form({ grant_type: 'refresh_token', refresh_token: 'x' }), { authorization: basic(confidential.client.clientId, 'wrong') }), 401],
      ['not a form', post('/api/oauth/token', '{}', { 'content-type': 'application/json' }), 400],
      ['too large', post('/api/oauth/token', `a=${'x'.repeat(BODY_LIMIT_BYTES)}`), 413],
    ];
    for (const [what, pending, status] of errors) {
      const response = await pending;
      assert.equal(response.status, status, what);
      assertCors(response, `token ${what}`);
      await response.arrayBuffer();
    }
    await assertPreflight('/api/oauth/token', ['POST']);
  });

  test('the revocation and introspection endpoints answer CORS on success, on errors and on the preflight', async () => {
    const { browser } = await signedInBrowser(t);
    const tokens = await obtainTokens(t, browser, publicClient);
    for (const path of ['/api/oauth/introspect', '/api/oauth/revoke']) {
      const ok = await post(path, form({ token: tokens.refresh_token, ...clientFields(publicClient) }));
      assert.equal(ok.status, 200, path);
      assertCors(ok, `${path} 200`);
      await ok.arrayBuffer();
      const missing = await post(path, form(clientFields(publicClient)));
      assert.equal(missing.status, 400);
      assertCors(missing, `${path} 400`);
      await missing.arrayBuffer();
      const unauthenticated = await post(path, form({ token: 'x' }), { authorization: basic(confidential.client.clientId, 'wrong') });
      assert.equal(unauthenticated.status, 401);
      assert.match(unauthenticated.headers.get('www-authenticate') ?? '', /^Basic/);
      assertCors(unauthenticated, `${path} 401`);
      await unauthenticated.arrayBuffer();
      await assertPreflight(path, ['POST']);
    }
  });

  test('discovery and the JWKS answer CORS and the preflight', async () => {
    for (const path of ['/.well-known/openid-configuration', '/.well-known/oauth-authorization-server', '/.well-known/jwks.json']) {
      const response = await get(path);
      assert.equal(response.status, 200, path);
      assertCors(response, path);
      await response.arrayBuffer();
      await assertPreflight(path, ['GET']);
    }
  });

  test('UserInfo answers CORS on success, on 401 and 403, and the preflight for GET and POST', async () => {
    const { browser } = await signedInBrowser(t);
    const withOpenid = await obtainTokens(t, browser, publicClient, { scope: 'openid profile:read' });
    const withoutOpenid = await obtainTokens(t, browser, confidential, { scope: 'profile:read' });
    const cases: Array<[string, string | undefined, number]> = [['a token with openid', withOpenid.access_token, 200], ['no token', undefined, 401], ['a token without openid', withoutOpenid.access_token, 403]];
    for (const [what, token, status] of cases) {
      const response = await get('/api/oauth/userinfo', token ? { authorization: `Bearer ${token}` } : {});
      assert.equal(response.status, status, what);
      assertCors(response, `userinfo, ${what}`);
      await response.arrayBuffer();
    }
    await assertPreflight('/api/oauth/userinfo', ['GET', 'POST']);
  });

  test('the resource API answers CORS on success, on 401, 403 and 404, and the preflight', async () => {
    const { browser } = await signedInBrowser(t);
    const tokens = await obtainTokens(t, browser, publicClient, { scope: 'profile:read' });
    const cases: Array<[string, string, string | undefined, number]> = [
      ['/me with the token', '/api/open/v1/me', tokens.access_token, 200],
      ['/me without a token', '/api/open/v1/me', undefined, 401],
      ['/me/posts without posts:read', '/api/open/v1/me/posts', tokens.access_token, 403],
      ['an unknown path', '/api/open/v1/nope', tokens.access_token, 404],
    ];
    for (const [what, path, token, status] of cases) {
      const response = await get(path, token ? { authorization: `Bearer ${token}` } : {});
      assert.equal(response.status, status, what);
      assertCors(response, what);
      await response.arrayBuffer();
    }
    for (const path of ['/api/open/v1/', '/api/open/v1/me', '/api/open/v1/me/posts']) await assertPreflight(path, ['GET']);
    const unknown = await get('/api/oauth/nope');
    assert.equal(unknown.status, 404);
    assertCors(unknown, 'a 404 under /api/oauth/');
    await unknown.arrayBuffer();
  });

  test('a preflight is answered as a preflight whatever Content-Type it carries, a malformed one included: it has no body to parse (Fetch standard, CORS protocol), so never 415', async () => {
    const preflights: Array<[string, string]> = [
      ['/api/oauth/token', 'POST'], ['/api/oauth/par', 'POST'], ['/api/oauth/register', 'POST'], ['/api/oauth/userinfo', 'GET'],
      ['/api/open/v1/me', 'GET'], ['/api/open/v1/mcp', 'POST'], ['/.well-known/openid-configuration', 'GET'],
    ];
    for (const [path, method] of preflights) {
      for (const contentType of ['not a media type', 'application/x-www-form-urlencoded; charset', 'text/plain']) {
        const response = await fetch(`${t.baseUrl}${path}`, {
          method: 'OPTIONS', headers: { origin: ORIGIN, 'access-control-request-method': method, 'content-type': contentType, ...PREFLIGHT_REQUEST },
        });
        await response.arrayBuffer();
        assert.equal(response.status, 204, `${path} with Content-Type ${contentType}`);
        assertCors(response, `OPTIONS ${path} with Content-Type ${contentType}`);
        assert.ok((response.headers.get('access-control-allow-methods') ?? '').split(/, */).includes(method), `${path}: allows ${method}`);
      }
    }
  });

  test('no endpoint that reads the session cookie answers CORS: pages, /oauth/authorize, /login, settings', async () => {
    const { browser } = await signedInBrowser(t);
    const paths = ['/', '/docs', '/login', '/signup', '/logout', '/oauth/authorize', '/settings/tokens', '/settings/applications', '/settings/developers', '/settings/profile', '/posts/new'];
    for (const path of paths) {
      // As a signed-in browser would send them from another site's page: GET, a form POST, a preflight.
      for (const method of ['GET', 'POST']) {
        const response = await browser.fetch(path, {
          method, headers: { origin: ORIGIN, ...(method === 'POST' ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
          ...(method === 'POST' ? { body: '' } : {}),
        });
        assertNoCors(response, `${method} ${path}`);
        await response.arrayBuffer();
      }
      const options = await browser.fetch(path, { method: 'OPTIONS', headers: { origin: ORIGIN, 'access-control-request-method': 'POST', ...PREFLIGHT_REQUEST } });
      assert.notEqual(options.status, 204, `OPTIONS ${path}`);
      assertNoCors(options, `OPTIONS ${path}`);
      await options.arrayBuffer();
    }
  });
});
