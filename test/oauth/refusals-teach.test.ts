/**
 * Refusals that teach (issue 17.6): the error_description of the token, revocation, authorization
 * and resource endpoints names the fix, for the mistakes client libraries make with their defaults
 * (docs /docs#library-errors).
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { SignJWT } from 'jose';
import { newPersonalToken } from '../api/fixtures.js';
import { MCP_PATH } from '../../src/core/api/resource.js';
import type { TestApp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';
import {
  type TestClient, authorizeQuery, clientFields, codeExchangeFields, newClient, obtainCode, obtainTokens, pkcePair, redirectParams, signedInBrowser,
  startOAuthApp, tokenRequest,
} from './helpers.js';

forEachDatabase('refusals that teach', (database) => {
  let t: TestApp;
  let confidential: TestClient;
  let publicClient: TestClient;
  before(async () => {
    t = await startOAuthApp(database);
    confidential = await newClient(t);
    publicClient = await newClient(t, { type: 'public' });
  });
  after(() => t.close());

  async function refusal(response: Response, status: number, error: string): Promise<string> {
    const body = (await response.json()) as { error: string; error_description: string };
    assert.equal(response.status, status, JSON.stringify(body));
    assert.equal(body.error, error);
    return body.error_description;
  }

  const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;

  test('client authentication refusals say how to authenticate', async () => {
    const grant = { grant_type: 'refresh_token', refresh_token: 'svcr_x' };
    assert.match(await refusal(await tokenRequest(t, { ...grant, client_id: confidential.client.clientId }), 401, 'invalid_client'),
      /confidential, so send the client secret with HTTP Basic or client_secret in the body/);
    assert.match(await refusal(await tokenRequest(t, { ...grant, client_id: confidential.client.clientId, client_secret: 'svcs_old' }), 401, 'invalid_client'),
      /client secret is wrong, or was replaced by a rotation/);
    assert.match(await refusal(await tokenRequest(t, { ...grant, client_id: publicClient.client.clientId, client_secret: 'x' }), 401, 'invalid_client'),
      /public, so send its client_id alone, without a client secret/);
    assert.match(await refusal(await tokenRequest(t, { ...grant, client_id: 'nobody' }), 401, 'invalid_client'), /client_id is unknown/);
    assert.match(await refusal(await tokenRequest(t, { ...grant, client_secret: confidential.secret! }, { authorization: basic(confidential.client.clientId, confidential.secret!) }), 400, 'invalid_request'),
      /sent twice, with HTTP Basic and as client_secret in the body: use one of the two/);
    assert.match(await refusal(await tokenRequest(t, grant), 400, 'invalid_request'), /client_id parameter is required: send client_id in the body/);
  });

  test('the token endpoint names the parameter and the form it wants', async () => {
    const json = await fetch(`${t.baseUrl}/api/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"grant_type":"refresh_token"}' });
    assert.match(await refusal(json, 400, 'invalid_request'), /application\/x-www-form-urlencoded \(this request sent JSON\): send the parameters as a form/);
    // Credentials in the URL end up in logs: refused by name, even with a good body.
    const query = new URLSearchParams({ client_id: confidential.client.clientId, client_secret: confidential.secret! });
    const inQuery = await fetch(`${t.baseUrl}/api/oauth/token?${query}`, {
      method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'grant_type=refresh_token&refresh_token=svcr_x',
    });
    assert.match(await refusal(inQuery, 400, 'invalid_request'), /query string are not accepted \(client_id, client_secret\): send them in an application\/x-www-form-urlencoded request body/);
    assert.match(await refusal(await tokenRequest(t, clientFields(publicClient)), 400, 'invalid_request'), /grant_type parameter is required: authorization_code or refresh_token/);
    assert.match(await refusal(await tokenRequest(t, { grant_type: 'client_credentials', ...clientFields(confidential) }), 400, 'unsupported_grant_type'),
      /grant_type=authorization_code and grant_type=refresh_token/);
  });

  test('code exchange refusals name what differs from the authorization request', async () => {
    const { browser } = await signedInBrowser(t);
    const pkce = pkcePair();
    const exchange = async (fields: Record<string, string>) =>
      tokenRequest(t, codeExchangeFields(publicClient, await obtainCode(browser, publicClient, { pkce }), pkce, fields));
    assert.match(await refusal(await exchange({ redirect_uri: `${publicClient.redirectUri}/` }), 400, 'invalid_grant'), /send exactly the same string/);
    assert.match(await refusal(await exchange({ code_verifier: pkcePair().verifier }), 400, 'invalid_grant'), /send the verifier whose S256 hash was the code_challenge/);
    const noVerifier = await tokenRequest(t, {
      grant_type: 'authorization_code', code: await obtainCode(browser, publicClient, { pkce }), redirect_uri: publicClient.redirectUri, ...clientFields(publicClient),
    });
    assert.match(await refusal(noVerifier, 400, 'invalid_grant'), /send its code_verifier/);
    const tokens = await obtainTokens(t, browser, publicClient);
    assert.match(await refusal(await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: tokens.access_token, ...clientFields(publicClient) }), 400, 'invalid_grant'),
      /send the refresh token of the latest token response/);
    assert.match(await refusal(await tokenRequest(t, { grant_type: 'refresh_token', ...clientFields(publicClient) }), 400, 'invalid_request'),
      /refresh_token parameter is required: the refresh token of the latest token response/);
  });

  test('a malformed code_verifier is told which characters it may hold, in the character set of RFC 6749 5.2', async () => {
    const { browser } = await signedInBrowser(t);
    const pkce = pkcePair();
    const response = await tokenRequest(t, {
      grant_type: 'authorization_code', code: await obtainCode(browser, publicClient, { pkce }), redirect_uri: publicClient.redirectUri,
      code_verifier: 'short', ...clientFields(publicClient),
    });
    const description = await refusal(response, 400, 'invalid_grant');
    assert.match(description, /43 to 128 characters of A-Z, a-z, 0-9/);
    // RFC 6749 5.2: error_description is %x20-21 / %x23-5B / %x5D-7E, so no quote and no backslash.
    assert.match(description, /^[\x20-\x21\x23-\x5B\x5D-\x7E]+$/);
  });

  test('revocation without a token says which token to send', async () => {
    const response = await fetch(`${t.baseUrl}/api/oauth/revoke`, {
      method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(clientFields(publicClient)).toString(),
    });
    assert.match(await refusal(response, 400, 'invalid_request'), /token parameter is required: the access token or refresh token/);
  });

  test('authorization refusals say what to send', async () => {
    const { browser } = await signedInBrowser(t);
    const description = async (query: URLSearchParams) => {
      const params = redirectParams(await browser.fetch(`/oauth/authorize?${query}`));
      assert.equal(params.get('error'), 'invalid_request');
      return params.get('error_description')!;
    };
    assert.match(await description(authorizeQuery(publicClient)), /Public clients must use PKCE: send code_challenge .* and code_challenge_method=S256/);
    const plain = authorizeQuery(publicClient, { pkce: pkcePair() });
    plain.set('code_challenge_method', 'plain');
    assert.match(await description(plain), /plain is not accepted.*send code_challenge_method=S256/);
    assert.match(await description(authorizeQuery(confidential, { state: null })), /send a random state, or a code_challenge with code_challenge_method=S256/);
    assert.match(await description(authorizeQuery(confidential, { scope: 'openid' })), /send a random nonce, or a code_challenge/);
    assert.match(await description(authorizeQuery(confidential, { extra: { response_mode: 'fragment' } })), /response_mode must be query or form_post: leave it out for query/);
  });

  test('the resource API refuses tokens in the query string or a form body, and says to send Authorization: Bearer', async () => {
    const { browser } = await signedInBrowser(t);
    const tokens = await obtainTokens(t, browser, confidential, { scope: 'openid profile:read', extra: { nonce: 'n' } });
    // passport-oauth2's default: node-oauth puts the token in the query string.
    const inQuery = await fetch(`${t.baseUrl}/api/open/v1/me?access_token=${tokens.access_token}`);
    assert.match(await refusal(inQuery, 401, 'invalid_token'), /query string or a form body are not accepted: send the access token in the header Authorization: Bearer <token>\.$/);
    assert.equal(inQuery.headers.get('www-authenticate'), `Bearer realm="api", resource_metadata="${t.baseUrl}/.well-known/oauth-protected-resource/api/open/v1", DPoP realm="api", algs="ES256 EdDSA Ed25519 PS256 RS256", resource_metadata="${t.baseUrl}/.well-known/oauth-protected-resource/api/open/v1"`);
    const inBody = await fetch(`${t.baseUrl}/api/oauth/userinfo`, {
      method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `access_token=${tokens.access_token}`,
    });
    assert.match(await refusal(inBody, 401, 'invalid_token'), /form body are not accepted/);
    // Without any token the plain challenge stays (RFC 6750 3.1).
    assert.match(await refusal(await fetch(`${t.baseUrl}/api/open/v1/me`), 401, 'invalid_token'), /needs an access token/);
  });

  test('UserInfo POSTed a form without any token is told it needs one, with no error code (RFC 6750 3.1); a form that carries access_token, that a token there is not accepted (RFC 6750 2.2)', async () => {
    const post = (body: string) => fetch(`${t.baseUrl}/api/oauth/userinfo`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body });
    for (const body of ['', 'scope=openid', 'access_tokens=x']) {
      const response = await post(body);
      assert.match(await refusal(response, 401, 'invalid_token'), /^This endpoint needs an access token: send the header Authorization: Bearer <token>\.$/, body);
      assert.match(response.headers.get('www-authenticate') ?? '', /^Bearer realm=/, body);
      assert.doesNotMatch(response.headers.get('www-authenticate') ?? '', /error=/, body);
    }
    for (const body of ['access_token=svco_x', 'scope=openid&access_token=']) {
      assert.match(await refusal(await post(body), 401, 'invalid_token'), /form body are not accepted: send the access token in the header/, body);
    }
  });

  test('MCP, which reads no form body, tells a form POSTed without the header that no form is read there, not that a token in it is refused: with the challenge of a request without credentials, no error code, as UserInfo answers a form without a token (RFC 6750 3.1); an API address that takes no POST is 405', async () => {
    const post = (path: string, body: string) => fetch(`${t.baseUrl}${path}`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body });
    const userInfo = await post('/api/oauth/userinfo', 'scope=openid');
    assert.match(await refusal(userInfo, 401, 'invalid_token'), /^This endpoint needs an access token/);
    const userInfoChallenge = userInfo.headers.get('www-authenticate') ?? '';
    assert.match(userInfoChallenge, /^Bearer realm="api", DPoP realm="api", algs="[^"]+"$/);
    for (const path of ['/api/open/v1/me', '/api/open/v1/']) {
      for (const body of ['', 'access_token=svco_x']) {
        const response = await post(path, body);
        assert.equal(response.status, 405, `${path} ${body}`);
        assert.equal(response.headers.get('allow'), 'GET, HEAD', `${path} ${body}`);
      }
    }
    for (const path of [MCP_PATH]) {
      // Without a token, and with one, which is not read: the answer is the same, and true of both.
      for (const body of ['', 'scope=openid', 'access_token=svco_x']) {
        const response = await post(path, body);
        const description = await refusal(response, 401, 'invalid_token');
        assert.match(description, /^This endpoint reads no form body, so no token in one is read: send the access token in the header Authorization: Bearer <token>\.$/, `${path} ${body}`);
        const challenge = response.headers.get('www-authenticate') ?? '';
        assert.match(challenge, /^Bearer realm="api", (resource_metadata="[^"]+", )?DPoP realm="api", algs="[^"]+"(, resource_metadata="[^"]+")?$/, `${path} ${body}: ${challenge}`);
        assert.doesNotMatch(challenge, /error=/, `${path} ${body}`);
      }
    }
  });

  test('every refusal of the bearer gates writes its error_description in the characters RFC 6749 5.2 and RFC 6750 3 allow: no quote, no backslash', async () => {
    const allowed = /^[\x20\x21\x23-\x5B\x5D-\x7E]+$/;
    const { browser } = await signedInBrowser(t);
    const tokens = await obtainTokens(t, browser, confidential, { scope: 'profile:read posts:read' });
    const cases: Array<[string, RequestInit]> = [
      ['/api/open/v1/me', {}],
      ['/api/open/v1/me?access_token=svco_x', {}],
      ['/api/open/v1/me', { headers: { authorization: 'Basic abc' } }],
      ['/api/open/v1/me', { headers: { authorization: `DPoP ${tokens.access_token}` } }],
      ['/api/open/v1/me/posts?page=%22%5C%C3%A9', { headers: { authorization: `Bearer ${tokens.access_token}` } }],
      ['/api/oauth/userinfo', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'access_token=svco_x' }],
    ];
    for (const [path, init] of cases) {
      const response = await fetch(`${t.baseUrl}${path}`, init);
      assert.ok(response.status >= 400, `${path}: ${response.status}`);
      const { error_description: description } = (await response.json()) as { error_description: string };
      assert.match(description, allowed, `${path}: ${description}`);
    }
  });

  test('the resource API names the token that was sent instead of an access token', async () => {
    const { browser, user } = await signedInBrowser(t);
    const tokens = await obtainTokens(t, browser, confidential, { scope: 'profile:read' });
    const me = (authorization: string) => fetch(`${t.baseUrl}/api/open/v1/me`, { headers: { authorization } });
    assert.match(await refusal(await me(`Bearer ${tokens.refresh_token}`), 401, 'invalid_token'), /This is a refresh token: send the access_token/);
    const jwt = await new SignJWT({ sub: '1' }).setProtectedHeader({ alg: 'HS256' }).sign(new Uint8Array(32));
    assert.match(await refusal(await me(`Bearer ${jwt}`), 401, 'invalid_token'), /This is a JWT, such as an id_token/);
    assert.match(await refusal(await me(`Bearer ${confidential.secret!}`), 401, 'invalid_token'), /This is a client secret/);
    assert.match(await refusal(await me(`DPoP ${tokens.access_token}`), 401, 'invalid_dpop_proof'), /Authorization: DPoP needs a DPoP header with a proof/);
    const posts = await fetch(`${t.baseUrl}/api/open/v1/me/posts`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
    assert.match(await refusal(posts, 403, 'insufficient_scope'), /needs the scope posts:read: add it to the scope of the authorization request/);
    const { token: personal } = await newPersonalToken(t.deps, user, ['profile:read'], 7);
    const personalPosts = await fetch(`${t.baseUrl}/api/open/v1/me/posts`, { headers: { authorization: `Bearer ${personal}` } });
    assert.match(await refusal(personalPosts, 403, 'insufficient_scope'), /needs the scope posts:read: this personal token was made without it; make one that has it under Settings > API tokens/);
    // attack112 F3: no personal token can have openid, so its owner is not told to make one that has it.
    const personalUserinfo = await fetch(`${t.baseUrl}/api/oauth/userinfo`, { headers: { authorization: `Bearer ${personal}` } });
    assert.match(await refusal(personalUserinfo, 403, 'insufficient_scope'), /needs the scope openid, which no personal token can have: use the access token of an authorization request whose scope had it/);
    t.clock.advance(3600_000);
    assert.match(await refusal(await me(`Bearer ${tokens.access_token}`), 401, 'invalid_token'), /expired: get a new access token with your refresh token/);
  });

  test('the docs list the common errors of each library, with the settings that fix them', async () => {
    const page = (await (await fetch(`${t.baseUrl}/docs`)).text()).replace(/&#39;/g, "'");
    assert.match(page, /<a href="#library-errors">Common errors per library<\/a>/);
    for (const library of ['openid-client', 'oauth4webapi', 'oidc-client-ts', 'authjs', 'passport-oauth2', 'arctic', 'simple-oauth2']) {
      assert.ok(page.includes(`id="lib-${library}"`), library);
    }
    for (const setting of ['useAuthorizationHeaderforGET(true)', 'state: true, pkce: true', "tokenPath: '/api/oauth/token'", 'revokeTokensOnSignout: true',
      'allowInsecureRequests', "token_endpoint_auth_method: 'none'", 'CodeChallengeMethod.S256', `authority: '${t.baseUrl}'`]) {
      assert.ok(page.includes(setting), setting);
    }
  });
});
