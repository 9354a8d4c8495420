/**
 * DPoP and pushed authorization requests with real client libraries (issue 19 items 2 and 3): openid-client v6 (`getDPoPHandle`, which
 * retries a `use_dpop_nonce` answer by itself) and oauth4webapi (`DPoP()`, where the app retries
 * when `isDPoPNonceError` says so, as its documentation shows), each completing the code flow,
 * /me and a refresh with their default settings. The app's clock is the real one: the libraries
 * date their proofs by it.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import * as oauth from 'oauth4webapi';
import * as client from 'openid-client';
import { setRequirePushedRequests } from '../../src/core/oauth/clients.js';
import type { TestApp } from '../support/app.js';
import type { Clock } from '../../src/core/time.js';
import { forEachDatabase } from '../support/databases.js';
import { type TestClient, consentForm, newClient, signedInBrowser, startOAuthApp } from './helpers.js';

/** The real clock, as a TestClock the app accepts. */
const realClock = { now: () => Date.now(), advance: () => { throw new Error('the real clock does not jump'); } } as unknown as Clock;

forEachDatabase('DPoP with openid-client and oauth4webapi', (database) => {
  let t: TestApp;
  before(async () => { t = await startOAuthApp(database, { clock: realClock as never }); });
  after(() => t.close());

  /** The user's part: open the authorization URL, approve, and hand back where the browser lands. */
  async function approve(url: URL): Promise<URL> {
    const { browser } = await signedInBrowser(t);
    const consent = await browser.fetch(url.href);
    assert.equal(consent.status, 200);
    const answer = await browser.postForm('/oauth/authorize', [...consentForm(await consent.text()), ['decision', 'approve']]);
    assert.equal(answer.status, 302);
    return new URL(answer.headers.get('location')!);
  }

  test('openid-client: code flow, /me and refresh with a DPoP handle; the nonce retries are its own', async () => {
    const c: TestClient = await newClient(t, { type: 'public', redirectUris: ['http://127.0.0.1/callback'] });
    const config = await client.discovery(new URL(t.baseUrl), c.client.clientId, undefined, client.None(), { execute: [client.allowInsecureRequests] });
    const DPoP = client.getDPoPHandle(config, await client.randomDPoPKeyPair());
    const verifier = client.randomPKCECodeVerifier();
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: c.redirectUri, scope: 'profile:read', code_challenge: await client.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256',
    });
    const tokens = await client.authorizationCodeGrant(config, await approve(url), { pkceCodeVerifier: verifier }, undefined, { DPoP });
    assert.equal(tokens.token_type, 'dpop');
    const me = await client.fetchProtectedResource(config, tokens.access_token, new URL(`${t.baseUrl}/api/open/v1/me`), 'GET', undefined, undefined, { DPoP });
    assert.equal(me.status, 200);
    assert.ok(((await me.json()) as { username: string }).username);
    const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!, undefined, { DPoP });
    assert.equal(refreshed.token_type, 'dpop');
    // Without the handle, the bound refresh token is refused.
    await assert.rejects(client.refreshTokenGrant(config, refreshed.refresh_token!), (error: unknown) =>
      error instanceof client.ResponseBodyError && error.error === 'invalid_grant');
  });

  test('oauth4webapi: code flow and /me with DPoP(), retrying once on isDPoPNonceError', async () => {
    const c: TestClient = await newClient(t, { type: 'public', redirectUris: ['http://127.0.0.1/callback'] });
    const issuer = new URL(t.baseUrl);
    const options = { [oauth.allowInsecureRequests]: true };
    const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, options));
    assert.ok(as.dpop_signing_alg_values_supported?.includes('ES256'));
    const oauthClient: oauth.Client = { client_id: c.client.clientId };
    const DPoP = oauth.DPoP(oauthClient, await oauth.generateKeyPair('ES256'));
    const verifier = oauth.generateRandomCodeVerifier();
    const url = new URL(as.authorization_endpoint!);
    url.search = new URLSearchParams({
      response_type: 'code', client_id: c.client.clientId, redirect_uri: c.redirectUri, scope: 'profile:read',
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256',
    }).toString();
    const params = oauth.validateAuthResponse(as, oauthClient, await approve(url), oauth.expectNoState);

    /** The documented pattern: make the request, and make it once more when the server asks for a nonce. */
    async function withNonceRetry<T>(attempt: () => Promise<T>): Promise<T> {
      try {
        return await attempt();
      } catch (error) {
        if (!oauth.isDPoPNonceError(error)) throw error;
        return attempt();
      }
    }
    const tokens = await withNonceRetry(async () => oauth.processAuthorizationCodeResponse(as, oauthClient,
      await oauth.authorizationCodeGrantRequest(as, oauthClient, oauth.None(), params, c.redirectUri, verifier, { DPoP, ...options })));
    assert.equal(tokens.token_type, 'dpop');
    const me = await withNonceRetry(() => oauth.protectedResourceRequest(tokens.access_token, 'GET', new URL(`${t.baseUrl}/api/open/v1/me`), undefined, undefined, { DPoP, ...options }));
    assert.equal(me.status, 200);
    assert.ok(((await me.json()) as { username: string }).username);
  });

  test('oauth4webapi: a pushed authorization request with a DPoP proof, for an app that requires PAR, binds the code to the key (RFC 9126, RFC 9449 10.1)', async () => {
    const c: TestClient = await newClient(t, { type: 'public', redirectUris: ['http://127.0.0.1/callback'] });
    await setRequirePushedRequests(t.deps.stores, t.deps.clock, c.client.clientId, true);
    const issuer = new URL(t.baseUrl);
    const options = { [oauth.allowInsecureRequests]: true };
    const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, options));
    const oauthClient: oauth.Client = { client_id: c.client.clientId };
    const DPoP = oauth.DPoP(oauthClient, await oauth.generateKeyPair('ES256'));
    const verifier = oauth.generateRandomCodeVerifier();
    // The parameters as oauth4webapi's PAR example sets them.
    const pushed = new URLSearchParams({
      response_type: 'code', redirect_uri: c.redirectUri, scope: 'profile:read',
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256',
    });
    const push = () => oauth.pushedAuthorizationRequest(as, oauthClient, oauth.None(), pushed, { DPoP, ...options })
      .then((response) => oauth.processPushedAuthorizationResponse(as, oauthClient, response));
    let answer;
    try {
      answer = await push();
    } catch (error) {
      // The documented pattern: once more when the server asks for a nonce.
      if (!oauth.isDPoPNonceError(error)) throw error;
      answer = await push();
    }
    assert.match(answer.request_uri, /^urn:ietf:params:oauth:request_uri:/);
    const url = new URL(as.authorization_endpoint!);
    url.search = new URLSearchParams({ client_id: c.client.clientId, request_uri: answer.request_uri }).toString();
    const params = oauth.validateAuthResponse(as, oauthClient, await approve(url), oauth.expectNoState);
    const exchange = async (dpop?: oauth.DPoPHandle) => oauth.processAuthorizationCodeResponse(as, oauthClient,
      await oauth.authorizationCodeGrantRequest(as, oauthClient, oauth.None(), params, c.redirectUri, verifier, { ...(dpop ? { DPoP: dpop } : {}), ...options }));
    // The code is bound to the pushed proof's key: another key is refused and leaves the code unused.
    const otherKey = oauth.DPoP(oauthClient, await oauth.generateKeyPair('ES256'));
    await assert.rejects(exchange(otherKey).catch((error: unknown) => (oauth.isDPoPNonceError(error) ? exchange(otherKey) : Promise.reject(error))),
      (error: unknown) => error instanceof oauth.ResponseBodyError && error.error !== 'use_dpop_nonce');
    const tokens = await exchange(DPoP).catch((error: unknown) => (oauth.isDPoPNonceError(error) ? exchange(DPoP) : Promise.reject(error)));
    assert.equal(tokens.token_type, 'dpop');
  });
});
