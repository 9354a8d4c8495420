/**
 * Pushed authorization requests (RFC 9126) at POST /api/oauth/par, and their `request_uri` at
 * /oauth/authorize: client authentication as at the token endpoint, the authorization endpoint's
 * own checks, single use, 60 seconds, bound to the client, and the per-client requirement.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { setRequirePushedRequests } from '../../src/core/oauth/clients.js';
import type { TestApp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';
import { dpopKey, dpopProof } from '../support/dpop.js';
import {
  Browser, PASSWORD, type TestClient, authorizeQuery, clientFields, codeExchangeFields, consentForm, hiddenFields, newClient, newUser, pkcePair,
  redirectParams, signedInBrowser, startOAuthApp, tokenRequest,
} from './helpers.js';

const REQUEST_URI = /^urn:ietf:params:oauth:request_uri:[A-Za-z0-9_-]{43}$/;

forEachDatabase('pushed authorization requests (RFC 9126)', (database) => {
  let t: TestApp;
  before(async () => { t = await startOAuthApp(database); });
  after(() => t.close());

  function push(fields: Record<string, string> | Array<[string, string]>, headers: Record<string, string> = {}): Promise<Response> {
    return fetch(`${t.baseUrl}/api/oauth/par`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      body: new URLSearchParams(fields).toString(),
    });
  }

  /** Pushes the usual request of `c` (with PKCE) and returns the request_uri. */
  async function pushed(c: TestClient, pkce = pkcePair(), extra: Record<string, string> = {}): Promise<string> {
    const response = await push({ ...Object.fromEntries(authorizeQuery(c, { pkce, extra })), ...clientFields(c) });
    assert.equal(response.status, 201, await response.clone().text());
    return ((await response.json()) as { request_uri: string }).request_uri;
  }

  const openAt = (c: TestClient, requestUri: string, extra: Record<string, string> = {}) =>
    `/oauth/authorize?${new URLSearchParams({ client_id: c.client.clientId, request_uri: requestUri, ...extra })}`;

  async function errorOf(response: Response, status: number): Promise<string> {
    assert.equal(response.status, status);
    assert.equal(response.headers.get('cache-control'), 'no-store');
    const body = (await response.json()) as { error: string; error_description: string };
    assert.deepEqual(Object.keys(body).sort(), ['error', 'error_description']);
    return body.error;
  }

  /** Approves on the consent page the browser is shown, and returns the redirect's query. */
  async function approve(browser: Browser, page: Response): Promise<URLSearchParams> {
    assert.equal(page.status, 200, 'the consent page');
    return redirectParams(await browser.postForm('/oauth/authorize', [...consentForm(await page.text()), ['decision', 'approve']]));
  }

  test('a pushed request answers 201 with a single-use request_uri and expires_in 60', async () => {
    const c = await newClient(t);
    const response = await push({ ...Object.fromEntries(authorizeQuery(c, { pkce: pkcePair() })), ...clientFields(c) });
    assert.equal(response.status, 201);
    assert.equal(response.headers.get('cache-control'), 'no-store');
    const body = (await response.json()) as Record<string, unknown>;
    assert.deepEqual(Object.keys(body).sort(), ['expires_in', 'request_uri']);
    assert.match(String(body.request_uri), REQUEST_URI);
    assert.equal(body.expires_in, 60);
  });

  test('the flow completes with only client_id and request_uri, and the code is for the pushed parameters', async () => {
    const c = await newClient(t);
    const { browser } = await signedInBrowser(t);
    const pkce = pkcePair();
    const requestUri = await pushed(c, pkce);
    const params = await approve(browser, await browser.fetch(openAt(c, requestUri)));
    assert.equal(params.get('state'), 'state-123');
    assert.equal(params.get('iss'), t.baseUrl);
    const tokens = await tokenRequest(t, codeExchangeFields(c, params.get('code')!, pkce));
    assert.equal(tokens.status, 200);
    assert.equal(((await tokens.json()) as { scope: string }).scope, 'profile:read posts:read');
  });

  test('a repeated dpop_jkt is refused as repeated, with or without a proof of one of its values (RFC 6749 3.1, RFC 9126 2.1)', async () => {
    const c = await newClient(t);
    const key = await dpopKey();
    const other = await dpopKey();
    const parUrl = `${t.baseUrl}/api/oauth/par`;
    const base = Object.entries({ ...Object.fromEntries(authorizeQuery(c, { pkce: pkcePair() })), ...clientFields(c) });
    const repeated: Array<[string, string]> = [...base, ['dpop_jkt', key.jkt], ['dpop_jkt', other.jkt]];
    const nonce = (await push(base, { dpop: await dpopProof(key, { htu: parUrl, nowMs: t.clock.now() }) })).headers.get('dpop-nonce')!;
    for (const proof of [undefined, await dpopProof(key, { htu: parUrl, nowMs: t.clock.now(), nonce })]) {
      const response = await push(repeated, proof === undefined ? {} : { dpop: proof });
      assert.equal(response.status, 400, proof === undefined ? 'without a proof' : 'with a proof of the first value');
      assert.match(((await response.json()) as { error_description: string }).error_description, /dpop_jkt parameter is repeated/);
    }
  });

  test('a DPoP proof at the PAR endpoint binds the code to its key, as dpop_jkt does; a dpop_jkt of another key is refused, its proof not remembered (RFC 9449 10.1)', async () => {
    const c = await newClient(t);
    const key = await dpopKey();
    const other = await dpopKey();
    const parUrl = `${t.baseUrl}/api/oauth/par`;
    const pkce = pkcePair();
    const fields = { ...Object.fromEntries(authorizeQuery(c, { pkce })), ...clientFields(c) };
    const asked = await push(fields, { dpop: await dpopProof(key, { htu: parUrl, nowMs: t.clock.now() }) });
    assert.equal(await errorOf(asked, 400), 'use_dpop_nonce');
    const nonce = asked.headers.get('dpop-nonce')!;
    // Sent twice: the refused proof is not remembered, so it is refused for its key again, not as used (helper-96).
    const mismatched = await dpopProof(key, { htu: parUrl, nowMs: t.clock.now(), nonce });
    for (const attempt of ['first', 'second']) {
      const mismatch = await push({ ...fields, dpop_jkt: other.jkt }, { dpop: mismatched });
      assert.equal(mismatch.status, 400, attempt);
      assert.match(((await mismatch.json()) as { error_description: string }).error_description, /another key than the one dpop_jkt names/, attempt);
    }
    const response = await push(fields, { dpop: await dpopProof(key, { htu: parUrl, nowMs: t.clock.now(), nonce }) });
    assert.equal(response.status, 201, await response.clone().text());
    const requestUri = ((await response.json()) as { request_uri: string }).request_uri;
    const { browser } = await signedInBrowser(t);
    const code = (await approve(browser, await browser.fetch(openAt(c, requestUri)))).get('code')!;
    const redeem = codeExchangeFields(c, code, pkce);
    const tokenUrl = `${t.baseUrl}/api/oauth/token`;
    const unbound = await tokenRequest(t, redeem);
    assert.equal(await errorOf(unbound, 400), 'invalid_grant', 'the code needs a proof of the key');
    const wrongKey = await tokenRequest(t, redeem, { dpop: await dpopProof(other, { htu: tokenUrl, nowMs: t.clock.now(), nonce }) });
    assert.equal(await errorOf(wrongKey, 400), 'invalid_grant', 'and of that key only');
    const bound = await tokenRequest(t, redeem, { dpop: await dpopProof(key, { htu: tokenUrl, nowMs: t.clock.now(), nonce }) });
    assert.equal(bound.status, 200, await bound.clone().text());
    assert.equal(((await bound.json()) as { token_type: string }).token_type, 'DPoP');
  });

  test('parameters sent beside the request_uri are ignored: only the pushed ones count', async () => {
    const c = await newClient(t, { redirectUris: ['https://app.example/callback', 'https://app.example/other'] });
    const { browser } = await signedInBrowser(t);
    const requestUri = await pushed(c);
    const page = await browser.fetch(openAt(c, requestUri, { state: 'forged', redirect_uri: 'https://app.example/other', scope: 'posts:read' }));
    const fields = new Map(consentForm(await page.clone().text()));
    assert.equal(fields.get('scope'), 'profile:read posts:read');
    const answer = await browser.postForm('/oauth/authorize', [...fields, ['decision', 'approve']]);
    assert.ok(answer.headers.get('location')!.startsWith('https://app.example/callback?'));
    assert.equal(redirectParams(answer).get('state'), 'state-123');
  });

  test('the client authenticates as at the token endpoint: a wrong or missing secret is invalid_client', async () => {
    const c = await newClient(t);
    const request = Object.fromEntries(authorizeQuery(c, { pkce: pkcePair() }));
    assert.equal(await errorOf(await push({ ...request, client_secret: 'svcs_wrong' }), 401), 'invalid_client');
    assert.equal(await errorOf(await push(request), 401), 'invalid_client');
    const basic = await push(request, { authorization: `Basic ${Buffer.from(`${c.client.clientId}:wrong`).toString('base64')}` });
    assert.match(basic.headers.get('www-authenticate') ?? '', /^Basic realm=/);
    assert.equal(await errorOf(basic, 401), 'invalid_client');
  });

  test('a confidential client may authenticate with HTTP Basic and leave client_id out of the body', async () => {
    const c = await newClient(t);
    const request = Object.fromEntries(authorizeQuery(c, { pkce: pkcePair() }));
    delete request.client_id;
    const response = await push(request, { authorization: `Basic ${Buffer.from(`${c.client.clientId}:${c.secret}`).toString('base64')}` });
    assert.equal(response.status, 201);
  });

  test('a public client pushes with its client_id alone (RFC 9126 2) and completes the flow', async () => {
    const c = await newClient(t, { type: 'public', redirectUris: ['http://127.0.0.1/callback'] });
    const { browser } = await signedInBrowser(t);
    const pkce = pkcePair();
    const requestUri = await pushed(c, pkce);
    const params = await approve(browser, await browser.fetch(openAt(c, requestUri)));
    const tokens = await tokenRequest(t, codeExchangeFields(c, params.get('code')!, pkce));
    assert.equal(tokens.status, 200);
  });

  test('a pushed request passes the authorization endpoint\'s checks, answered as JSON errors', async () => {
    const c = await newClient(t);
    const publicClient = await newClient(t, { type: 'public', redirectUris: ['http://127.0.0.1/callback'] });
    const base = { ...Object.fromEntries(authorizeQuery(c, { pkce: pkcePair() })), ...clientFields(c) };
    assert.equal(await errorOf(await push({ ...base, redirect_uri: 'https://evil.example/cb' }), 400), 'invalid_request');
    assert.equal(await errorOf(await push({ ...base, scope: 'admin' }), 400), 'invalid_scope');
    assert.equal(await errorOf(await push({ ...base, response_type: 'token' }), 400), 'unsupported_response_type');
    assert.equal(await errorOf(await push({ ...Object.fromEntries(authorizeQuery(publicClient)), client_id: publicClient.client.clientId }), 400), 'invalid_request',
      'a public client without PKCE');
    assert.equal(await errorOf(await push([...Object.entries(base), ['scope', 'openid']]), 400), 'invalid_request', 'a repeated parameter');
  });

  test('the request parameter is refused with request_not_supported, and a pushed request_uri with invalid_request', async () => {
    const c = await newClient(t);
    const base = { ...Object.fromEntries(authorizeQuery(c, { pkce: pkcePair() })), ...clientFields(c) };
    assert.equal(await errorOf(await push({ ...base, request: 'eyJhbGciOiJub25lIn0.e30.' }), 400), 'request_not_supported');
    assert.equal(await errorOf(await push({ ...base, request_uri: 'urn:ietf:params:oauth:request_uri:abc' }), 400), 'invalid_request');
  });

  test('a request_uri works once: opened again, it is an error page and no redirect', async () => {
    const c = await newClient(t);
    const { browser } = await signedInBrowser(t);
    const requestUri = await pushed(c);
    assert.equal((await browser.fetch(openAt(c, requestUri))).status, 200);
    const again = await browser.fetch(openAt(c, requestUri));
    assert.equal(again.status, 400);
    assert.equal(again.headers.get('location'), null);
    assert.match(await again.text(), /request_uri is unknown, expired, already used/);
  });

  test('a request_uri lives 60 seconds', async () => {
    const c = await newClient(t);
    const { browser } = await signedInBrowser(t);
    const late = await pushed(c);
    const inTime = await pushed(c);
    t.clock.advance(59_000);
    assert.equal((await browser.fetch(openAt(c, inTime))).status, 200);
    t.clock.advance(1_000);
    assert.equal((await browser.fetch(openAt(c, late))).status, 400);
  });

  test('a request_uri is bound to its client: another client_id gets an error page and leaves it usable', async () => {
    const c = await newClient(t);
    const other = await newClient(t);
    const { browser } = await signedInBrowser(t);
    const requestUri = await pushed(c);
    const wrong = await browser.fetch(openAt(other, requestUri));
    assert.equal(wrong.status, 400);
    assert.equal(wrong.headers.get('location'), null);
    assert.equal((await browser.fetch(openAt(c, requestUri))).status, 200);
  });

  test('a request_uri the PAR endpoint did not issue is an error page', async () => {
    const c = await newClient(t);
    const { browser } = await signedInBrowser(t);
    for (const requestUri of ['https://app.example/request.jwt', `urn:ietf:params:oauth:request_uri:${'A'.repeat(43)}`]) {
      const response = await browser.fetch(openAt(c, requestUri));
      assert.equal(response.status, 400, requestUri);
      assert.equal(response.headers.get('location'), null);
    }
  });

  test('a client that requires pushed requests is refused a request that was not pushed (RFC 9126 5)', async () => {
    const c = await newClient(t);
    await setRequirePushedRequests(t.deps.stores, t.deps.clock, c.client.clientId, true);
    const { browser } = await signedInBrowser(t);
    const params = redirectParams(await browser.fetch(`/oauth/authorize?${authorizeQuery(c, { pkce: pkcePair() })}`));
    assert.equal(params.get('error'), 'invalid_request');
    assert.match(params.get('error_description')!, /requires pushed authorization requests/);
    assert.equal(params.get('state'), 'state-123');
  });

  test('a client that requires pushed requests completes the flow through sign-in and consent with its request_uri', async () => {
    const c = await newClient(t);
    await setRequirePushedRequests(t.deps.stores, t.deps.clock, c.client.clientId, true);
    const user = await newUser(t);
    const browser = new Browser(t);
    const requestUri = await pushed(c);
    const toSignIn = await browser.fetch(openAt(c, requestUri));
    assert.equal(toSignIn.status, 302);
    const returnTo = new URL(toSignIn.headers.get('location')!, t.baseUrl).searchParams.get('return_to')!;
    const signedIn = await browser.signIn(user.username, PASSWORD, returnTo);
    assert.equal(signedIn.status, 303);
    const params = await approve(browser, await browser.fetch(signedIn.headers.get('location')!));
    assert.equal(params.get('error'), null, params.get('error_description') ?? '');
    assert.ok(params.get('code'));
  });

  test('the parameters carried on from a pushed request cannot be changed on the way', async () => {
    const c = await newClient(t);
    await setRequirePushedRequests(t.deps.stores, t.deps.clock, c.client.clientId, true);
    const { browser } = await signedInBrowser(t);
    const page = await browser.fetch(openAt(c, await pushed(c, pkcePair(), { scope: 'profile:read' })));
    const fields = consentForm(await page.text()).map(([name, value]): [string, string] => [name, name === 'scope' ? 'profile:read posts:read' : value]);
    const params = redirectParams(await browser.postForm('/oauth/authorize', [...fields, ['decision', 'approve']]));
    assert.equal(params.get('error'), 'invalid_request');
    assert.equal(params.get('code'), null);
  });

  test('a pushed request is answered once: after its code, the consent form sent again yields no other code', async () => {
    const c = await newClient(t);
    const { browser } = await signedInBrowser(t);
    const fields = consentForm(await (await browser.fetch(openAt(c, await pushed(c)))).text());
    assert.ok(redirectParams(await browser.postForm('/oauth/authorize', [...fields, ['decision', 'approve']])).get('code'));
    const again = await browser.postForm('/oauth/authorize', [...fields, ['decision', 'approve']]);
    assert.equal(again.status, 400);
    assert.equal(again.headers.get('location'), null);
    assert.match(await again.text(), /already answered/);
  });

  test('a pushed request is answered once: after an error went back to the client, its marker yields no code', async () => {
    const c = await newClient(t);
    const { browser } = await signedInBrowser(t);
    const fields = consentForm(await (await browser.fetch(openAt(c, await pushed(c)))).text());
    assert.equal(redirectParams(await browser.postForm('/oauth/authorize', [...fields, ['decision', 'deny']])).get('error'), 'access_denied');
    const approved = await browser.postForm('/oauth/authorize', [...fields, ['decision', 'approve']]);
    assert.equal(approved.status, 400);
    assert.equal(approved.headers.get('location'), null);
  });

  test('the return address of a pushed request, opened again after its code was issued, yields no other code', async () => {
    const c = await newClient(t);
    await setRequirePushedRequests(t.deps.stores, t.deps.clock, c.client.clientId, true);
    const user = await newUser(t);
    const browser = new Browser(t);
    const toSignIn = await browser.fetch(openAt(c, await pushed(c)));
    const returnTo = new URL(toSignIn.headers.get('location')!, t.baseUrl).searchParams.get('return_to')!;
    const signedIn = await browser.signIn(user.username, PASSWORD, returnTo);
    assert.ok((await approve(browser, await browser.fetch(signedIn.headers.get('location')!))).get('code'));
    // The consent is remembered now: the same address would go straight to a code.
    const again = await browser.fetch(returnTo);
    assert.equal(again.status, 400);
    assert.equal(again.headers.get('location'), null);
  });

  /** A state in Chinese, nine characters a character once encoded: the request passes 8000 characters. */
  const LONG_STATE = '帖'.repeat(900);

  /** The `return_to` of the sign-in page a browser is sent to, and that page's address. */
  function signInAddress(response: Response): { returnTo: string; login: URL } {
    assert.equal(response.status, 302, 'to sign in');
    const login = new URL(response.headers.get('location')!, t.baseUrl);
    assert.equal(login.pathname, '/login');
    assert.equal(login.searchParams.get('too_long'), null, 'not the too-long notice');
    return { returnTo: login.searchParams.get('return_to')!, login };
  }

  test('a pushed request of any length comes back from sign-in by reference, its parameters left in storage, however it asked for the sign-in (RFC 9126 1)', async () => {
    const c = await newClient(t);
    const cases: Array<Record<string, string>> = [{}, { prompt: 'login' }, { max_age: '30' }, { login_hint: 'someone-else' }, { ui_locales: 'fr zh-TW' }];
    for (const extra of cases) {
      const what = JSON.stringify(extra);
      const user = await newUser(t);
      // Nobody signed in, and signed in as another account than login_hint names or too long ago.
      const browser = 'login_hint' in extra || 'max_age' in extra ? (await signedInBrowser(t)).browser : new Browser(t);
      if ('max_age' in extra) t.clock.advance(31_000);
      const pkce = pkcePair();
      const requestUri = await pushed(c, pkce, { ...extra, state: LONG_STATE });
      const { returnTo, login } = signInAddress(await browser.fetch(openAt(c, requestUri)));
      assert.ok(returnTo.length < 300, `${what}: a short address (${returnTo.length} characters)`);
      const back = new URL(returnTo, t.baseUrl);
      assert.equal(back.pathname, '/oauth/authorize');
      assert.deepEqual([...back.searchParams.keys()].filter((k) => k !== 'ui_locales'), ['client_id', 'pushed'], `${what}: no parameter of the request`);
      if ('ui_locales' in extra) {
        assert.equal(back.searchParams.get('ui_locales'), 'zh-TW', 'the language of the sign-in pages');
        assert.match(await (await browser.fetch(login.pathname + login.search)).text(), /<html lang="zh-TW"/);
      }
      const signedIn = await browser.signIn(user.username, PASSWORD, returnTo);
      assert.equal(signedIn.status, 303, what);
      assert.equal(signedIn.headers.get('location'), returnTo);
      const params = await approve(browser, await browser.fetch(returnTo));
      assert.equal(params.get('error'), null, `${what}: ${params.get('error_description')}`);
      assert.equal(params.get('state'), LONG_STATE, `${what}: the pushed state`);
      const tokens = await tokenRequest(t, codeExchangeFields(c, params.get('code')!, pkce));
      assert.equal(tokens.status, 200, what);
      assert.equal((await browser.fetch(returnTo)).status, 400, `${what}: answered, the address yields nothing more`);
    }
  });

  test('the address sign-in returns to for a pushed request works for its own client only, and only as the service made it', async () => {
    const c = await newClient(t);
    const other = await newClient(t);
    const browser = new Browser(t);
    const { returnTo } = signInAddress(await browser.fetch(openAt(c, await pushed(c))));
    const back = new URL(returnTo, t.baseUrl);
    const marker = back.searchParams.get('pushed')!;
    const { browser: signedIn } = await signedInBrowser(t);
    for (const [what, query] of [
      ['another client_id', { client_id: other.client.clientId, pushed: marker }],
      ['no client_id', { pushed: marker }],
      ['a marker changed', { client_id: c.client.clientId, pushed: `${marker.slice(0, -2)}${marker.endsWith('AA') ? 'BB' : 'AA'}` }],
      ['a marker of another stored request', { client_id: c.client.clientId, pushed: marker.replace(/\.[^.]+\./, `.${'A'.repeat(43)}.`) }],
    ] as const) {
      const refused = await signedIn.fetch(`/oauth/authorize?${new URLSearchParams(query)}`);
      assert.equal(refused.status, 400, what);
      assert.equal(refused.headers.get('location'), null, what);
    }
    assert.equal((await signedIn.fetch(returnTo)).status, 200, 'the address itself still leads to the consent page');
  });

  test('a pushed request returned to by reference needs the sign-in it sent the browser to: its address opened without one leads to sign-in again (OpenID Connect Core 3.1.2.1)', async () => {
    const c = await newClient(t);
    for (const extra of [{ prompt: 'login' }, { max_age: '30' }, { login_hint: 'someone-else' }] as Array<Record<string, string>>) {
      const what = JSON.stringify(extra);
      const hinted = 'login_hint' in extra ? await newUser(t) : undefined;
      const { browser, user } = await signedInBrowser(t);
      t.clock.advance(31_000);
      const { returnTo } = signInAddress(await browser.fetch(openAt(c, await pushed(c, pkcePair(), hinted ? { login_hint: hinted.username } : extra))));
      // The member, or whoever holds the browser, skips the sign-in and opens the address itself.
      const skipped = await browser.fetch(returnTo);
      assert.equal(skipped.status, 302, `${what}: not the consent page`);
      assert.equal(signInAddress(skipped).returnTo, returnTo, `${what}: to sign in, and back to the same address`);
      assert.equal((await browser.signIn(user.username, PASSWORD, returnTo)).status, 303, what);
      const params = await approve(browser, await browser.fetch(returnTo));
      assert.ok(params.get('code'), `${what}: signed in since, the flow goes on`);
    }
  });

  // The consent page of a pushed request may stay open up to 30 minutes; its fields cannot lose
  // their max_age (the marker), and approving past it made a code whose auth_time the app refuses.
  test('approving a pushed request\'s consent after its max_age ran out leads to sign-in again, and to a code only after it (OpenID Connect Core 3.1.2.1)', async () => {
    const c = await newClient(t);
    const { browser, user } = await signedInBrowser(t);
    const page = await browser.fetch(openAt(c, await pushed(c, pkcePair(), { max_age: '600' })));
    assert.equal(page.status, 200, 'the consent page');
    const fields = consentForm(await page.text());
    t.clock.advance(601_000);
    const late = await browser.postForm('/oauth/authorize', [...fields, ['decision', 'approve']]);
    assert.equal(late.status, 302);
    const { returnTo } = signInAddress(late);
    // Opened without signing in: to sign in again, not to consent.
    assert.equal(signInAddress(await browser.fetch(returnTo)).returnTo, returnTo);
    assert.equal((await browser.signIn(user.username, PASSWORD, returnTo)).status, 303);
    const params = await approve(browser, await browser.fetch(returnTo));
    assert.ok(params.get('code'), params.get('error_description') ?? '');
  });

  // A return address's marker is signed over the fields as sign-in returns to them, without
  // max_age or login in prompt: posted to the consent form with those fields (which the consent
  // page had shown), it made a code under the session the address is never served to
  // (`signedInSince`), with an auth_time older than max_age (OpenID Connect Core 3.1.2.1), even
  // for an app that requires pushed requests.
  test('a return address\'s marker is not a consent form\'s: posted with the fields as sign-in returns them, it makes no code for a session older than the sign-in it asked for (OpenID Connect Core 3.1.2.1)', async () => {
    const c = await newClient(t);
    // The app that cannot check auth_time requires pushed requests (docs/oauth.md), so these fields
    // without a valid marker are refused, not served as a request that was not pushed.
    await setRequirePushedRequests(t.deps.stores, t.deps.clock, c.client.clientId, true);
    const { browser, user } = await signedInBrowser(t);
    // The return address is asked for while the session is still young enough, by a POST of a
    // browser signed out, or after max_age, by the approval, which the re-check sends to sign in.
    for (const when of ['early', 'late'] as const) {
      assert.equal((await browser.signIn(user.username)).status, 303);
      const page = await browser.fetch(openAt(c, await pushed(c, pkcePair(), { max_age: '600' })));
      assert.equal(page.status, 200, 'the consent page');
      const fields = consentForm(await page.text());
      let asked: Response;
      if (when === 'early') {
        const stranger = new Browser(t);
        const csrf = hiddenFields(await (await stranger.fetch('/login')).text()).find(([name]) => name === '_csrf')![1];
        asked = await stranger.postForm('/oauth/authorize', [...fields.filter(([name]) => name !== '_csrf'), ['_csrf', csrf], ['decision', 'approve']]);
        t.clock.advance(601_000);
      } else {
        t.clock.advance(601_000);
        asked = await browser.postForm('/oauth/authorize', [...fields, ['decision', 'approve']]);
      }
      const marker = new URL(signInAddress(asked).returnTo, t.baseUrl).searchParams.get('pushed')!;
      const posted: Array<[string, string]> = [
        ...fields.filter(([name]) => name !== 'max_age' && name !== 'pushed'), ['pushed', marker], ['decision', 'approve'],
      ];
      const sent = posted.filter(([name]) => name !== '_csrf' && name !== 'decision');
      for (const response of [await browser.fetch(`/oauth/authorize?${new URLSearchParams(sent)}`), await browser.postForm('/oauth/authorize', posted)]) {
        const location = response.headers.get('location');
        assert.ok(location === null || !new URL(location, t.baseUrl).searchParams.has('code'), `${when}: no code (${response.status} ${location})`);
      }
    }
  });

  test('a marker is accepted only as the service wrote it, its deadline without leading zeros', async () => {
    const c = await newClient(t);
    const { returnTo } = signInAddress(await new Browser(t).fetch(openAt(c, await pushed(c))));
    const back = new URL(returnTo, t.baseUrl);
    const { browser } = await signedInBrowser(t);
    back.searchParams.set('pushed', `0${back.searchParams.get('pushed')!}`);
    const refused = await browser.fetch(back.pathname + back.search);
    assert.equal(refused.status, 400);
    assert.equal(refused.headers.get('location'), null);
    assert.equal((await browser.fetch(returnTo)).status, 200, 'the marker as written');
  });

  test('of racing answers to one pushed request, exactly one gets a code', async () => {
    const c = await newClient(t);
    const { browser } = await signedInBrowser(t);
    const fields = consentForm(await (await browser.fetch(openAt(c, await pushed(c)))).text());
    const answers = await Promise.all(Array.from({ length: 5 }, () => browser.postForm('/oauth/authorize', [...fields, ['decision', 'approve']])));
    assert.deepEqual(answers.map((a) => a.status).sort(), [302, 400, 400, 400, 400]);
  });

  test('the PAR endpoint answers CORS like the token endpoint, errors and preflight included', async () => {
    const preflight = await fetch(`${t.baseUrl}/api/oauth/par`, {
      method: 'OPTIONS', headers: { origin: 'https://spa.example', 'access-control-request-method': 'POST' },
    });
    assert.equal(preflight.status, 204);
    assert.equal(preflight.headers.get('access-control-allow-origin'), '*');
    assert.match(preflight.headers.get('access-control-allow-methods') ?? '', /POST/);
    const refused = await push({ client_id: 'unknown' }, { origin: 'https://spa.example' });
    assert.equal(refused.headers.get('access-control-allow-origin'), '*');
    assert.equal(refused.headers.get('access-control-allow-credentials'), null);
    assert.equal(await errorOf(refused, 401), 'invalid_client');
  });

  test('discovery names the PAR endpoint and requires pushed requests of no client by default', async () => {
    for (const path of ['/.well-known/openid-configuration', '/.well-known/oauth-authorization-server']) {
      const metadata = (await (await fetch(`${t.baseUrl}${path}`)).json()) as Record<string, unknown>;
      assert.equal(metadata.pushed_authorization_request_endpoint, `${t.baseUrl}/api/oauth/par`);
      assert.equal(metadata.require_pushed_authorization_requests, false);
    }
  });

  test('the owner requires pushed requests on the developer settings page, and can stop requiring them', async () => {
    const { browser, user } = await signedInBrowser(t);
    const c = await newClient(t, { ownerId: user.id });
    const page = await browser.fetch(`/settings/developers/${c.client.clientId}`);
    const html = await page.text();
    assert.match(html, /Require pushed authorization requests/);
    const action = `/settings/developers/${c.client.clientId}/pushed-requests`;
    const csrf = hiddenFields(html.slice(html.indexOf(`action="${action}"`)))[0]!;
    const on = await browser.postForm(action, [csrf, ['require_pushed_authorization_requests', '1']]);
    assert.equal(on.status, 303);
    assert.equal((await t.deps.stores.clients.findById(c.client.clientId))?.requirePushedAuthorizationRequests, true);
    assert.match(await (await browser.fetch(`/settings/developers/${c.client.clientId}`)).text(), /name="require_pushed_authorization_requests" value="1" checked/);
    assert.equal((await browser.postForm(action, [csrf])).status, 303);
    assert.equal((await t.deps.stores.clients.findById(c.client.clientId))?.requirePushedAuthorizationRequests, false);
    const { browser: stranger } = await signedInBrowser(t);
    const strangerCsrf = hiddenFields(await (await stranger.fetch('/settings/developers')).text()).find(([name]) => name === '_csrf')!;
    assert.equal((await stranger.postForm(action, [strangerCsrf, ['require_pushed_authorization_requests', '1']])).status, 404);
    assert.equal((await t.deps.stores.clients.findById(c.client.clientId))?.requirePushedAuthorizationRequests, false);
  });
});
