/**
 * The flow driven by openid-client v6, as a real third-party app drives it: a public client
 * (PKCE, no secret) and a confidential one (client_secret_post and client_secret_basic).
 * The first tests give the metadata by hand; the pushed-request test reads it by discovery.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import * as client from 'openid-client';
import type { TestApp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';
import { setRequirePushedRequests } from '../../src/core/oauth/clients.js';
import { type Browser, type TestClient, consentForm, newClient, signedInBrowser, startOAuthApp } from './helpers.js';

forEachDatabase('openid-client as a third-party app', (database) => {
  let t: TestApp;
  before(async () => { t = await startOAuthApp(database); });
  after(() => t.close());

  function configuration(c: TestClient, auth?: client.ClientAuth): client.Configuration {
    const config = new client.Configuration({
      issuer: t.baseUrl,
      authorization_endpoint: `${t.baseUrl}/oauth/authorize`,
      token_endpoint: `${t.baseUrl}/api/oauth/token`,
      revocation_endpoint: `${t.baseUrl}/api/oauth/revoke`,
      introspection_endpoint: `${t.baseUrl}/api/oauth/introspect`,
      authorization_response_iss_parameter_supported: true,
    }, c.client.clientId, c.secret, auth);
    client.allowInsecureRequests(config);
    return config;
  }

  /** The user's part: open the authorization URL, approve, and hand back where the browser lands. */
  async function approveInBrowser(browser: Browser, url: URL): Promise<URL> {
    const consent = await browser.fetch(url.href);
    assert.equal(consent.status, 200);
    const answer = await browser.postForm('/oauth/authorize', [...consentForm(await consent.text()), ['decision', 'approve']]);
    assert.equal(answer.status, 302);
    return new URL(answer.headers.get('location')!);
  }

  async function run(c: TestClient, auth?: client.ClientAuth) {
    const config = configuration(c, auth);
    const { browser, user } = await signedInBrowser(t);
    const verifier = client.randomPKCECodeVerifier();
    const state = client.randomState();
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: c.redirectUri,
      scope: 'profile:read posts:read',
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
    });
    const callback = await approveInBrowser(browser, url);
    const tokens = await client.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: state });
    assert.match(tokens.access_token, /^svco_/);
    assert.match(tokens.refresh_token!, /^svcr_/);
    assert.equal(tokens.token_type, 'bearer');
    assert.equal(tokens.expires_in, 3600);
    assert.equal(tokens.scope, 'profile:read posts:read');

    const introspection = await client.tokenIntrospection(config, tokens.access_token);
    assert.equal(introspection.active, true);
    assert.equal(introspection.username, user.username);
    assert.equal(introspection.sub, String(user.id));

    const successor = await client.refreshTokenGrant(config, tokens.refresh_token!);
    assert.notEqual(successor.refresh_token, tokens.refresh_token);
    // Once the successor is used, the old token is no replay (INTERFACE 11) but reuse.
    const refreshed = await client.refreshTokenGrant(config, successor.refresh_token!);
    await assert.rejects(client.refreshTokenGrant(config, tokens.refresh_token!), (error: unknown) =>
      error instanceof client.ResponseBodyError && error.error === 'invalid_grant');

    // Reuse revoked the family, so the refreshed pair is dead as well.
    assert.equal((await client.tokenIntrospection(config, refreshed.access_token)).active, false);
    await client.tokenRevocation(config, refreshed.refresh_token!);
  }

  test('a public client completes the flow with PKCE and no secret', async () => {
    const c = await newClient(t, { type: 'public', redirectUris: ['http://127.0.0.1/callback'] });
    await run(c, client.None());
  });

  test('a confidential client completes the flow with client_secret_post', async () => {
    const c = await newClient(t);
    await run(c, client.ClientSecretPost(c.secret));
  });

  test('a confidential client completes the flow with client_secret_basic', async () => {
    const c = await newClient(t);
    await run(c, client.ClientSecretBasic(c.secret));
  });

  test('openid-client sees an access_denied answer as an error with the state checked', async () => {
    const c = await newClient(t);
    const config = configuration(c);
    const { browser } = await signedInBrowser(t);
    const state = client.randomState();
    const url = client.buildAuthorizationUrl(config, { redirect_uri: c.redirectUri, scope: 'profile:read', state });
    const consent = await browser.fetch(url.href);
    const answer = await browser.postForm('/oauth/authorize', [...consentForm(await consent.text()), ['decision', 'deny']]);
    await assert.rejects(client.authorizationCodeGrant(config, new URL(answer.headers.get('location')!), { expectedState: state }),
      (error: unknown) => error instanceof client.AuthorizationResponseError && error.error === 'access_denied');
  });

  test('openid-client, configured by discovery with its defaults, completes a flow through a pushed request (RFC 9126)', async () => {
    const c = await newClient(t);
    // The client accepts only pushed requests, so the library must have used the PAR endpoint.
    await setRequirePushedRequests(t.deps.stores, t.deps.clock, c.client.clientId, true);
    const config = await client.discovery(new URL(t.baseUrl), c.client.clientId, c.secret, undefined, { execute: [client.allowInsecureRequests] });
    assert.equal(config.serverMetadata().pushed_authorization_request_endpoint, `${t.baseUrl}/api/oauth/par`);
    const { browser, user } = await signedInBrowser(t);
    const verifier = client.randomPKCECodeVerifier();
    const url = await client.buildAuthorizationUrlWithPAR(config, {
      redirect_uri: c.redirectUri,
      scope: 'profile:read',
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      resource: `${t.baseUrl}/api/open/v1`,
    });
    assert.deepEqual([...url.searchParams.keys()].sort(), ['client_id', 'request_uri']);
    const callback = await approveInBrowser(browser, url);
    const tokens = await client.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier });
    const introspection = await client.tokenIntrospection(config, tokens.access_token);
    assert.equal(introspection.sub, String(user.id));
    assert.equal(introspection.aud, `${t.baseUrl}/api/open/v1`);
  });
});
