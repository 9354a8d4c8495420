/**
 * OpenID Connect RP-Initiated Logout 1.0 at /oauth/logout (INTERFACE section 5, issue 17 item 5),
 * over real HTTP on each database: one test per rule, and openid-client's buildEndSessionUrl()
 * end to end. The service's clock starts at the real time, because openid-client checks the
 * id_token's times against it.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import { SignJWT, decodeJwt, decodeProtectedHeader, exportJWK, generateKeyPair } from 'jose';
import * as client from 'openid-client';
import { issueLogoutToken } from '../../src/core/oidc/logout-token.js';
import { sessionSid } from '../../src/core/accounts/sessions.js';
import { hashSecret } from '../../src/core/credentials/formats.js';
import type { TestApp } from '../support/app.js';
import { formFields } from '../support/browser-flow.js';
import { TestClock } from '../support/clock.js';
import { forEachDatabase } from '../support/databases.js';
import { unsignedJwt } from '../support/jwt.js';
import {
  Browser, type TestClient, newClient, obtainTokens, signedInBrowser, startOAuthApp,
} from '../oauth/helpers.js';

const BYE = 'https://app.example/signed-out';

forEachDatabase('RP-initiated logout', (database) => {
  let t: TestApp;
  const logLines: string[] = [];
  before(async () => { t = await startOAuthApp(database, { clock: new TestClock(Date.now()), env: { LOGOUT_DELIVERY_INTERVAL: '0' }, logLines }); });
  after(() => t.close());

  const appWithLogout = () => newClient(t, { postLogoutRedirectUris: [BYE] });

  /** A person signed in to the site and to the app: the app holds an id_token. */
  async function signedInToApp(c: TestClient, browser?: Browser) {
    const signed = browser ? { browser, user: undefined } : await signedInBrowser(t);
    const tokens = await obtainTokens(t, signed.browser, c, { scope: 'openid profile:read', extra: { nonce: randomBytes(8).toString('hex') } });
    assert.ok(tokens.id_token, 'an id_token');
    return { browser: signed.browser, user: signed.user, idToken: tokens.id_token };
  }

  /** Whether the browser is still signed in to the site. */
  async function signedIn(browser: Browser): Promise<boolean> {
    const response = await browser.fetch('/settings/tokens');
    return response.status === 200;
  }

  const logout = (browser: Browser, params: Record<string, string>) => browser.fetch(`/oauth/logout?${new URLSearchParams(params)}`);

  test('discovery names the end_session_endpoint and back-channel logout with sid', async () => {
    const metadata = await (await fetch(`${t.baseUrl}/.well-known/openid-configuration`)).json() as Record<string, unknown>;
    assert.equal(metadata.end_session_endpoint, `${t.baseUrl}/oauth/logout`);
    assert.equal(metadata.backchannel_logout_supported, true);
    assert.equal(metadata.backchannel_logout_session_supported, true);
    assert.ok((metadata.claims_supported as string[]).includes('sid'));
  });

  test('the id_token carries the sid of the sign-in session the app was authorized in', async () => {
    const c = await appWithLogout();
    const { browser, idToken } = await signedInToApp(c);
    const cookie = browser.cookies.get('svc_session')!;
    assert.equal(decodeJwt(idToken).sid, sessionSid({ idHash: hashSecret(cookie) }));
  });

  test('a valid id_token_hint for the signed-in person ends the session and redirects to the registered post_logout_redirect_uri with state', async () => {
    const c = await appWithLogout();
    const { browser, idToken } = await signedInToApp(c);
    const response = await logout(browser, { id_token_hint: idToken, post_logout_redirect_uri: BYE, state: 'st-1' });
    assert.equal(response.status, 303);
    assert.equal(response.headers.get('location'), `${BYE}?state=st-1`);
    assert.equal(await signedIn(browser), false, 'the site session ended');
  });

  test('an expired id_token_hint is still accepted (RP-Initiated Logout 1.0 section 2)', async () => {
    const c = await appWithLogout();
    const { browser, idToken } = await signedInToApp(c);
    t.clock.advance(2 * 3600 * 1000);
    assert.ok(decodeJwt(idToken).exp! * 1000 < t.clock.now(), 'the hint has expired');
    const response = await logout(browser, { id_token_hint: idToken, post_logout_redirect_uri: BYE });
    assert.equal(response.status, 303);
    assert.equal(response.headers.get('location'), BYE);
    assert.equal(await signedIn(browser), false);
  });

  test('an unregistered post_logout_redirect_uri is never redirected to: the person is signed out and told why', async () => {
    const c = await appWithLogout();
    const other = await newClient(t, { postLogoutRedirectUris: ['https://other.example/bye'] });
    for (const uri of [`${BYE}/more`, 'https://APP.example/signed-out', `${BYE}?x=1`, 'https://other.example/bye', 'https://evil.example/']) {
      const { browser, idToken } = await signedInToApp(c);
      const response = await logout(browser, { id_token_hint: idToken, post_logout_redirect_uri: uri, state: 's' });
      assert.equal(response.status, 200, uri);
      assert.equal(response.headers.get('location'), null, uri);
      const page = await response.text();
      assert.match(page, /You are signed out/);
      assert.match(page, /has not registered/);
      assert.equal(await signedIn(browser), false, uri);
    }
    assert.ok(other);
  });

  test('without an id_token_hint the person is asked: the GET ends nothing, and the confirmation form with its CSRF token does, on our own page', async () => {
    const c = await appWithLogout();
    const { browser } = await signedInToApp(c);
    const response = await logout(browser, { client_id: c.client.clientId, post_logout_redirect_uri: BYE, state: 'st-2' });
    assert.equal(response.status, 200);
    const page = await response.text();
    assert.match(page, /Sign out of Community\?/);
    assert.match(page, /Test App<\/strong> asked to sign you out/);
    assert.equal(await signedIn(browser), true, 'a GET alone ends nothing');
    const fields = formFields(page, '/oauth/logout');
    assert.deepEqual(Object.keys(fields).sort(), ['_csrf', 'client_id', 'state']);

    const forged = await browser.postForm('/oauth/logout', { ...fields, _csrf: 'x'.repeat(43), decision: 'logout' });
    assert.equal(forged.status, 403);
    const otherSite = await browser.fetch('/oauth/logout', {
      method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'https://evil.example' },
      body: new URLSearchParams({ ...fields, decision: 'logout' }).toString(),
    });
    assert.equal(otherSite.status, 403);
    assert.equal(await signedIn(browser), true, 'no form without the CSRF token, or from another site, ends it');

    const confirmed = await browser.postForm('/oauth/logout', { ...fields, post_logout_redirect_uri: BYE, decision: 'logout' });
    assert.equal(confirmed.status, 200);
    assert.equal(confirmed.headers.get('location'), null);
    assert.match(await confirmed.text(), /You are signed out/);
    assert.equal(await signedIn(browser), false);
  });

  test('a confirmed sign-out with a hint of this app returns to its registered URI: the form carries the hint', async () => {
    const c = await appWithLogout();
    const { browser, user, idToken } = await signedInToApp(c);
    // A hint from an earlier sign-in session of the same person: verified, but the person is asked.
    const settings = await (await browser.fetch('/settings/tokens')).text();
    await browser.postForm('/logout', { _csrf: formFields(settings, '/logout')._csrf! });
    assert.equal((await browser.signIn(user!.username)).status, 303);
    const page = await (await logout(browser, { id_token_hint: idToken, post_logout_redirect_uri: BYE, state: 'st-6' })).text();
    const fields = formFields(page, '/oauth/logout');
    assert.equal(fields.id_token_hint, idToken);
    const confirmed = await browser.postForm('/oauth/logout', { ...fields, decision: 'logout' });
    assert.equal(confirmed.status, 303);
    assert.equal(confirmed.headers.get('location'), `${BYE}?state=st-6`);
    assert.equal(await signedIn(browser), false);
  });

  test('"Stay signed in" keeps the session; it returns to the app only with the app\'s hint, else home', async () => {
    const c = await appWithLogout();
    const { browser, user } = await signedInToApp(c);
    const page = await (await logout(browser, { client_id: c.client.clientId, post_logout_redirect_uri: BYE, state: 'st-3' })).text();
    const stayed = await browser.postForm('/oauth/logout', { ...formFields(page, '/oauth/logout'), decision: 'stay' });
    assert.equal(stayed.status, 303);
    assert.equal(stayed.headers.get('location'), '/');
    assert.equal(await signedIn(browser), true);
    // The same person's hint from another browser's session: asked, and "stay" goes back to the app.
    const other = new Browser(t);
    assert.equal((await other.signIn(user!.username)).status, 303);
    const { idToken: otherHint } = await signedInToApp(c, other);
    const asked = await (await logout(browser, { id_token_hint: otherHint, post_logout_redirect_uri: BYE, state: 'st-7' })).text();
    const back = await browser.postForm('/oauth/logout', { ...formFields(asked, '/oauth/logout'), decision: 'stay' });
    assert.equal(back.headers.get('location'), `${BYE}?state=st-7`);
    assert.equal(await signedIn(browser), true);
  });

  test('an id_token_hint of another person is asked about, never obeyed', async () => {
    const c = await appWithLogout();
    const { idToken } = await signedInToApp(c);
    const { browser } = await signedInToApp(c);
    const response = await logout(browser, { id_token_hint: idToken, post_logout_redirect_uri: BYE });
    assert.equal(response.status, 200);
    assert.match(await response.text(), /Sign out of Community\?/);
    assert.equal(await signedIn(browser), true);
  });

  test('an id_token_hint from an earlier sign-in session of the same person is asked about', async () => {
    const c = await appWithLogout();
    const { browser, user, idToken } = await signedInToApp(c);
    const page = await (await browser.fetch('/settings/tokens')).text();
    await browser.postForm('/logout', { _csrf: formFields(page, '/logout')._csrf! });
    assert.equal((await browser.signIn(user!.username)).status, 303);
    const response = await logout(browser, { id_token_hint: idToken, post_logout_redirect_uri: BYE });
    assert.equal(response.status, 200);
    assert.match(await response.text(), /Sign out of Community\?/);
    assert.equal(await signedIn(browser), true);
  });

  test('a logout token is no id_token_hint: refused with an error page, and the session lives on', async () => {
    const c = await appWithLogout();
    const { browser, user, idToken } = await signedInToApp(c);
    const logoutToken = await issueLogoutToken(await t.deps.keys.keySet(), {
      issuer: t.baseUrl, client: c.client, sub: String(user!.id), sid: decodeJwt(idToken).sid as string, jti: 'j', now: t.clock.now(),
    });
    const response = await logout(browser, { id_token_hint: logoutToken, post_logout_redirect_uri: BYE });
    assert.equal(response.status, 400);
    assert.equal(response.headers.get('location'), null);
    assert.equal(await signedIn(browser), true);
  });

  test('an id_token_hint without sid is asked about: it may come from any earlier sign-in', async () => {
    const c = await appWithLogout();
    const { browser, user } = await signedInToApp(c);
    const keys = await t.deps.keys.keySet();
    const { kid, alg, privateKey } = await keys.signingKey(c.client.idTokenAlg, t.clock.now());
    const hint = await new SignJWT({ azp: c.client.clientId })
      .setProtectedHeader({ alg, kid, typ: 'JWT' }).setIssuer(t.baseUrl).setSubject(String(user!.id)).setAudience(c.client.clientId)
      .setIssuedAt(Math.floor(t.clock.now() / 1000)).setExpirationTime(Math.floor(t.clock.now() / 1000) + 600).sign(privateKey);
    const response = await logout(browser, { id_token_hint: hint, post_logout_redirect_uri: BYE });
    assert.equal(response.status, 200);
    assert.match(await response.text(), /Sign out of Community\?/);
    assert.equal(await signedIn(browser), true);
  });

  test('a forged, unsigned or foreign-issuer id_token_hint, or one for another client_id, is refused with an error page and ends nothing', async () => {
    const c = await appWithLogout();
    const { browser, idToken } = await signedInToApp(c);
    const [header, payload, signature] = idToken.split('.') as [string, string, string];
    const claims = decodeJwt(idToken);
    const altered = `${header}.${Buffer.from(JSON.stringify({ ...claims, sub: '1' })).toString('base64url')}.${signature}`;
    const foreign = await generateKeyPair('RS256');
    const foreignIssuer = await new SignJWT({ ...claims }).setProtectedHeader({ alg: 'RS256', kid: 'theirs' }).setIssuer('https://evil.example').sign(foreign.privateKey);
    // Our issuer and our kid, another key's signature.
    const ourKid = await new SignJWT({ ...claims }).setProtectedHeader({ alg: 'RS256', kid: decodeProtectedHeader(idToken).kid! }).sign(foreign.privateKey);
    const hmac = await new SignJWT({ ...claims }).setProtectedHeader({ alg: 'HS256' }).sign(new TextEncoder().encode('k'.repeat(32)));
    const other = await newClient(t);
    const cases: Array<[string, Record<string, string>]> = [
      ['altered', { id_token_hint: altered }],
      ['alg none', { id_token_hint: unsignedJwt({ ...claims }) }],
      ['HS256', { id_token_hint: hmac }],
      ['another issuer', { id_token_hint: foreignIssuer }],
      ['our kid, another key', { id_token_hint: ourKid }],
      ['not a JWT', { id_token_hint: 'nonsense' }],
      ['client_id is not its audience', { id_token_hint: idToken, client_id: other.client.clientId }],
      ['repeated', { id_token_hint: idToken }],
    ];
    for (const [label, params] of cases) {
      const query = new URLSearchParams({ ...params, post_logout_redirect_uri: BYE });
      if (label === 'repeated') query.append('id_token_hint', idToken);
      const response = await browser.fetch(`/oauth/logout?${query}`);
      assert.equal(response.status, 400, label);
      assert.equal(response.headers.get('location'), null, label);
      assert.match(await response.text(), /That did not work/, label);
      assert.equal(await signedIn(browser), true, `${label}: nothing ended`);
    }
    assert.ok(payload);
  });

  test('a hint signed by a key we do not publish counts as no hint: the person is asked', async () => {
    const c = await appWithLogout();
    const { browser, idToken } = await signedInToApp(c);
    const retiredLongAgo = await generateKeyPair('RS256');
    const kid = (await exportJWK(retiredLongAgo.publicKey)).n!.slice(0, 20);
    const unknownKid = await new SignJWT({ ...decodeJwt(idToken) }).setProtectedHeader({ alg: 'RS256', kid, typ: 'JWT' }).sign(retiredLongAgo.privateKey);
    const response = await logout(browser, { id_token_hint: unknownKid, client_id: c.client.clientId, post_logout_redirect_uri: BYE });
    assert.equal(response.status, 200);
    assert.match(await response.text(), /Sign out of Community\?/);
    assert.equal(await signedIn(browser), true);
  });

  test('with nobody signed in, nothing ends and the browser stays here, even with the app\'s hint: it names no one signed in', async () => {
    const c = await appWithLogout();
    const { idToken } = await signedInToApp(c);
    const response = await logout(new Browser(t), { id_token_hint: idToken, post_logout_redirect_uri: BYE, state: 'st-4' });
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('location'), null);
    assert.match(await response.text(), /named someone other than the person signed in here/);
    const nowhere = await logout(new Browser(t), {});
    assert.equal(nowhere.status, 200);
    assert.match(await nowhere.text(), /You are signed out/);
  });

  test('an app owner\'s own hint never sends another person to the app\'s address, whatever they choose (no open redirect)', async () => {
    const evil = 'https://evil.example/phish';
    const mallory = await newClient(t, { postLogoutRedirectUris: [evil] });
    const { idToken: malloryHint } = await signedInToApp(mallory);
    const request = { id_token_hint: malloryHint, post_logout_redirect_uri: evil, state: 's' };
    const anonymous = await logout(new Browser(t), request);
    assert.equal(anonymous.status, 200);
    assert.equal(anonymous.headers.get('location'), null);
    for (const decision of ['logout', 'stay']) {
      const { browser } = await signedInBrowser(t);
      const page = await (await logout(browser, request)).text();
      assert.match(page, /Sign out of Community\?/);
      const fields = formFields(page, '/oauth/logout');
      const answer = await browser.postForm('/oauth/logout', { ...fields, post_logout_redirect_uri: evil, decision });
      const location = answer.headers.get('location');
      assert.ok(location === null || location === '/', `${decision}: ${location}`);
    }
  });

  test('section 3: without an id_token_hint even a registered post_logout_redirect_uri is not redirected to (no open redirect)', async () => {
    const evil = 'https://evil.example/landing';
    const c = await newClient(t, { postLogoutRedirectUris: [evil] });
    const response = await logout(new Browser(t), { client_id: c.client.clientId, post_logout_redirect_uri: evil, state: 's' });
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('location'), null);
    const page = await response.text();
    assert.match(page, /You are signed out/);
    assert.match(page, /without proof that it signed you in here/);
    assert.doesNotMatch(page, /evil\.example\/landing/);
  });

  test('a hint issued to another app does not open this app\'s registered URI', async () => {
    const first = await appWithLogout();
    const second = await appWithLogout();
    const { idToken } = await signedInToApp(first);
    const refused = await logout(new Browser(t), { id_token_hint: idToken, client_id: second.client.clientId, post_logout_redirect_uri: BYE });
    assert.equal(refused.status, 400);
    assert.equal(refused.headers.get('location'), null);
  });

  test('an app may POST the logout request: it becomes the same request as a GET, which the session cookie comes with', async () => {
    const c = await appWithLogout();
    const { browser, idToken } = await signedInToApp(c);
    const posted = await browser.postForm('/oauth/logout', { id_token_hint: idToken, post_logout_redirect_uri: BYE, state: 'st-5', other: 'dropped' });
    assert.equal(posted.status, 303);
    const next = posted.headers.get('location')!;
    assert.equal(next, `/oauth/logout?${new URLSearchParams({ id_token_hint: idToken, post_logout_redirect_uri: BYE, state: 'st-5' })}`);
    assert.equal(await signedIn(browser), true, 'the POST itself ends nothing');
    const answer = await browser.fetch(next);
    assert.equal(answer.headers.get('location'), `${BYE}?state=st-5`);
    assert.equal(await signedIn(browser), false);
  });

  test('openid-client buildEndSessionUrl() makes a URL that signs the person out and comes back with state', async () => {
    const c = await appWithLogout();
    const config = await client.discovery(new URL(t.baseUrl), c.client.clientId, c.secret, undefined, { execute: [client.allowInsecureRequests] });
    const { browser } = await signedInBrowser(t);
    const verifier = client.randomPKCECodeVerifier();
    const nonce = client.randomNonce();
    const state = client.randomState();
    const authorization = client.buildAuthorizationUrl(config, {
      redirect_uri: c.redirectUri, scope: 'openid profile:read', nonce, state,
      code_challenge: await client.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256',
    });
    const consent = await browser.fetch(authorization.href);
    const approved = await browser.postForm('/oauth/authorize', { ...formFields(await consent.text(), '/oauth/authorize'), decision: 'approve' });
    const tokens = await client.authorizationCodeGrant(config, new URL(approved.headers.get('location')!), {
      pkceCodeVerifier: verifier, expectedState: state, expectedNonce: nonce,
    });

    const logoutState = client.randomState();
    const url = client.buildEndSessionUrl(config, { id_token_hint: tokens.id_token!, post_logout_redirect_uri: BYE, state: logoutState });
    assert.equal(`${url.origin}${url.pathname}`, `${t.baseUrl}/oauth/logout`);
    const response = await browser.fetch(url.href);
    assert.equal(response.status, 303);
    const back = new URL(response.headers.get('location')!);
    assert.equal(`${back.origin}${back.pathname}`, BYE);
    assert.equal(back.searchParams.get('state'), logoutState);
    assert.equal(await signedIn(browser), false);
  });

  test('an id_token_hint is never written to the logs, not even when it is refused', async () => {
    const c = await appWithLogout();
    const { browser, idToken } = await signedInToApp(c);
    const altered = `${idToken.slice(0, -4)}AAAA`;
    assert.equal((await logout(browser, { id_token_hint: altered })).status, 400);
    assert.equal((await browser.postForm('/oauth/logout', { id_token_hint: idToken })).status, 303);
    assert.equal((await logout(browser, { id_token_hint: idToken })).status, 200);
    assert.ok(logLines.some((line) => line.includes('/oauth/logout?id_token_hint=[redacted]')), 'the requests are logged, redacted');
    for (const token of [idToken, altered]) {
      assert.ok(!logLines.some((line) => line.includes(token.split('.')[2]!)), 'no hint in any log line');
    }
  });
});
