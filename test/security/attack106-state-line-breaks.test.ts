/**
 * attack106 F6: a `state` or `nonce` with a line break came back changed. The consent page (and a
 * `form_post` answer) carries them in hidden fields, and a browser sends a form's line breaks as
 * CR LF whatever they were (HTML's form-data newline normalization): in Chromium, state `a\rb`
 * approved on the consent page reached the app as `a\r\nb`, which then refused its own sign-in
 * as a forged one (state mismatch), or a nonce that no longer matched its id_token. RFC 6749
 * A.5 takes printable ASCII alone for state; such a request is refused at once with
 * invalid_request, on the app's redirect URI, not after the member has signed in and agreed.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type TestApp, startTestApp } from '../support/app.js';
import { temporarySqliteDatabase } from '../support/databases.js';
import { Browser, authorizeQuery, newClient, newUser, pkcePair, redirectParams } from '../oauth/helpers.js';

let t: TestApp;
before(async () => { t = await startTestApp(temporarySqliteDatabase()); });
after(() => t.close());

test('a state or nonce with a line break is refused before the consent page, on the redirect URI', async () => {
  const c = await newClient(t);
  const user = await newUser(t);
  const browser = new Browser(t);
  await browser.signIn(user.username);
  for (const [name, value] of [['state', 'a\rb'], ['state', 'a\nb'], ['state', 'a\r\nb'], ['nonce', 'n\nonce']] as const) {
    const query = authorizeQuery(c, { pkce: pkcePair(), scope: 'openid profile:read', extra: { [name]: value } });
    const response = await browser.fetch(`/oauth/authorize?${query}`, { redirect: 'manual' });
    const params = redirectParams(response);
    assert.equal(params.get('error'), 'invalid_request', `${name}=${JSON.stringify(value)}`);
    assert.match(params.get('error_description') ?? '', new RegExp(name), `${name}=${JSON.stringify(value)}`);
  }
  // The refusal sends the state back unchanged in the query (seed 4.1: "returned unchanged").
  const refused = await browser.fetch(`/oauth/authorize?${authorizeQuery(c, { pkce: pkcePair(), state: 'a\rb' })}`, { redirect: 'manual' });
  assert.equal(redirectParams(refused).get('state'), 'a\rb');
  // A tab, a space and characters past ASCII come back as sent: a form changes none of them.
  for (const state of ['a\tb', ' a ', '状态😀']) {
    const response = await browser.fetch(`/oauth/authorize?${authorizeQuery(c, { pkce: pkcePair(), state })}`, { redirect: 'manual' });
    assert.equal(response.status, 200, JSON.stringify(state));
  }
});

test('RP-initiated logout: a state with a line break is refused on our page, as the confirmation form would hand it back changed', async () => {
  const bye = 'https://app.example/signed-out';
  const c = await newClient(t, { postLogoutRedirectUris: [bye] });
  const user = await newUser(t);
  const browser = new Browser(t);
  await browser.signIn(user.username);
  for (const state of ['a\rb', 'a\nb']) {
    const query = new URLSearchParams({ client_id: c.client.clientId, post_logout_redirect_uri: bye, state });
    const response = await browser.fetch(`/oauth/logout?${query}`, { redirect: 'manual' });
    assert.equal(response.status, 400, JSON.stringify(state));
    assert.doesNotMatch(await response.text(), /name="state"/);
  }
  const fine = new URLSearchParams({ client_id: c.client.clientId, post_logout_redirect_uri: bye, state: 'a\tb 状态' });
  assert.equal((await browser.fetch(`/oauth/logout?${fine}`, { redirect: 'manual' })).status, 200);
});
