/**
 * attack122: the pages of RP-Initiated Logout 1.0 (`/oauth/logout`, INTERFACE section 5) may name
 * the app that sent the person and link its homepage; `client_id` alone names any app, and anyone
 * can register one (RFC 7591) with the name and homepage they like.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import { registerClient } from '../../src/core/oauth/clients.js';
import type { TestApp } from '../support/app.js';
import { formFields } from '../support/browser-flow.js';
import { TestClock } from '../support/clock.js';
import { forEachDatabase } from '../support/databases.js';
import { Browser, type TestClient, newClient, obtainTokens, signedInBrowser, startOAuthApp } from '../oauth/helpers.js';

const LURE = 'Community Account Security';
const LURE_HOME = 'https://account-check.example/';

forEachDatabase('attack122 logout pages', (database) => {
  let t: TestApp;
  before(async () => { t = await startOAuthApp(database, { clock: new TestClock(Date.now()), env: { LOGOUT_DELIVERY_INTERVAL: '0' } }); });
  after(() => t.close());

  const logout = (browser: Browser, params: Record<string, string>) => browser.fetch(`/oauth/logout?${new URLSearchParams(params)}`);

  /** An app that registered itself (RFC 7591), named after the site, its homepage the attacker's. */
  async function lure(): Promise<TestClient> {
    const { client, secret } = await registerClient(t.deps.stores, t.deps.clock, {
      name: LURE, type: 'confidential', redirectUris: ['https://account-check.example/cb'], homepageUrl: LURE_HOME, selfRegistered: true,
    });
    return { client, secret: secret!, redirectUri: client.redirectUris[0]! };
  }

  // F1: `/oauth/logout?client_id=…` of an app anyone registered put its name and a link to its
  // homepage on this site's own page, for anyone the link was sent to, signed in or not: "You are
  // signed out · Community Account Security's homepage: https://account-check.example/".
  test('the logout pages name and link an app no one answers for only when its hint names the person signed in', async () => {
    const c = await lure();
    const stranger = new Browser(t);
    const asked: Array<Record<string, string>> = [{ client_id: c.client.clientId }, { client_id: c.client.clientId, post_logout_redirect_uri: 'https://account-check.example/bye' }];
    for (const params of asked) {
      const page = await (await logout(stranger, params)).text();
      assert.ok(!page.includes(LURE), 'the signed-out page names no app');
      assert.ok(!page.includes('href="https://account-check.example'), 'and links nowhere off the site');
    }
    const { browser } = await signedInBrowser(t);
    const question = await logout(browser, { client_id: c.client.clientId });
    assert.equal(question.status, 200);
    const questionPage = await question.text();
    assert.ok(!questionPage.includes(LURE), 'the question names no app');
    const answer = await browser.postForm('/oauth/logout', { ...formFields(questionPage, '/oauth/logout'), decision: 'logout' });
    const signedOut = await answer.text();
    assert.ok(!signedOut.includes(LURE) && !signedOut.includes('href="https://account-check.example'), 'nor the page after it');

    // The person who used the app, sent by it with its hint: it is named, its homepage linked.
    const user = await signedInBrowser(t);
    const { id_token: hint } = await obtainTokens(t, user.browser, c, { scope: 'openid profile:read', extra: { nonce: randomBytes(8).toString('hex') } });
    const named = await (await logout(user.browser, { id_token_hint: hint! })).text();
    assert.ok(named.includes(LURE));
    assert.ok(named.includes(`href="${LURE_HOME}"`));
    // An app the operator registered is named as before, by client_id alone.
    const operators = await newClient(t);
    const page = await (await logout(new Browser(t), { client_id: operators.client.clientId })).text();
    assert.ok(page.includes('href="https://app.example"'), 'the operator\'s app is linked');
  });
});
