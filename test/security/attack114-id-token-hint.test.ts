/**
 * attack114: the id_token_hint of an authorization request (OpenID Connect Core 3.1.2.1), attacked
 * after attack112 made it count.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { rotateSigningKeys } from '../../src/core/oidc/keys.js';
import { type TestApp, startTestApp } from '../support/app.js';
import { temporarySqliteDatabase } from '../support/databases.js';
import { Browser, authorizeQuery, newClient, newUser, obtainTokens, pkcePair, redirectParams } from '../oauth/helpers.js';

let t: TestApp;
before(async () => { t = await startTestApp(temporarySqliteDatabase()); });
after(() => t.close());

// F1: a hint signed by a key no longer published counted as no hint, so once a rotation took the
// key out of the JWKS (an hour after), an app's stored id_token as hint got a code for whoever had
// signed in on the browser since: attack112's bug again, for every id_token older than a rotation.
test('an id_token_hint signed by a key no longer published matches nobody signed in: login_required, whoever it claims to name', async () => {
  const c = await newClient(t);
  const scope = 'openid profile:read';
  const alice = await newUser(t);
  const aliceBrowser = new Browser(t);
  await aliceBrowser.signIn(alice.username);
  const { id_token: aliceHint } = await obtainTokens(t, aliceBrowser, c, { scope });
  const bob = await newUser(t);
  const browser = new Browser(t);
  await browser.signIn(bob.username);
  const { id_token: bobHint } = await obtainTokens(t, browser, c, { scope });

  await rotateSigningKeys(t.deps.stores, t.deps.clock, undefined, { activationSeconds: 0, retirePrevious: true });
  t.deps.keys.invalidate();
  const ask = (hint: string) => browser.fetch(`/oauth/authorize?${authorizeQuery(c, { pkce: pkcePair(), scope, extra: { prompt: 'none', id_token_hint: hint } })}`);
  // Whom such a hint names cannot be told from a forgery: a forged one naming bob must not tell
  // the app that bob is the one signed in here, so bob's own old hint is refused as well.
  const [header, , signature] = bobHint!.split('.');
  const forged = [header, Buffer.from(JSON.stringify({ iss: t.baseUrl, sub: String(bob.id), aud: c.client.clientId })).toString('base64url'), signature].join('.');
  for (const hint of [aliceHint!, bobHint!, forged]) {
    const refused = redirectParams(await ask(hint));
    assert.equal(refused.get('code'), null);
    assert.equal(refused.get('error'), 'login_required');
    assert.match(refused.get('error_description')!, /signed by a key this service no longer publishes/);
    assert.equal(refused.get('state'), 'state-123');
    assert.equal(refused.get('iss'), t.baseUrl);
  }
  // Nobody is sent to sign in for it either: whoever signed in, it would be refused.
  const signedOut = await new Browser(t).fetch(`/oauth/authorize?${authorizeQuery(c, { pkce: pkcePair(), scope, extra: { id_token_hint: aliceHint! } })}`);
  assert.equal(redirectParams(signedOut).get('error'), 'login_required');
  const { id_token: newHint } = await obtainTokens(t, browser, c, { scope });
  assert.ok(redirectParams(await ask(newHint!)).get('code'));
});
