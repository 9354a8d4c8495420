/** GET and POST /oauth/authorize: seed 4.1, INTERFACE sections 3, 5 and 10, over real HTTP. */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { setAccountStatus } from '../../src/core/accounts/accounts.js';
import { hashSecret } from '../../src/core/credentials/formats.js';
import { deactivateClient } from '../../src/core/oauth/clients.js';
import type { TestApp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';
import {
  Browser, type TestClient, authorizeQuery, codeExchangeFields, consentForm, newClient, newUser, obtainCode, obtainTokens, pkcePair, redirectParams,
  signedInBrowser, startOAuthApp, tokenRequest, unique,
} from './helpers.js';

forEachDatabase('authorization endpoint', (database) => {
  let t: TestApp;
  before(async () => { t = await startOAuthApp(database); });
  after(() => t.close());

  const authorize = (browser: Browser, query: URLSearchParams | string) => browser.fetch(`/oauth/authorize?${query}`);

  async function assertErrorPage(response: Response): Promise<void> {
    assert.equal(response.status, 400);
    assert.equal(response.headers.get('location'), null);
    assert.match(response.headers.get('content-type') ?? '', /text\/html/);
    await response.text();
  }

  function assertErrorRedirect(response: Response, c: TestClient, error: string, state: string | null = 'state-123'): URLSearchParams {
    const location = response.headers.get('location') ?? '';
    assert.ok(location.startsWith(`${c.redirectUri}?`), location);
    const params = redirectParams(response);
    assert.equal(params.get('error'), error);
    assert.ok(params.get('error_description'));
    assert.equal(params.get('state'), state);
    assert.equal(params.get('iss'), t.baseUrl);
    return params;
  }

  test('an unknown client_id gets an error page and no redirect', async () => {
    const { browser } = await signedInBrowser(t);
    const c = await newClient(t);
    const query = authorizeQuery(c);
    query.set('client_id', 'no-such-client');
    await assertErrorPage(await authorize(browser, query));
  });

  test('a missing client_id gets an error page and no redirect', async () => {
    const { browser } = await signedInBrowser(t);
    const query = authorizeQuery(await newClient(t));
    query.delete('client_id');
    await assertErrorPage(await authorize(browser, query));
  });

  test('a deactivated client is treated as unknown', async () => {
    const { browser } = await signedInBrowser(t);
    const c = await newClient(t);
    await deactivateClient(t.deps.stores, t.deps.clock, c.client.clientId);
    await assertErrorPage(await authorize(browser, authorizeQuery(c)));
  });

  test('a redirect_uri that is not registered exactly gets an error page and no redirect (seed 4.1 rule 1)', async () => {
    const { browser } = await signedInBrowser(t);
    const c = await newClient(t);
    for (const uri of ['https://app.example/callback/', 'https://app.example/other', 'https://APP.example/callback', 'https://evil.example/callback', 'https://app.example:444/callback', 'https://app.example/callback?x=1']) {
      await assertErrorPage(await authorize(browser, authorizeQuery(c, { redirectUri: uri })));
    }
  });

  test('a missing redirect_uri gets an error page and no redirect', async () => {
    const { browser } = await signedInBrowser(t);
    const query = authorizeQuery(await newClient(t));
    query.delete('redirect_uri');
    await assertErrorPage(await authorize(browser, query));
  });

  test('a repeated client_id or redirect_uri gets an error page and no redirect', async () => {
    const { browser } = await signedInBrowser(t);
    const c = await newClient(t);
    const query = authorizeQuery(c);
    query.append('redirect_uri', 'https://evil.example/cb');
    await assertErrorPage(await authorize(browser, query));
    const query2 = authorizeQuery(c);
    query2.append('client_id', c.client.clientId);
    await assertErrorPage(await authorize(browser, query2));
  });

  test('a loopback redirect URI matches on any port (RFC 8252 7.3)', async () => {
    const { browser } = await signedInBrowser(t);
    const c = await newClient(t, { type: 'public', redirectUris: ['http://127.0.0.1/cb'] });
    const code = await obtainCode(browser, c, { redirectUri: 'http://127.0.0.1:51234/cb', pkce: pkcePair() });
    assert.ok(code);
  });

  test('a loopback redirect URI with a port no socket can have is not registered: an error page, never a 5xx', async () => {
    const { browser } = await signedInBrowser(t);
    const c = await newClient(t, { type: 'public', redirectUris: ['http://127.0.0.1/cb'] });
    for (const port of ['65536', '99999', '0065536']) {
      await assertErrorPage(await authorize(browser, authorizeQuery(c, { redirectUri: `http://127.0.0.1:${port}/cb`, pkce: pkcePair() })));
    }
  });

  test('a loopback redirect URI on port 0, or with its port written with leading zeros, matches no registered one: an error page, no redirect (RFC 8252 7.3)', async () => {
    const { browser } = await signedInBrowser(t);
    const c = await newClient(t, { type: 'public', redirectUris: ['http://127.0.0.1/callback', 'http://[::1]/callback'] });
    for (const uri of ['http://127.0.0.1:0/callback', 'http://127.0.0.1:00080/callback', 'http://127.0.0.1:00/callback', 'http://[::1]:0/callback', 'http://[::1]:08080/callback']) {
      await assertErrorPage(await authorize(browser, authorizeQuery(c, { redirectUri: uri, pkce: pkcePair() })));
    }
    assert.ok(await obtainCode(browser, c, { redirectUri: 'http://127.0.0.1:80/callback', pkce: pkcePair() }), 'port 80 written out is a port as a browser reads it');
  });

  test('a loopback redirect URI registered with port 0 or leading zeros, before registration refused them, still matches any port (RFC 8252 7.3)', async () => {
    const { browser } = await signedInBrowser(t);
    for (const registered of ['http://127.0.0.1:0/callback', 'http://[::1]:08080/callback']) {
      const client = await t.deps.stores.clients.create({
        clientId: unique('stored'), name: 'Stored', description: '', homepageUrl: '', ownerId: null, type: 'public',
        redirectUris: [registered], allowedScopes: ['profile:read', 'posts:read'], secretHash: null, idTokenAlg: 'RS256',
      }, t.clock.now());
      const requested = registered.replace(/:0?\d*\/callback$/, ':51234/callback');
      assert.ok(await obtainCode(browser, { client, redirectUri: requested }, { redirectUri: requested, pkce: pkcePair() }), registered);
    }
  });

  test('without a session the browser is sent to sign in, and comes back to the request', async () => {
    const user = await newUser(t);
    const c = await newClient(t);
    const browser = new Browser(t);
    const query = authorizeQuery(c);
    const response = await authorize(browser, query);
    assert.equal(response.status, 302);
    const login = new URL(response.headers.get('location')!, t.baseUrl);
    assert.equal(login.pathname, '/login');
    const returnTo = login.searchParams.get('return_to')!;
    assert.equal(returnTo, `/oauth/authorize?${query}`);
    const signedIn = await browser.signIn(user.username, undefined, returnTo);
    assert.equal(signedIn.status, 303);
    assert.equal(signedIn.headers.get('location'), returnTo);
    const consent = await browser.fetch(returnTo);
    assert.equal(consent.status, 200);
    assert.ok(consentForm(await consent.text()).length > 0);
  });

  test('an authorization request sent by POST goes on as the same GET, where the session cookie comes with it (OpenID Connect Core 3.1.2.1)', async () => {
    const c = await newClient(t);
    const { browser } = await signedInBrowser(t);
    const query = authorizeQuery(c, { extra: { nonce: 'n-1' } });
    query.set('scope', 'openid profile:read');
    const posted = await browser.postForm('/oauth/authorize', [...query]);
    assert.equal(posted.status, 303);
    assert.equal(posted.headers.get('cache-control'), 'no-store');
    assert.equal(posted.headers.get('location'), `/oauth/authorize?${query}`);
    const consent = await browser.fetch(posted.headers.get('location')!);
    assert.equal(consent.status, 200);
    assert.ok(consentForm(await consent.text()).length > 0);
    const repeated = await browser.postForm('/oauth/authorize', [...query, ['client_id', c.client.clientId]]);
    await assertErrorPage(await browser.fetch(repeated.headers.get('location')!));
  });

  test('a POSTed authorization request too long to go on as a GET gets the error page, not a Location the GET could not carry', async () => {
    const c = await newClient(t);
    const { browser } = await signedInBrowser(t);
    // 3000 characters that form-encode to six each: an 18 kB query, past Node's 16 kB of headers.
    const posted = await browser.postForm('/oauth/authorize', [...authorizeQuery(c), ['ui_locales', '\u00e9'.repeat(3000)]]);
    assert.equal(posted.status, 400);
    assert.equal(posted.headers.get('location'), null);
    await assertErrorPage(posted);
  });

  test('an authorization request POSTed with fields that are not a form\'s strings gets the error page, never a 500', async () => {
    const browser = new Browser(t);
    const json = (body: string) => browser.fetch('/oauth/authorize', { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    for (const body of ['{"client_id":{"toString":1}}', '{"scope":[{"valueOf":1}]}', '[["a"]]', `${'['.repeat(5000)}${']'.repeat(5000)}`]) {
      await assertErrorPage(await json(body));
    }
    // A JSON body of strings is what a form would have said: it goes on as the GET.
    const posted = await json('{"client_id":"app","response_type":"code"}');
    assert.equal(posted.status, 303);
    assert.equal(posted.headers.get('location'), '/oauth/authorize?client_id=app&response_type=code');
  });

  test('a consent decision without its CSRF field is refused, not taken for an authorization request', async () => {
    const c = await newClient(t);
    const { browser } = await signedInBrowser(t);
    const forged = await browser.postForm('/oauth/authorize', [...authorizeQuery(c), ['decision', 'approve']]);
    assert.equal(forged.status, 403);
    assert.equal(forged.headers.get('location'), null);
  });

  test('login_hint is carried to the sign-in page and prefills the username', async () => {
    const c = await newClient(t);
    const browser = new Browser(t);
    const response = await authorize(browser, authorizeQuery(c, { extra: { login_hint: 'alice' } }));
    const login = new URL(response.headers.get('location')!, t.baseUrl);
    assert.equal(login.searchParams.get('login_hint'), 'alice');
    const page = await (await browser.fetch(login.pathname + login.search)).text();
    assert.match(page, /name="username" value="alice"/);
  });

  test('without a code_challenge a missing state is invalid_request, redirected without state', async () => {
    const { browser } = await signedInBrowser(t);
    const c = await newClient(t);
    const params = assertErrorRedirect(await authorize(browser, authorizeQuery(c, { state: null })), c, 'invalid_request', null);
    assert.match(params.get('error_description')!, /state/);
  });

  test('PKCE stands in for state: with a code_challenge a request without state is approved, and the redirect carries no state (RFC 9700 2.1.1)', async () => {
    const { browser } = await signedInBrowser(t);
    for (const c of [await newClient(t, { type: 'public' }), await newClient(t)]) {
      const pkce = pkcePair();
      const consent = await authorize(browser, authorizeQuery(c, { pkce, state: null }));
      assert.equal(consent.status, 200);
      const fields = consentForm(await consent.text());
      assert.ok(!fields.some(([name]) => name === 'state'), 'the consent form carries no state');
      const response = await browser.postForm('/oauth/authorize', [...fields, ['decision', 'approve']]);
      const location = response.headers.get('location')!;
      assert.ok(location.startsWith(`${c.redirectUri}?code=`), location);
      assert.ok(!/[?&]state=/.test(location), location);
      assert.equal(redirectParams(response).get('iss'), t.baseUrl);
      const tokens = await tokenRequest(t, codeExchangeFields(c, redirectParams(response).get('code')!, pkce));
      assert.equal(tokens.status, 200);
      // Remembered consent: the code comes at once, still without state.
      const again = await authorize(browser, authorizeQuery(c, { pkce: pkcePair(), state: null }));
      assert.ok(redirectParams(again).get('code'));
      assert.ok(!/[?&]state=/.test(again.headers.get('location')!));
    }
  });

  test('PKCE stands in for state: an error redirect without state carries none', async () => {
    const { browser } = await signedInBrowser(t);
    const c = await newClient(t, { type: 'public' });
    const page = await (await authorize(browser, authorizeQuery(c, { pkce: pkcePair(), state: null }))).text();
    const denied = await browser.postForm('/oauth/authorize', [...consentForm(page), ['decision', 'deny']]);
    assertErrorRedirect(denied, c, 'access_denied', null);
    assert.ok(!/[?&]state=/.test(denied.headers.get('location')!));
    assertErrorRedirect(await authorize(browser, authorizeQuery(c, { pkce: pkcePair(), state: null, scope: 'write' })), c, 'invalid_scope', null);
  });

  test('a missing response_type is invalid_request', async () => {
    const { browser } = await signedInBrowser(t);
    const c = await newClient(t);
    const query = authorizeQuery(c);
    query.delete('response_type');
    assertErrorRedirect(await authorize(browser, query), c, 'invalid_request');
  });

  test('a response_type other than code is unsupported_response_type', async () => {
    const { browser } = await signedInBrowser(t);
    const c = await newClient(t);
    assertErrorRedirect(await authorize(browser, authorizeQuery(c, { extra: { response_type: 'token' } })), c, 'unsupported_response_type');
  });

  test('an unknown scope is invalid_scope', async () => {
    const { browser } = await signedInBrowser(t);
    const c = await newClient(t);
    const params = assertErrorRedirect(await authorize(browser, authorizeQuery(c, { scope: 'profile:read write' })), c, 'invalid_scope');
    assert.match(params.get('error_description')!, /Unknown scope write: ask for one or more of openid, profile, offline_access, profile:read, posts:read/);
  });

  test('a missing scope is invalid_scope (RFC 6749 3.3)', async () => {
    const { browser } = await signedInBrowser(t);
    const c = await newClient(t);
    const query = authorizeQuery(c);
    query.delete('scope');
    assertErrorRedirect(await authorize(browser, query), c, 'invalid_scope');
  });

  test("a scope outside the client's allowed scopes is invalid_scope", async () => {
    const { browser } = await signedInBrowser(t);
    const client = await t.deps.stores.clients.create({
      clientId: unique('limited'), name: 'Limited', description: '', homepageUrl: '', ownerId: null, type: 'confidential',
      redirectUris: ['https://limited.example/cb'], allowedScopes: ['profile:read'], secretHash: hashSecret('s'), idTokenAlg: 'RS256',
    }, t.clock.now());
    const c = { client, redirectUri: 'https://limited.example/cb' };
    assertErrorRedirect(await authorize(browser, authorizeQuery(c, { scope: 'profile:read posts:read' })), c, 'invalid_scope');
  });

  test('a repeated parameter is invalid_request (RFC 6749 3.1)', async () => {
    const { browser } = await signedInBrowser(t);
    const c = await newClient(t);
    const query = authorizeQuery(c);
    query.append('scope', 'posts:read');
    assertErrorRedirect(await authorize(browser, query), c, 'invalid_request');
    const query2 = authorizeQuery(c);
    query2.append('state', 'other');
    assertErrorRedirect(await authorize(browser, query2), c, 'invalid_request', null);
  });

  // attack112 F4: ui_locales was read by the pages but by no check, so it escaped the limit: a
  // pushed request stored 60 kB of it, and the consent form carried 12 kB.
  test('every request parameter is held to the length limit, ui_locales too: longer is invalid_request, and a push stores nothing', async () => {
    const { browser } = await signedInBrowser(t);
    const c = await newClient(t);
    const long = 'zh-CN '.repeat(700);
    const response = await authorize(browser, authorizeQuery(c, { extra: { ui_locales: long } }));
    assertErrorRedirect(response, c, 'invalid_request');
    assert.match(redirectParams(response).get('error_description')!, /ui_locales parameter is too long/);
    const pushed = await fetch(`${t.baseUrl}/api/oauth/par`, {
      method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ ...Object.fromEntries(authorizeQuery(c)), client_secret: c.secret!, ui_locales: long }),
    });
    assert.equal(pushed.status, 400);
    assert.equal((await pushed.json()).error, 'invalid_request');
    await obtainCode(browser, c);
    assert.ok(redirectParams(await authorize(browser, authorizeQuery(c, { extra: { ui_locales: 'zh-CN en' } }))).get('code'));
  });

  test('a public client without code_challenge is invalid_request', async () => {
    const { browser } = await signedInBrowser(t);
    const c = await newClient(t, { type: 'public' });
    assertErrorRedirect(await authorize(browser, authorizeQuery(c)), c, 'invalid_request');
  });

  test('code_challenge_method=plain is refused', async () => {
    const { browser } = await signedInBrowser(t);
    const c = await newClient(t, { type: 'public' });
    const query = authorizeQuery(c, { pkce: pkcePair() });
    query.set('code_challenge_method', 'plain');
    assertErrorRedirect(await authorize(browser, query), c, 'invalid_request');
    query.delete('code_challenge_method');
    assertErrorRedirect(await authorize(browser, query), c, 'invalid_request');
  });

  test('a malformed code_challenge is invalid_request (RFC 7636 4.2)', async () => {
    const { browser } = await signedInBrowser(t);
    const c = await newClient(t, { type: 'public' });
    for (const challenge of ['short', 'a'.repeat(129), `${'a'.repeat(42)}!`]) {
      assertErrorRedirect(await authorize(browser, authorizeQuery(c, { pkce: { verifier: '', challenge } })), c, 'invalid_request');
    }
  });

  test('without a code_challenge, scope openid without nonce is invalid_request (INTERFACE section 5)', async () => {
    const { browser } = await signedInBrowser(t);
    const c = await newClient(t);
    const params = assertErrorRedirect(await authorize(browser, authorizeQuery(c, { scope: 'openid profile:read' })), c, 'invalid_request');
    assert.match(params.get('error_description')!, /nonce/);
  });

  test('PKCE stands in for nonce: with a code_challenge, scope openid without nonce is approved (OIDC Core 3.1.2.1)', async () => {
    const { browser } = await signedInBrowser(t);
    const c = await newClient(t, { type: 'public' });
    assert.ok(await obtainCode(browser, c, { scope: 'openid profile:read', pkce: pkcePair() }));
  });

  test('the consent page names the app, its owner and homepage, the redirect host and each scope', async () => {
    const owner = await newUser(t, unique('owner'));
    const { browser } = await signedInBrowser(t);
    const c = await newClient(t, { ownerId: owner.id });
    const response = await authorize(browser, authorizeQuery(c));
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('cache-control'), 'no-store');
    const page = await response.text();
    assert.match(page, /Test App/);
    assert.ok(page.includes(owner.username));
    assert.ok(page.includes('https://app.example'));
    assert.ok(page.includes('<strong>app.example</strong>'));
    assert.ok(page.includes('Nickname, avatar, bio, membership status, level and experience points.'));
    assert.ok(page.includes('The list of posts the user has published (title, excerpt, link, interaction counts).'));
    assert.ok(page.includes('keeps this access while you are not using it'), 'refresh tokens are issued anyway: the page says so without offline_access');
    assert.match(page, /<form method="post" action="\/oauth\/authorize">/);
    assert.match(page, /name="decision" value="approve"/);
    assert.match(page, /name="decision" value="deny"/);
    const fields = new Map(consentForm(page));
    assert.ok(fields.get('_csrf'));
    assert.equal(fields.get('client_id'), c.client.clientId);
    assert.equal(fields.get('redirect_uri'), c.redirectUri);
    assert.equal(fields.get('state'), 'state-123');
  });

  test('approval redirects with code, state and iss; the code is stored only as its hash', async () => {
    const { browser, user } = await signedInBrowser(t);
    const c = await newClient(t);
    const page = await (await authorize(browser, authorizeQuery(c))).text();
    const response = await browser.postForm('/oauth/authorize', [...consentForm(page), ['decision', 'approve']]);
    const params = redirectParams(response);
    assert.equal(params.get('state'), 'state-123');
    assert.equal(params.get('iss'), t.baseUrl);
    const code = params.get('code')!;
    assert.equal(Buffer.from(code, 'base64url').length, 32);
    const stored = await t.deps.stores.codes.find(hashSecret(code));
    assert.equal(stored?.userId, user.id);
    assert.equal(stored?.expiresAt, t.clock.now() + 300_000);
    assert.equal(await t.deps.stores.codes.find(code), undefined);
  });

  test('denial redirects with access_denied, state and iss', async () => {
    const { browser } = await signedInBrowser(t);
    const c = await newClient(t);
    const page = await (await authorize(browser, authorizeQuery(c))).text();
    const response = await browser.postForm('/oauth/authorize', [...consentForm(page), ['decision', 'deny']]);
    assertErrorRedirect(response, c, 'access_denied');
    assert.equal(redirectParams(response).get('code'), null);
  });

  test('a redirect URI with its own query keeps it and gets the parameters appended', async () => {
    const { browser } = await signedInBrowser(t);
    const c = await newClient(t, { redirectUris: ['https://app.example/cb?tenant=a%20b&x=1'] });
    const page = await (await authorize(browser, authorizeQuery(c))).text();
    const response = await browser.postForm('/oauth/authorize', [...consentForm(page), ['decision', 'approve']]);
    const location = response.headers.get('location')!;
    assert.ok(location.startsWith('https://app.example/cb?tenant=a%20b&x=1&code='), location);
    assert.equal(new URL(location).searchParams.get('tenant'), 'a b');
  });

  test('the consent form is re-validated: a tampered redirect_uri gets an error page', async () => {
    const { browser } = await signedInBrowser(t);
    const c = await newClient(t);
    const page = await (await authorize(browser, authorizeQuery(c))).text();
    const fields = consentForm(page).map(([k, v]): [string, string] => [k, k === 'redirect_uri' ? 'https://evil.example/cb' : v]);
    await assertErrorPage(await browser.postForm('/oauth/authorize', [...fields, ['decision', 'approve']]));
  });

  test('the consent form is re-validated: a tampered scope is invalid_scope', async () => {
    const { browser } = await signedInBrowser(t);
    const c = await newClient(t);
    const page = await (await authorize(browser, authorizeQuery(c, { scope: 'profile:read' }))).text();
    const fields = consentForm(page).map(([k, v]): [string, string] => [k, k === 'scope' ? 'profile:read admin' : v]);
    assertErrorRedirect(await browser.postForm('/oauth/authorize', [...fields, ['decision', 'approve']]), c, 'invalid_scope');
  });

  test('the consent form needs the CSRF token', async () => {
    const { browser } = await signedInBrowser(t);
    const c = await newClient(t);
    const page = await (await authorize(browser, authorizeQuery(c))).text();
    const fields = consentForm(page).filter(([k]) => k !== '_csrf');
    const response = await browser.postForm('/oauth/authorize', [...fields, ['_csrf', 'forged'], ['decision', 'approve']]);
    assert.equal(response.status, 403);
    assert.equal(response.headers.get('location'), null);
  });

  test('remembered consent skips the page for scopes already granted', async () => {
    const { browser } = await signedInBrowser(t);
    const c = await newClient(t);
    await obtainCode(browser, c);
    const again = await authorize(browser, authorizeQuery(c, { scope: 'profile:read' }));
    assert.ok(redirectParams(again).get('code'));
  });

  test('remembered consent does not survive the account leaving active: made active again, it is asked anew', async () => {
    const { browser, user } = await signedInBrowser(t);
    const c = await newClient(t);
    await obtainCode(browser, c);
    await setAccountStatus(t.deps.stores, t.deps.clock, user.id, 'suspended');
    await setAccountStatus(t.deps.stores, t.deps.clock, user.id, 'active');
    const fresh = new Browser(t);
    assert.equal((await fresh.signIn(user.username)).status, 303);
    const again = await authorize(fresh, authorizeQuery(c));
    assert.equal(again.status, 200, 'the consent page, not a code');
    assertErrorRedirect(await authorize(fresh, authorizeQuery(c, { extra: { prompt: 'none' } })), c, 'consent_required');
  });

  test('a scope beyond the remembered consent asks again', async () => {
    const { browser } = await signedInBrowser(t);
    const c = await newClient(t);
    await obtainCode(browser, c, { scope: 'profile:read' });
    const again = await authorize(browser, authorizeQuery(c, { scope: 'profile:read posts:read' }));
    assert.equal(again.status, 200);
    await again.text();
  });

  test('prompt=consent shows the page even with remembered consent', async () => {
    const { browser } = await signedInBrowser(t);
    const c = await newClient(t);
    await obtainCode(browser, c);
    const again = await authorize(browser, authorizeQuery(c, { extra: { prompt: 'consent' } }));
    assert.equal(again.status, 200);
    assert.ok(consentForm(await again.text()).some(([k, v]) => k === 'prompt' && v === 'consent'));
  });

  /** A public app whose one redirect URI was saved before registration refused it: stored as it was. */
  async function savedBeforeTheRules(redirectUri: string): Promise<TestClient> {
    const { client } = await newClient(t, { type: 'public' });
    const saved = await t.deps.stores.clients.create({ ...client, clientId: `${client.clientId.slice(0, 24)}saved000`, redirectUris: [redirectUri] }, t.clock.now());
    return { client: saved, redirectUri };
  }

  // Other spellings of a loopback address (127.1, an uncompressed ::1) are refused at registration
  // now, as a browser reads them otherwise; an app saved with one before is stored directly.
  for (const [redirectUri, savedBefore] of [['http://127.0.0.1/cb', false], ['com.example.app:/oauth/cb', false], ['http://localhost:8123/cb', false], ['http://127.1/cb', true], ['http://[0:0:0:0:0:0:0:1]/cb', true]] as const) {
    test(`a native app (public client, ${redirectUri}) is asked for consent every time, and prompt=none is consent_required (RFC 8252 8.6)`, async () => {
      const { browser } = await signedInBrowser(t);
      const c = savedBefore ? await savedBeforeTheRules(redirectUri) : await newClient(t, { type: 'public', redirectUris: [redirectUri] });
      const pkce = pkcePair();
      assert.ok(await obtainCode(browser, c, { pkce }), 'the first approval gives a code');
      const again = await authorize(browser, authorizeQuery(c, { pkce }));
      assert.equal(again.status, 200, 'the consent page again, not a code');
      assert.match(await again.text(), /action="\/oauth\/authorize"/);
      assertErrorRedirect(await authorize(browser, authorizeQuery(c, { pkce, extra: { prompt: 'none' } })), c, 'consent_required');
    });
  }

  test('a confidential client on a loopback redirect keeps its remembered consent', async () => {
    const { browser } = await signedInBrowser(t);
    const c = await newClient(t, { redirectUris: ['http://127.0.0.1/cb'] });
    await obtainCode(browser, c);
    assert.ok(redirectParams(await authorize(browser, authorizeQuery(c))).get('code'));
  });

  test('the consent page names the app a private-use scheme sends the answer to', async () => {
    const { browser } = await signedInBrowser(t);
    const c = await newClient(t, { type: 'public', redirectUris: ['com.example.app:/oauth/cb'] });
    const page = await authorize(browser, authorizeQuery(c, { pkce: pkcePair() }));
    assert.match(await page.text(), /sent to <strong>the app com\.example\.app<\/strong>/);
  });

  test('the consent page names the app, not the host, of a private-use scheme URI written with an authority', async () => {
    // RFC 8252 7.1 writes a private-use redirect with one slash; com.example.app://bank.example/cb
    // also parses, with bank.example as its host, yet only the app that claims the scheme gets it.
    const { browser } = await signedInBrowser(t);
    const c = await newClient(t, { type: 'public', redirectUris: ['com.example.app://bank.example/oauth/cb'] });
    const text = await (await authorize(browser, authorizeQuery(c, { pkce: pkcePair() }))).text();
    assert.match(text, /sent to <strong>the app com\.example\.app<\/strong>/);
    assert.doesNotMatch(text, /sent to <strong>bank\.example/);
  });

  test('prompt=none without a session is login_required', async () => {
    const c = await newClient(t);
    assertErrorRedirect(await authorize(new Browser(t), authorizeQuery(c, { extra: { prompt: 'none' } })), c, 'login_required');
  });

  test('prompt=none without consent is consent_required', async () => {
    const { browser } = await signedInBrowser(t);
    const c = await newClient(t);
    assertErrorRedirect(await authorize(browser, authorizeQuery(c, { extra: { prompt: 'none' } })), c, 'consent_required');
  });

  test('prompt=none with consent and a session gives a code', async () => {
    const { browser } = await signedInBrowser(t);
    const c = await newClient(t);
    await obtainCode(browser, c);
    assert.ok(redirectParams(await authorize(browser, authorizeQuery(c, { extra: { prompt: 'none' } }))).get('code'));
  });

  test('prompt=none when login_hint names another account is interaction_required', async () => {
    const { browser } = await signedInBrowser(t);
    const c = await newClient(t);
    await obtainCode(browser, c);
    assertErrorRedirect(await authorize(browser, authorizeQuery(c, { extra: { prompt: 'none', login_hint: 'someone-else' } })), c, 'interaction_required');
  });

  test('a login_hint that is an e-mail address is set aside: it names no account (the username is the sign-in handle), so a signed-in member gets a code, silently too, and sign-in is not filled in with it', async () => {
    const { browser } = await signedInBrowser(t);
    const c = await newClient(t);
    await obtainCode(browser, c);
    for (const login_hint of ['member@example.test', 'member＠example.test']) {
      assert.ok(redirectParams(await authorize(browser, authorizeQuery(c, { extra: { prompt: 'none', login_hint } }))).get('code'), `${login_hint}, prompt=none`);
      assert.ok(redirectParams(await authorize(browser, authorizeQuery(c, { extra: { login_hint } }))).get('code'), `${login_hint}, remembered consent`);
      const signedOut = await authorize(new Browser(t), authorizeQuery(c, { extra: { login_hint } }));
      assert.equal(new URL(signedOut.headers.get('location')!, t.baseUrl).searchParams.get('login_hint'), null, 'nothing to fill in');
    }
  });

  test('a login_hint is read as sign-in reads a typed username: one in full-width letters or with spaces around it names the member signed in, and one that can name no account (a phone number) is set aside', async () => {
    const { browser, user } = await signedInBrowser(t);
    const c = await newClient(t);
    await obtainCode(browser, c);
    const fullWidth = user.username.replace(/[!-~]/g, (ch) => String.fromCodePoint(ch.codePointAt(0)! + 0xfee0));
    for (const login_hint of [fullWidth, ` ${user.username}`, `${user.username.toUpperCase()} `, '+1 555 0100', '+8613800138000', 'user:42']) {
      assert.ok(redirectParams(await authorize(browser, authorizeQuery(c, { extra: { prompt: 'none', login_hint } }))).get('code'), `${login_hint}, prompt=none`);
      assert.ok(redirectParams(await authorize(browser, authorizeQuery(c, { extra: { login_hint } }))).get('code'), `${login_hint}, remembered consent`);
    }
    assertErrorRedirect(await authorize(browser, authorizeQuery(c, { extra: { prompt: 'none', login_hint: `ｏｔｈｅｒ-${user.username}` } })), c, 'interaction_required');
  });

  test('prompt=none combined with another value is invalid_request', async () => {
    const { browser } = await signedInBrowser(t);
    const c = await newClient(t);
    assertErrorRedirect(await authorize(browser, authorizeQuery(c, { extra: { prompt: 'none login' } })), c, 'invalid_request');
  });

  test('prompt=login makes a signed-in user sign in again, then the flow continues', async () => {
    const { browser, user } = await signedInBrowser(t);
    const c = await newClient(t);
    await obtainCode(browser, c);
    const firstAuthTime = t.clock.now();
    t.clock.advance(60_000);
    const response = await authorize(browser, authorizeQuery(c, { extra: { prompt: 'login' } }));
    const login = new URL(response.headers.get('location')!, t.baseUrl);
    assert.equal(login.pathname, '/login');
    assert.equal(login.searchParams.get('reauth'), '1');
    const returnTo = login.searchParams.get('return_to')!;
    assert.equal(new URL(returnTo, t.baseUrl).searchParams.get('prompt'), null);
    assert.match(await (await browser.fetch(login.pathname + login.search)).text(), /sign in again/);
    await browser.signIn(user.username, undefined, returnTo);
    const code = redirectParams(await browser.fetch(returnTo)).get('code')!;
    const stored = await t.deps.stores.codes.find(hashSecret(code));
    assert.equal(stored?.authTime, firstAuthTime + 60_000);
  });

  test('an expired max_age makes the user sign in again; a fresh one does not', async () => {
    const { browser } = await signedInBrowser(t);
    const c = await newClient(t);
    await obtainCode(browser, c);
    t.clock.advance(120_000);
    assert.ok(redirectParams(await authorize(browser, authorizeQuery(c, { extra: { max_age: '600' } }))).get('code'));
    const response = await authorize(browser, authorizeQuery(c, { extra: { max_age: '60' } }));
    assert.equal(new URL(response.headers.get('location')!, t.baseUrl).pathname, '/login');
    assertErrorRedirect(await authorize(browser, authorizeQuery(c, { extra: { max_age: '60', prompt: 'none' } })), c, 'login_required');
  });

  // attack112 F2: the age was floored to whole seconds, so a session 1.9 s old passed max_age=1
  // and one under a second old passed max_age=0, which the spec makes prompt=login.
  test('max_age=0 always asks to sign in again, and a session older than max_age by a fraction of a second is too old (OIDC Core 3.1.2.1)', async () => {
    const { browser } = await signedInBrowser(t);
    const c = await newClient(t);
    await obtainCode(browser, c);
    assertErrorRedirect(await authorize(browser, authorizeQuery(c, { extra: { max_age: '0', prompt: 'none' } })), c, 'login_required');
    t.clock.advance(500);
    assertErrorRedirect(await authorize(browser, authorizeQuery(c, { extra: { max_age: '0', prompt: 'none' } })), c, 'login_required');
    t.clock.advance(1_400);
    assertErrorRedirect(await authorize(browser, authorizeQuery(c, { extra: { max_age: '1', prompt: 'none' } })), c, 'login_required');
    assert.ok(redirectParams(await authorize(browser, authorizeQuery(c, { extra: { max_age: '2', prompt: 'none' } }))).get('code'));
  });

  // The id_token's auth_time is whole seconds (OIDC Core 2): judged to the millisecond from the
  // sign-in instant, a sign-in at x.900 passed max_age=10 at x+10.500, and the app, reading
  // auth_time x, found it 10.5 s old and refused the id_token.
  test('max_age is judged from the auth_time the id_token carries, in whole seconds, as the app judges it (OIDC Core 2 and 3.1.2.1)', async () => {
    t.clock.advance(1_000 - (t.clock.now() % 1_000) + 900);
    const authTime = Math.floor(t.clock.now() / 1_000);
    const { browser } = await signedInBrowser(t);
    const c = await newClient(t);
    const scope = 'openid profile:read';
    await obtainCode(browser, c, { scope, pkce: pkcePair() });
    const ask = (pkce: { verifier: string; challenge: string }) => authorize(browser, authorizeQuery(c, { scope, pkce, extra: { max_age: '10', prompt: 'none' } }));

    t.clock.advance(authTime * 1_000 + 10_000 - t.clock.now());
    const pkce = pkcePair();
    const code = redirectParams(await ask(pkce)).get('code');
    assert.ok(code, 'auth_time + 10 s: not older than max_age');
    const tokens = await (await tokenRequest(t, codeExchangeFields(c, code, pkce))).json() as { id_token: string };
    const claims = JSON.parse(Buffer.from(tokens.id_token.split('.')[1]!, 'base64url').toString()) as { auth_time: number };
    assert.equal(claims.auth_time, authTime);
    assert.ok(Math.floor(t.clock.now() / 1_000) - claims.auth_time <= 10, 'what the app computes agrees');

    t.clock.advance(1);
    assertErrorRedirect(await ask(pkcePair()), c, 'login_required');
  });

  // The return address of a request that forced sign-in drops prompt=login and max_age (attack114),
  // so whoever holds the browser can open it without signing in, as they could have edited
  // prompt=login out of the app's address before it reached us. No marker on the address changes
  // that for a request that was not pushed; what holds is the id_token's auth_time: always there,
  // and always the sign-in the code was made under, for the app to check (docs/oauth.md).
  test('after prompt=login or an expired max_age, the id_token\'s auth_time is the sign-in the code was made under: the old one when the return address is opened without signing in, the new one after it (OpenID Connect Core 2 and 3.1.2.1)', async () => {
    const { browser, user } = await signedInBrowser(t);
    let lastSignIn = Math.floor(t.clock.now() / 1_000);
    const c = await newClient(t);
    const scope = 'openid profile:read';
    await obtainCode(browser, c, { scope, pkce: pkcePair() });
    const authTimeOf = async (code: string, pkce: { verifier: string }) => {
      const tokens = await (await tokenRequest(t, codeExchangeFields(c, code, pkce))).json() as { id_token: string };
      return (JSON.parse(Buffer.from(tokens.id_token.split('.')[1]!, 'base64url').toString()) as { auth_time?: number }).auth_time;
    };
    for (const extra of [{ prompt: 'login' }, { max_age: '60' }] as Array<Record<string, string>>) {
      t.clock.advance(120_000);
      const askedAt = Math.floor(t.clock.now() / 1_000);
      const pkce = pkcePair();
      const login = new URL((await authorize(browser, authorizeQuery(c, { scope, pkce, extra }))).headers.get('location')!, t.baseUrl);
      assert.equal(login.pathname, '/login');
      const returnTo = login.searchParams.get('return_to')!;

      // Opened without the sign-in: a code, whose id_token says the sign-in is the old one.
      const skipped = await authTimeOf(redirectParams(await browser.fetch(returnTo)).get('code')!, pkce);
      assert.equal(skipped, lastSignIn, JSON.stringify(extra));
      assert.ok(skipped! < askedAt, 'the app sees no sign-in since it asked');

      // Signed in as asked: the id_token says so.
      assert.equal((await browser.signIn(user.username, undefined, returnTo)).status, 303);
      const fresh = await authTimeOf(redirectParams(await browser.fetch(returnTo)).get('code')!, pkce);
      assert.equal(fresh, Math.floor(t.clock.now() / 1_000), JSON.stringify(extra));
      assert.ok(fresh! >= askedAt);
      lastSignIn = fresh!;
    }
  });

  // The consent page may stay open: a code made when the member approves, past max_age, carried an
  // auth_time older than max_age, which the app refuses (OIDC Core 3.1.2.1: the OP must
  // re-authenticate). The approval judges the session again.
  test('approving on the consent page after max_age ran out sends the member to sign in again, not back to the app with a sign-in older than max_age (OpenID Connect Core 3.1.2.1)', async () => {
    const { browser, user } = await signedInBrowser(t);
    const c = await newClient(t);
    const page = await authorize(browser, authorizeQuery(c, { extra: { max_age: '600' } }));
    assert.equal(page.status, 200);
    const fields = consentForm(await page.text());
    t.clock.advance(601_000);
    const response = await browser.postForm('/oauth/authorize', [...fields, ['decision', 'approve']]);
    const login = new URL(response.headers.get('location')!, t.baseUrl);
    assert.equal(login.pathname, '/login');
    assert.equal(login.searchParams.get('reauth'), '1');
    const returnTo = login.searchParams.get('return_to')!;
    await browser.signIn(user.username, undefined, returnTo);
    const again = consentForm(await (await browser.fetch(returnTo)).text());
    const code = redirectParams(await browser.postForm('/oauth/authorize', [...again, ['decision', 'approve']])).get('code')!;
    assert.equal((await t.deps.stores.codes.find(hashSecret(code)))?.authTime, t.clock.now());
  });

  // The re-check guards the code's auth_time; a refusal carries none, and a member who outlived
  // max_age on the consent page was sent to sign in only to say no.
  test('denying on the consent page after max_age ran out answers access_denied at once: only an approval needs the fresh sign-in', async () => {
    const { browser } = await signedInBrowser(t);
    const c = await newClient(t);
    const page = await authorize(browser, authorizeQuery(c, { extra: { max_age: '600' } }));
    assert.equal(page.status, 200);
    const fields = consentForm(await page.text());
    t.clock.advance(601_000);
    const params = redirectParams(await browser.postForm('/oauth/authorize', [...fields, ['decision', 'deny']]));
    assert.equal(params.get('error'), 'access_denied');
    assert.equal(params.get('state'), 'state-123');
  });

  // OIDC Core 3.1.2.1: both are hints, but only id_token_hint decides whether a code is issued; a
  // login_hint naming another account sent a member signed in as the id_token's account to sign in
  // as that other one, whose sign-in was then refused, the browser's session switched for nothing.
  test('a login_hint naming another account than the id_token_hint is set aside: the id_token\'s account goes on, and sign-in is not filled in with the other', async () => {
    const c = await newClient(t);
    const { browser, user: alice } = await signedInBrowser(t);
    const bob = await newUser(t);
    const scope = 'openid profile:read';
    const { id_token: aliceHint } = await obtainTokens(t, browser, c, { scope });
    const ask = (someone: Browser) => authorize(someone, authorizeQuery(c, { pkce: pkcePair(), scope, extra: { id_token_hint: aliceHint!, login_hint: bob.username } }));

    const code = redirectParams(await ask(browser)).get('code');
    assert.ok(code, 'signed in as the id_token\'s account: a code, no sign-in');
    assert.equal((await t.deps.stores.codes.find(hashSecret(code)))?.userId, alice.id);

    const toSignIn = await ask(new Browser(t));
    const login = new URL(toSignIn.headers.get('location')!, t.baseUrl);
    assert.equal(login.pathname, '/login');
    assert.equal(login.searchParams.get('login_hint'), null, 'the sign-in page is not filled in with an account the id_token rules out');

    const bobBrowser = new Browser(t);
    await bobBrowser.signIn(bob.username);
    assertErrorRedirect(await ask(bobBrowser), c, 'login_required');
    // The same login_hint with the id_token's own account still fills it in.
    const agreed = await authorize(new Browser(t), authorizeQuery(c, { pkce: pkcePair(), scope, extra: { id_token_hint: aliceHint!, login_hint: alice.username } }));
    assert.equal(new URL(agreed.headers.get('location')!, t.baseUrl).searchParams.get('login_hint'), alice.username);
  });

  test('the consent form without a session sends the browser to sign in', async () => {
    const { browser } = await signedInBrowser(t);
    const c = await newClient(t);
    const fields = consentForm(await (await authorize(browser, authorizeQuery(c))).text());
    const stranger = new Browser(t);
    stranger.cookies.set('svc_csrf', browser.cookies.get('svc_csrf')!);
    const response = await stranger.postForm('/oauth/authorize', [...fields, ['decision', 'approve']]);
    assert.equal(new URL(response.headers.get('location')!, t.baseUrl).pathname, '/login');
  });
});
