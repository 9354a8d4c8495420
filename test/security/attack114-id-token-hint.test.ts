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

// F2: sign-in drops a return_to over 8000 characters, so a signed-out member whose request was
// that long (a hint adds 1 to 1.5 kB; a state in Chinese is nine characters a character once
// encoded) signed in and landed on the home page, never told that the app's request was lost.
test('an authorization request too long to return to after sign-in is not dropped unawares: the sign-in page tells the member to go back to the app', async () => {
  const c = await newClient(t);
  const scope = 'openid profile:read';
  const alice = await newUser(t);
  const aliceBrowser = new Browser(t);
  await aliceBrowser.signIn(alice.username);
  const { id_token: hint } = await obtainTokens(t, aliceBrowser, c, { scope });
  const query = authorizeQuery(c, { pkce: pkcePair(), scope, extra: { id_token_hint: hint!, login_hint: alice.username } });
  query.set('state', '帖'.repeat(800));

  const browser = new Browser(t);
  const toSignIn = await browser.fetch(`/oauth/authorize?${query}`);
  assert.equal(toSignIn.status, 302);
  const location = new URL(toSignIn.headers.get('location')!, t.baseUrl);
  assert.equal(location.pathname, '/login');
  assert.equal(location.searchParams.get('return_to'), null);
  const page = await browser.fetch(location.pathname + location.search);
  const text = await page.text();
  assert.match(text, /The application&#39;s request is too long for this site to take you back to it once you have signed in\. Sign in, then go back to the application and start again\./);
  assert.match(text, new RegExp(`value="${alice.username}"`));
  // A wrong password's page says it again.
  const csrf = /name="_csrf" value="([^"]+)"/.exec(text)![1]!;
  const wrong = await browser.postForm('/login', { username: alice.username, password: 'wrong password', return_to: '/', too_long: '1', _csrf: csrf });
  assert.equal(wrong.status, 401);
  assert.match(await wrong.text(), /too long for this site to take you back/);
  const zh = await new Browser(t, { 'accept-language': 'zh-CN' }).fetch(location.pathname + location.search);
  assert.match(await zh.text(), /该应用的请求太长，登录后本站无法带你回到它。请先登录，然后回到该应用重新开始。/);
});

// F3: the request sign-in returned to kept its login_hint, so a member who signed in as another
// account than the one it named (the app guessed from a shared computer's last user, say) was sent
// to sign in again after every sign-in, with no way on but the other account's password.
test('a member who signs in as another account than login_hint names goes on as that account, not back to sign-in forever', async () => {
  const c = await newClient(t);
  const alice = await newUser(t);
  const bob = await newUser(t);
  const browser = new Browser(t);
  const toSignIn = await browser.fetch(`/oauth/authorize?${authorizeQuery(c, { pkce: pkcePair(), extra: { login_hint: bob.username } })}`);
  const login = new URL(toSignIn.headers.get('location')!, t.baseUrl);
  assert.equal(login.searchParams.get('login_hint'), bob.username);
  const signedIn = await browser.signIn(alice.username, undefined, login.searchParams.get('return_to')!);
  const back = await browser.fetch(signedIn.headers.get('location')!);
  assert.equal(back.status, 200, 'the consent page, not sign-in again');
  assert.match(await back.text(), new RegExp(alice.username));
});
