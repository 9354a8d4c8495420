/**
 * OAuth 2.0 Form Post Response Mode: with `response_mode=form_post` the authorization response,
 * a code or an error, reaches the redirect URI as a form the browser posts, never in its query.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { TestApp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';
import {
  type TestClient, authorizeQuery, clientFields, codeExchangeFields, consentForm, formPostAnswer, newClient, pkcePair, redirectParams,
  signedInBrowser, startOAuthApp, tokenRequest,
} from './helpers.js';

const FORM_POST = { response_mode: 'form_post' };

forEachDatabase('form_post response mode', (database) => {
  let t: TestApp;
  let app: TestClient;
  before(async () => {
    t = await startOAuthApp(database);
    app = await newClient(t, { redirectUris: ['https://app.example/callback?tenant=7'] });
  });
  after(() => t.close());

  /** The form a form_post page posts: where to, and its fields. */
  async function postedForm(response: Response): Promise<{ action: string; fields: Map<string, string> }> {
    assert.equal(response.status, 200, 'a page, not a redirect');
    assert.equal(response.headers.get('location'), null);
    assert.equal(response.headers.get('cache-control'), 'no-store');
    assert.equal(response.headers.get('referrer-policy'), 'origin', 'the app sees our origin, never a path or query');
    const page = await response.text();
    const form = formPostAnswer(page);
    assert.ok(form, 'the page holds the response form');
    assert.match(page, /<script src="\/static\/form-post.js" defer><\/script>/, 'posted as it loads');
    assert.match(page, /id="authorization-response">[\s\S]*<button type="submit">Continue<\/button>[\s\S]*<\/form>/, 'and by hand without JavaScript');
    return { action: form.action, fields: new Map(form.fields) };
  }

  test('the code, state and iss are posted to the redirect URI as hidden fields, and the code redeems once', async () => {
    const { browser } = await signedInBrowser(t);
    const pkce = pkcePair();
    const asked = await browser.fetch(`/oauth/authorize?${authorizeQuery(app, { pkce, extra: FORM_POST })}`);
    const decided = await browser.postForm('/oauth/authorize', [...consentForm(await asked.text()), ['decision', 'approve']]);
    const { action, fields } = await postedForm(decided);
    assert.equal(action, 'https://app.example/callback?tenant=7', 'the registered URI, its own query kept as it is');
    assert.deepEqual([...fields.keys()], ['code', 'state', 'iss']);
    assert.equal(fields.get('state'), 'state-123');
    assert.equal(fields.get('iss'), t.baseUrl);
    const exchange = () => tokenRequest(t, codeExchangeFields(app, fields.get('code')!, pkce));
    assert.equal((await exchange()).status, 200);
    assert.equal((await exchange()).status, 400, 'used once');
  });

  test('remembered consent answers in form_post too, and leaves out a state that was not sent', async () => {
    const { browser } = await signedInBrowser(t);
    const first = await browser.fetch(`/oauth/authorize?${authorizeQuery(app, { pkce: pkcePair() })}`);
    assert.equal(redirectParams(await browser.postForm('/oauth/authorize', [...consentForm(await first.text()), ['decision', 'approve']])).get('error'), null);
    const again = await browser.fetch(`/oauth/authorize?${authorizeQuery(app, { pkce: pkcePair(), state: null, extra: FORM_POST })}`);
    const { fields } = await postedForm(again);
    assert.deepEqual([...fields.keys()], ['code', 'iss']);
  });

  test('errors after the redirect URI is verified are posted too: a denial, prompt=none, a bad parameter', async () => {
    const { browser } = await signedInBrowser(t);
    const asked = await browser.fetch(`/oauth/authorize?${authorizeQuery(app, { pkce: pkcePair(), extra: FORM_POST })}`);
    const denied = await postedForm(await browser.postForm('/oauth/authorize', [...consentForm(await asked.text()), ['decision', 'deny']]));
    assert.equal(denied.fields.get('error'), 'access_denied');
    assert.equal(denied.fields.get('state'), 'state-123');
    const silent = await postedForm(await browser.fetch(`/oauth/authorize?${authorizeQuery(app, { pkce: pkcePair(), extra: { ...FORM_POST, prompt: 'none' } })}`));
    assert.equal(silent.fields.get('error'), 'consent_required');
    const plain = authorizeQuery(app, { pkce: pkcePair(), extra: FORM_POST });
    plain.set('code_challenge_method', 'plain');
    const refused = await postedForm(await browser.fetch(`/oauth/authorize?${plain}`));
    assert.equal(refused.fields.get('error'), 'invalid_request');
    assert.match(refused.fields.get('error_description')!, /code_challenge_method=S256/);
    assert.equal(refused.fields.get('iss'), t.baseUrl);
  });

  test('a repeated parameter with form_post is posted too, with the state; a repeated response_mode goes back in the query', async () => {
    const { browser } = await signedInBrowser(t);
    const repeated = authorizeQuery(app, { pkce: pkcePair(), extra: FORM_POST });
    repeated.append('scope', 'profile:read');
    const posted = await postedForm(await browser.fetch(`/oauth/authorize?${repeated}`));
    assert.equal(posted.fields.get('error'), 'invalid_request');
    assert.match(posted.fields.get('error_description')!, /scope parameter is repeated/);
    assert.equal(posted.fields.get('state'), 'state-123');
    const twice = authorizeQuery(app, { pkce: pkcePair(), extra: FORM_POST });
    twice.append('response_mode', 'form_post');
    const params = redirectParams(await browser.fetch(`/oauth/authorize?${twice}`));
    assert.match(params.get('error_description')!, /response_mode parameter is repeated/);
    assert.equal(params.get('state'), 'state-123');
  });

  test('an unknown response_mode, or form_post to an app\'s own scheme, is refused in the query', async () => {
    const { browser } = await signedInBrowser(t);
    const fragment = redirectParams(await browser.fetch(`/oauth/authorize?${authorizeQuery(app, { pkce: pkcePair(), extra: { response_mode: 'fragment' } })}`));
    assert.equal(fragment.get('error'), 'invalid_request');
    assert.match(fragment.get('error_description')!, /response_mode must be query or form_post/);
    const native = await newClient(t, { type: 'public', redirectUris: ['com.example.app:/callback'] });
    const answer = await browser.fetch(`/oauth/authorize?${authorizeQuery(native, { pkce: pkcePair(), extra: FORM_POST })}`);
    assert.equal(answer.status, 302);
    assert.ok(answer.headers.get('location')!.startsWith('com.example.app:/callback?'));
    const params = redirectParams(answer);
    assert.equal(params.get('error'), 'invalid_request');
    assert.match(params.get('error_description')!, /form_post needs an https or http redirect URI/);
  });

  test('response_mode=query, or none, answers with a redirect as before', async () => {
    const { browser } = await signedInBrowser(t);
    const asked = await browser.fetch(`/oauth/authorize?${authorizeQuery(app, { pkce: pkcePair(), extra: { response_mode: 'query' } })}`);
    const params = redirectParams(await browser.postForm('/oauth/authorize', [...consentForm(await asked.text()), ['decision', 'approve']]));
    assert.ok(params.get('code'));
    assert.equal(params.get('tenant'), '7');
  });

  test('a pushed request (RFC 9126) may ask for form_post, and its answer is posted', async () => {
    const { browser } = await signedInBrowser(t);
    const pushed = await fetch(`${t.baseUrl}/api/oauth/par`, {
      method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ ...Object.fromEntries(authorizeQuery(app, { pkce: pkcePair(), extra: FORM_POST })), ...clientFields(app) }).toString(),
    });
    assert.equal(pushed.status, 201);
    const { request_uri: requestUri } = await pushed.json() as { request_uri: string };
    const asked = await browser.fetch(`/oauth/authorize?${new URLSearchParams({ client_id: app.client.clientId, request_uri: requestUri })}`);
    const { fields } = await postedForm(await browser.postForm('/oauth/authorize', [...consentForm(await asked.text()), ['decision', 'approve']]));
    assert.ok(fields.get('code'));
  });

  test('discovery lists query and form_post', async () => {
    const metadata = await (await fetch(`${t.baseUrl}/.well-known/openid-configuration`)).json() as { response_modes_supported: string[] };
    assert.deepEqual(metadata.response_modes_supported, ['query', 'form_post']);
  });
});
