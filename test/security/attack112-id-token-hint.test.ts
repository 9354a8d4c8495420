/**
 * attack112 F1: an authorization request's `id_token_hint` was ignored. An app that asks "is the
 * person I signed in still signed in here?" sends their id_token as the hint, often with
 * prompt=none (oidc-client-ts's silent renew with includeIdTokenInSilentRenew, off by default in 3.x); with another account signed in
 * on the browser meanwhile, it got a code for that other account, silently. OpenID Connect Core
 * 3.1.2.1: when the person the hint names is not the one signed in (or signed in by the request),
 * the server SHOULD return an error such as login_required. A hint that is not one of our
 * id_tokens for that app is invalid_request.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type TestApp, startTestApp } from '../support/app.js';
import { temporarySqliteDatabase } from '../support/databases.js';
import { unsignedJwt } from '../support/jwt.js';
import { Browser, authorizeQuery, consentForm, newClient, newUser, obtainCode, obtainTokens, pkcePair, redirectParams } from '../oauth/helpers.js';

let t: TestApp;
before(async () => { t = await startTestApp(temporarySqliteDatabase()); });
after(() => t.close());

test('an id_token_hint naming another account than the one signed in gets login_required, never a code for the other account', async () => {
  const c = await newClient(t);
  const other = await newClient(t, { redirectUris: ['https://other.example/cb'] });
  const alice = await newUser(t);
  const aliceBrowser = new Browser(t);
  await aliceBrowser.signIn(alice.username);
  const { id_token: aliceHint } = await obtainTokens(t, aliceBrowser, c, { scope: 'openid profile:read' });
  const { id_token: otherAppHint } = await obtainTokens(t, aliceBrowser, other, { scope: 'openid profile:read' });

  const bob = await newUser(t);
  const browser = new Browser(t);
  await browser.signIn(bob.username);
  await obtainCode(browser, c, { pkce: pkcePair(), scope: 'openid profile:read' });
  const ask = (extra: Record<string, string>) => browser.fetch(`/oauth/authorize?${authorizeQuery(c, { pkce: pkcePair(), scope: 'openid profile:read', extra })}`);

  for (const prompt of [{ prompt: 'none' }, {}, { prompt: 'consent' }] as Array<Record<string, string>>) {
    const params = redirectParams(await ask({ ...prompt, id_token_hint: aliceHint! }));
    assert.equal(params.get('code'), null, JSON.stringify(prompt));
    assert.equal(params.get('error'), 'login_required', JSON.stringify(prompt));
    assert.equal(params.get('state'), 'state-123');
  }
  // A hint that is not ours, or was issued to another app, is refused on the redirect URI.
  for (const hint of [unsignedJwt({ iss: t.baseUrl, sub: String(bob.id), aud: c.client.clientId }), 'garbage', otherAppHint!]) {
    assert.equal(redirectParams(await ask({ id_token_hint: hint })).get('error'), 'invalid_request');
  }

  // Its own hint: a code at once with prompt=none, and the consent page carries the hint on.
  const { id_token: bobHint } = await obtainTokens(t, browser, c, { scope: 'openid profile:read' });
  assert.ok(redirectParams(await ask({ prompt: 'none', id_token_hint: bobHint! })).get('code'));
  const page = await ask({ prompt: 'consent', id_token_hint: bobHint! });
  assert.equal(page.status, 200);
  const approved = await browser.postForm('/oauth/authorize', [...consentForm(await page.text()), ['decision', 'approve']]);
  assert.ok(redirectParams(approved).get('code'));

  // Signed out: sign-in first; whoever signs in by the request is then checked against the hint.
  const fresh = new Browser(t);
  const signIn = await fresh.fetch(`/oauth/authorize?${authorizeQuery(c, { pkce: pkcePair(), scope: 'openid profile:read', extra: { id_token_hint: aliceHint! } })}`);
  assert.equal(signIn.status, 302);
  const returnTo = new URL(signIn.headers.get('location')!, t.baseUrl).searchParams.get('return_to')!;
  const signedIn = await fresh.signIn(bob.username, undefined, returnTo);
  const back = await fresh.fetch(signedIn.headers.get('location')!);
  assert.equal(redirectParams(back).get('error'), 'login_required');
});
