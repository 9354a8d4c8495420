/**
 * The resource API as a protected resource: its RFC 9728 metadata, `resource_metadata` in its
 * challenges, RFC 8707 `resource` at the authorization, PAR and token endpoints (the API and its
 * MCP server are the resources), the access token's `aud` in introspection, and the audience rule:
 * a token issued for the API by name is accepted by the API alone, not by UserInfo. The MCP
 * server's side of it is in test/api/mcp.test.ts.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { hashSecret } from '../../src/core/credentials/formats.js';
import type { TestApp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';
import {
  authorizeQuery, clientFields, freshCode, introspect, newClient, obtainTokens, pkcePair, redirectParams, signedInBrowser, startOAuthApp, tokenRequest,
} from './helpers.js';

forEachDatabase('the resource API as a protected resource (RFC 9728, RFC 8707)', (database) => {
  let t: TestApp;
  let api: string;
  let metadataUrl: string;
  before(async () => {
    t = await startOAuthApp(database);
    api = `${t.baseUrl}/api/open/v1`;
    metadataUrl = `${t.baseUrl}/.well-known/oauth-protected-resource/api/open/v1`;
  });
  after(() => t.close());

  /** The resource recorded on the grant an access token was issued from. */
  async function grantResource(accessToken: string): Promise<string | null | undefined> {
    const token = await t.deps.stores.tokens.findAccess(hashSecret(accessToken));
    return token && (await t.deps.stores.grants.findById(token.grantId))?.resource;
  }

  test('the API publishes RFC 9728 metadata naming itself, this authorization server, header tokens and its scopes', async () => {
    const response = await fetch(metadataUrl, { headers: { origin: 'https://spa.example' } });
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^application\/json/);
    assert.equal(response.headers.get('access-control-allow-origin'), '*');
    const metadata = (await response.json()) as Record<string, unknown>;
    assert.equal(metadata.resource, api);
    assert.deepEqual(metadata.authorization_servers, [t.baseUrl]);
    assert.deepEqual(metadata.bearer_methods_supported, ['header']);
    assert.deepEqual(metadata.scopes_supported, ['profile:read', 'posts:read']);
    assert.equal(metadata.resource_documentation, `${t.baseUrl}/docs`);
  });

  test('every challenge of the API names its metadata (resource_metadata, RFC 9728 5.1)', async () => {
    const c = await newClient(t);
    const { browser } = await signedInBrowser(t);
    const tokens = await obtainTokens(t, browser, c, { scope: 'profile:read' });
    const answers = [
      await fetch(`${api}/me`),
      await fetch(`${api}/me`, { headers: { authorization: 'Bearer svco_unknown' } }),
      await fetch(`${api}/me/posts`, { headers: { authorization: `Bearer ${tokens.access_token}` } }),
    ];
    assert.deepEqual(answers.map((r) => r.status), [401, 401, 403]);
    for (const answer of answers) {
      assert.match(answer.headers.get('www-authenticate') ?? '', new RegExp(`^Bearer realm="api".*, resource_metadata="${metadataUrl.replace(/[.]/g, '\\.')}"$`));
    }
    const metadata = (await (await fetch(answers[0]!.headers.get('www-authenticate')!.match(/resource_metadata="([^"]+)"/)![1]!)).json()) as { resource: string };
    assert.equal(metadata.resource, api, 'the named address resolves to the metadata');
  });

  test('an authorization request naming the API as resource is granted, and the grant records it', async () => {
    const c = await newClient(t);
    const { browser } = await signedInBrowser(t);
    const named = await obtainTokens(t, browser, c, { extra: { resource: api } });
    assert.equal((await introspect(t, c, named.access_token)).aud, api);
    assert.equal(await grantResource(named.access_token), api);
    const unnamed = await obtainTokens(t, browser, c);
    assert.equal(await grantResource(unnamed.access_token), null);
  });

  test('an authorization request naming any other resource is answered invalid_target on the redirect URI', async () => {
    const c = await newClient(t);
    const { browser } = await signedInBrowser(t);
    for (const resource of ['https://other.example/api', `${api}/`, `${t.baseUrl}/api/open/v2`]) {
      const params = redirectParams(await browser.fetch(`/oauth/authorize?${authorizeQuery(c, { pkce: pkcePair(), extra: { resource } })}`));
      assert.equal(params.get('error'), 'invalid_target', resource);
      assert.equal(params.get('state'), 'state-123');
    }
  });

  test('an authorization request naming both the API and its MCP server is answered invalid_target: a token is for one resource', async () => {
    const c = await newClient(t);
    const { browser } = await signedInBrowser(t);
    const query = authorizeQuery(c, { pkce: pkcePair() });
    query.append('resource', api);
    query.append('resource', `${api}/mcp`);
    const params = redirectParams(await browser.fetch(`/oauth/authorize?${query}`));
    assert.equal(params.get('error'), 'invalid_target');
    // The same resource twice is one resource.
    const twice = authorizeQuery(c, { pkce: pkcePair() });
    twice.append('resource', api);
    twice.append('resource', api);
    const granted = await browser.fetch(`/oauth/authorize?${twice}`);
    assert.equal(granted.status, 200, 'the consent page, no error redirect');
  });

  test('the developer docs name as resource values the two the authorization endpoint grants, the API and its MCP server', async () => {
    const page = (await (await fetch(`${t.baseUrl}/docs`)).text()).replace(/\s+/g, ' ');
    const row = page.match(/<tr><td><code>resource<\/code><\/td>.*?<\/tr>/)?.[0] ?? '';
    const named = [...row.matchAll(/<code>(http[^<]+)<\/code>/g)].map((m) => m[1]);
    assert.deepEqual(named, [api, `${api}/mcp`]);
    const c = await newClient(t);
    const { browser } = await signedInBrowser(t);
    for (const resource of named) {
      const tokens = await obtainTokens(t, browser, c, { extra: { resource: resource! } });
      assert.equal((await introspect(t, c, tokens.access_token)).aud, resource);
    }
  });

  test('a token request may not name another resource than its authorization did (RFC 8707 2.2), and the code stays unused', async () => {
    const { fields } = await freshCode(t, {}, { extra: { resource: api } });
    const refused = await tokenRequest(t, { ...fields, resource: `${api}/mcp` });
    assert.equal(refused.status, 400);
    assert.equal(((await refused.json()) as { error: string }).error, 'invalid_target');
    const granted = await tokenRequest(t, fields);
    assert.equal(granted.status, 200, 'the refused request left the code unused');
  });

  test('a pushed request naming another resource is answered invalid_target', async () => {
    const c = await newClient(t);
    const response = await fetch(`${t.baseUrl}/api/oauth/par`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ ...Object.fromEntries(authorizeQuery(c, { pkce: pkcePair(), extra: { resource: 'https://other.example/' } })), ...clientFields(c) }),
    });
    assert.equal(response.status, 400);
    assert.equal(((await response.json()) as { error: string }).error, 'invalid_target');
  });

  test('a token request may name the API as resource; any other resource is invalid_target', async () => {
    const { c, fields } = await freshCode(t);
    const refused = await tokenRequest(t, { ...fields, resource: 'https://other.example/' });
    assert.equal(refused.status, 400);
    assert.equal(((await refused.json()) as { error: string }).error, 'invalid_target');
    const granted = await tokenRequest(t, { ...fields, resource: api });
    assert.equal(granted.status, 200, 'the refused request left the code unused');
    const { refresh_token } = (await granted.json()) as { refresh_token: string };
    const refreshRefused = await tokenRequest(t, { grant_type: 'refresh_token', refresh_token, resource: `${api}/me`, ...clientFields(c) });
    assert.equal(((await refreshRefused.json()) as { error: string }).error, 'invalid_target');
    const refreshed = await tokenRequest(t, { grant_type: 'refresh_token', refresh_token, resource: api, ...clientFields(c) });
    assert.equal(refreshed.status, 200);
  });

  test('introspection shows the API as the aud of an access token asked for without a resource, and none on a refresh token', async () => {
    const c = await newClient(t);
    const { browser } = await signedInBrowser(t);
    const tokens = await obtainTokens(t, browser, c);
    assert.equal((await introspect(t, c, tokens.access_token)).aud, api);
    const refresh = await introspect(t, c, tokens.refresh_token);
    assert.equal(refresh.active, true);
    assert.equal(refresh.aud, undefined);
  });

  const userInfo = (token: string) => fetch(`${t.baseUrl}/api/oauth/userinfo`, { headers: { authorization: `Bearer ${token}` } });
  const me = (token: string) => fetch(`${api}/me`, { headers: { authorization: `Bearer ${token}` } });

  test('a token whose authorization named the API is accepted by the API alone: UserInfo answers 401 invalid_token', async () => {
    const c = await newClient(t);
    const { browser } = await signedInBrowser(t);
    const named = await obtainTokens(t, browser, c, { scope: 'openid profile:read', extra: { resource: api, nonce: 'n-1' } });
    assert.equal((await me(named.access_token)).status, 200);
    const refused = await userInfo(named.access_token);
    assert.equal(refused.status, 401);
    assert.match(refused.headers.get('www-authenticate') ?? '', /error="invalid_token"/);
    assert.equal(((await refused.json()) as { error: string }).error, 'invalid_token');
    // Its refresh yields tokens for the API alone too: the authorization named it.
    const refreshed = (await (await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: named.refresh_token, ...clientFields(c) })).json()) as { access_token: string };
    assert.equal((await userInfo(refreshed.access_token)).status, 401);
  });

  test('a token request naming the API narrows that access token alone; a refresh without resource is accepted by UserInfo again', async () => {
    const { c, fields } = await freshCode(t, {}, { scope: 'openid profile:read', extra: { nonce: 'n-2' } });
    const granted = await tokenRequest(t, { ...fields, resource: api });
    const tokens = (await granted.json()) as { access_token: string; refresh_token: string };
    assert.equal((await userInfo(tokens.access_token)).status, 401);
    assert.equal((await me(tokens.access_token)).status, 200);
    const refreshed = (await (await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, ...clientFields(c) })).json()) as { access_token: string };
    assert.equal((await userInfo(refreshed.access_token)).status, 200);
  });

  test('a token that named no resource is accepted by the API and by UserInfo', async () => {
    const c = await newClient(t);
    const { browser } = await signedInBrowser(t);
    const tokens = await obtainTokens(t, browser, c, { scope: 'openid profile:read', extra: { nonce: 'n-3' } });
    assert.equal((await me(tokens.access_token)).status, 200);
    assert.equal((await userInfo(tokens.access_token)).status, 200);
  });
});
