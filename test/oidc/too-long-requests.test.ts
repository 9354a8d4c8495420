/**
 * An authorization request too long to carry through sign-in (`MAX_RETURN_TO_LENGTH`, attack114):
 * the notice that replaces its return trip keeps the request's language (OpenID Connect Core
 * 3.1.2.1 `ui_locales`) on every page it leads to, by one rule, until the reader picks another;
 * and a request whose next start after that sign-in would meet the notice again (prompt=login,
 * max_age=0 or under 600 s, a login_hint naming another account than the one signed in) is
 * answered on its redirect URI instead (OpenID Connect Core 3.1.2.6). Over real HTTP, on every database.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { TestApp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';
import {
  Browser, PASSWORD, type TestClient, authorizeQuery, consentForm, hiddenFields, newClient, newUser, pkcePair, redirectParams, signedInBrowser, startOAuthApp,
} from '../oauth/helpers.js';

/** A state in Chinese, nine characters a character once encoded: the request passes 8000 characters. */
const LONG_STATE = '帖'.repeat(900);
const NOTICE_ZH_TW = '該應用程式的請求太長，登入後本站無法帶你回到它。請先登入，然後回到該應用程式重新開始。';
const NOTICE_EN = 'too long for this site to take you back to it once you have signed in';
const SIGN_UP_NOTICE_ZH_TW = '該應用程式的請求太長，建立帳號後本站無法帶你回到它。請先建立帳號，然後回到該應用程式重新開始。';

forEachDatabase('authorization requests too long to return to', (database) => {
  let t: TestApp;
  before(async () => { t = await startOAuthApp(database); });
  after(() => t.close());

  /** The page's language, as `<html lang>` says it. */
  function pageLanguage(html: string): string | undefined {
    return /<html lang="([^"]+)"/.exec(html)?.[1];
  }

  test('the too-long notice keeps the request\'s ui_locales: on its page, after a wrong password or passkey, and on the sign-up page it links to', async () => {
    const c = await newClient(t);
    const user = await newUser(t);
    const query = authorizeQuery(c, { pkce: pkcePair(), extra: { ui_locales: 'fr zh-TW en' } });
    query.set('state', LONG_STATE);
    // An English browser: only the request asks for Chinese.
    const browser = new Browser(t, { 'accept-language': 'en' });
    const toSignIn = await browser.fetch(`/oauth/authorize?${query}`);
    assert.equal(toSignIn.status, 302);
    const notice = new URL(toSignIn.headers.get('location')!, t.baseUrl);
    assert.equal(notice.pathname, '/login');
    assert.equal(notice.searchParams.get('too_long'), '1');
    assert.equal(notice.searchParams.get('ui_locales'), 'zh-TW', 'the first supported tag alone');

    const page = await (await browser.fetch(notice.pathname + notice.search)).text();
    assert.equal(pageLanguage(page), 'zh-TW');
    assert.ok(page.includes(NOTICE_ZH_TW));

    const fields = Object.fromEntries(hiddenFields(page));
    assert.equal(fields.ui_locales, 'zh-TW');
    const wrong = await browser.postForm('/login', { ...fields, username: user.username, password: 'not the password' });
    assert.equal(wrong.status, 401);
    const wrongPage = await wrong.text();
    assert.equal(pageLanguage(wrongPage), 'zh-TW', 'a wrong password keeps the language');
    assert.ok(wrongPage.includes(NOTICE_ZH_TW));

    const passkeyForm = page.slice(page.indexOf('action="/login/passkey"'));
    const passkeyFields = Object.fromEntries(hiddenFields(passkeyForm.slice(0, passkeyForm.indexOf('</form>'))));
    const failedPasskey = await browser.postForm('/login/passkey', { ...passkeyFields, credential: '{"id":"no-such-passkey"}' });
    assert.equal(failedPasskey.status, 401);
    const passkeyPage = await failedPasskey.text();
    assert.equal(pageLanguage(passkeyPage), 'zh-TW', 'a failed passkey keeps the language');
    assert.ok(passkeyPage.includes(NOTICE_ZH_TW), 'and the notice');

    const signUpHref = /<a href="(\/signup\?[^"]*)">/.exec(page)?.[1]?.replace(/&amp;/g, '&');
    assert.ok(signUpHref);
    const signUp = new URL(signUpHref, t.baseUrl);
    assert.equal(signUp.searchParams.get('ui_locales'), 'zh-TW');
    const signUpPage = await (await browser.fetch(signUp.pathname + signUp.search)).text();
    assert.equal(pageLanguage(signUpPage), 'zh-TW', 'the sign-up page is in the request\'s language');
    assert.ok(signUpPage.includes(SIGN_UP_NOTICE_ZH_TW), 'and says the request is lost');
    const refusedSignUp = await browser.postForm('/signup', { ...Object.fromEntries(hiddenFields(signUpPage)), username: 'x', password: PASSWORD });
    assert.equal(refusedSignUp.status, 400);
    const refusedPage = await refusedSignUp.text();
    assert.equal(pageLanguage(refusedPage), 'zh-TW');
    assert.ok(refusedPage.includes(SIGN_UP_NOTICE_ZH_TW));

    // A tag no supported language answers is no language asked for: the browser's decides.
    const unsupported = await browser.fetch('/login?too_long=1&ui_locales=fr');
    assert.equal(pageLanguage(await unsupported.text()), 'en');
  });

  test('a too-long request that asks for a new sign-in at every start (prompt=login, max_age=0) is answered on the redirect URI with invalid_request, not the notice', async () => {
    const c = await newClient(t);
    const { browser } = await signedInBrowser(t);
    for (const [signedIn, extra] of [
      [browser, { prompt: 'login' }], [browser, { max_age: '0' }], [new Browser(t), { prompt: 'login' }], [new Browser(t), { max_age: '0' }],
    ] as const) {
      const query = authorizeQuery(c, { pkce: pkcePair(), extra });
      query.set('state', LONG_STATE);
      const answer = redirectParams(await signedIn.fetch(`/oauth/authorize?${query}`));
      assert.equal(answer.get('error'), 'invalid_request', JSON.stringify(extra));
      assert.match(answer.get('error_description')!, /too long to carry through sign-in/);
      assert.equal(answer.get('state'), LONG_STATE);
      assert.equal(answer.get('iss'), t.baseUrl);
    }
    // A longer max_age is passed by the sign-in the notice asks for: the notice stays.
    const query = authorizeQuery(c, { pkce: pkcePair(), extra: { max_age: '600' } });
    query.set('state', LONG_STATE);
    const toNotice = await new Browser(t).fetch(`/oauth/authorize?${query}`);
    assert.equal(toNotice.status, 302);
    assert.equal(new URL(toNotice.headers.get('location')!, t.baseUrl).searchParams.get('too_long'), '1');
  });

  /** The answer to a too-long request of `c` with `extra`, sent by `browser`. */
  function sendLong(browser: Browser, c: TestClient, extra: Record<string, string>): Promise<Response> {
    const query = authorizeQuery(c, { pkce: pkcePair(), extra });
    query.set('state', LONG_STATE);
    return browser.fetch(`/oauth/authorize?${query}`);
  }

  function assertTooLongRefusal(response: Response, what: string, reason: RegExp): void {
    const answer = redirectParams(response);
    assert.equal(answer.get('error'), 'invalid_request', what);
    assert.match(answer.get('error_description')!, /too long to carry through sign-in/, what);
    assert.match(answer.get('error_description')!, reason, what);
    assert.match(answer.get('error_description')!, /POST \/api\/oauth\/par/, `${what}: the app is told how to send it`);
    assert.equal(answer.get('state'), LONG_STATE, what);
  }

  test('a too-long request whose max_age runs out before the member, signed in at the notice, can start it again (under 600 s) is answered with invalid_request, not the notice again', async () => {
    const c = await newClient(t);
    for (const maxAge of ['1', '60', '599']) {
      assertTooLongRefusal(await sendLong(new Browser(t), c, { max_age: maxAge }), `nobody signed in, max_age=${maxAge}`, /max_age of \d+ seconds/);
    }
    // The loop as a member met it: signed in at the notice, back at the app a minute later.
    const { browser } = await signedInBrowser(t);
    t.clock.advance(61_000);
    assertTooLongRefusal(await sendLong(browser, c, { max_age: '60' }), 'a sign-in older than max_age', /max_age of 60 seconds/);
    // A session young enough is not refused: the request goes on to the consent page.
    const young = await sendLong(browser, c, { max_age: '599' });
    assert.equal(young.status, 200, 'a sign-in within max_age needs none');
    assert.ok(consentForm(await young.text()).length > 0);
  });

  // The consent form's approval past max_age sends to sign in again (`decideAuthorization`); for a
  // request too long to come back to, that is the notice, and its next start, under max_age from
  // the sign-in, met the consent page and, approved as slowly, the notice again, as at the GET.
  test('a too-long request approved after its max_age ran out, when that max_age runs out before the member can start it again (under 600 s), is answered with invalid_request, not the notice', async () => {
    const c = await newClient(t);
    const { browser } = await signedInBrowser(t);
    const page = await sendLong(browser, c, { max_age: '60' });
    assert.equal(page.status, 200, 'the consent page');
    const fields = consentForm(await page.text());
    t.clock.advance(61_000);
    assertTooLongRefusal(await browser.postForm('/oauth/authorize', [...fields, ['decision', 'approve']]), 'approved past max_age=60', /max_age of 60 seconds/);
  });

  test('a too-long request whose login_hint names another account than the one signed in at the notice is answered with invalid_request, not the notice again', async () => {
    const c = await newClient(t);
    const other = await newUser(t);
    const { browser, user } = await signedInBrowser(t);
    // The loop as a member met it: at the notice, signed in as the account they chose, back at the app.
    t.clock.advance(599_000);
    assertTooLongRefusal(await sendLong(browser, c, { login_hint: other.username }), 'another account', /login_hint names another account/);
    // The hint of the account signed in asks nothing more; nobody signed in, the notice prefills it.
    assert.equal((await sendLong(browser, c, { login_hint: user.username.toUpperCase() })).status, 200);
    const toNotice = await sendLong(new Browser(t), c, { login_hint: other.username });
    assert.equal(toNotice.status, 302);
    const notice = new URL(toNotice.headers.get('location')!, t.baseUrl);
    assert.equal(notice.searchParams.get('too_long'), '1');
    assert.equal(notice.searchParams.get('login_hint'), other.username);
    // Signed in longer ago than the notice's round trip: the notice, where the member may sign in as the hinted account.
    t.clock.advance(1_000);
    const toSwitch = await sendLong(browser, c, { login_hint: other.username });
    assert.equal(toSwitch.status, 302);
    assert.equal(new URL(toSwitch.headers.get('location')!, t.baseUrl).searchParams.get('too_long'), '1');
  });

  test('the language picker on the too-long notice wins over the language the notice carries, and the page carries the picked one on', async () => {
    const browser = new Browser(t, { 'accept-language': 'en' });
    const notice = '/login?too_long=1&ui_locales=zh-TW';
    assert.equal(pageLanguage(await (await browser.fetch(notice)).text()), 'zh-TW');
    const picked = await browser.postForm(`/language?${new URLSearchParams({ return_to: notice })}`, { lang: 'en' });
    assert.equal(picked.status, 303);
    const back = new URL(picked.headers.get('location')!, t.baseUrl);
    assert.equal(back.pathname, '/login');
    assert.equal(back.searchParams.get('too_long'), '1');
    const page = await (await browser.fetch(back.pathname + back.search)).text();
    assert.equal(pageLanguage(page), 'en', 'the picked language');
    assert.ok(page.includes(NOTICE_EN), 'the notice stays');
    assert.equal(Object.fromEntries(hiddenFields(page)).ui_locales, 'en', 'and the form carries the picked language on');
  });

  test('the language a too-long notice carries is read by one rule for the page and for its forms: a ui_locales over 200 characters asks for none', async () => {
    const browser = new Browser(t, { 'accept-language': 'en' });
    // Its second tag is supported, so only the length rule can set it aside.
    const long = `fr zh-TW ${'x'.repeat(200)}`;
    assert.ok(long.length > 200);
    const page = await (await browser.fetch(`/login?${new URLSearchParams({ too_long: '1', ui_locales: long })}`)).text();
    assert.equal(pageLanguage(page), 'en', 'the page is not in a language its forms would not carry');
    assert.equal(Object.fromEntries(hiddenFields(page)).ui_locales, undefined);
    const short = await (await browser.fetch(`/login?${new URLSearchParams({ too_long: '1', ui_locales: 'fr zh-TW' })}`)).text();
    assert.equal(pageLanguage(short), 'zh-TW');
    assert.equal(Object.fromEntries(hiddenFields(short)).ui_locales, 'zh-TW');
  });
});
