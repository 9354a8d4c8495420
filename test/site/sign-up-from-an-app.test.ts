/**
 * A person an app sends to sign in who creates an account instead (issue 18 item 6, INTERFACE
 * section 11): /signup carries `return_to` on to the app's consent page, only ever a path on this
 * site, and both pages name the app, from its registration alone. Over real HTTP on each database.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { deactivateClient, registerClient } from '../../src/core/oauth/clients.js';
import {
  Browser, PASSWORD, type TestClient, authorizeQuery, codeExchangeFields, consentForm, hiddenFields, pkcePair, redirectParams, tokenRequest, unique,
} from '../oauth/helpers.js';
import { type TestApp, startTestApp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';

const NEW_PASSWORD = 'a long and unusual passphrase';

/** The `href` of the last link whose text is `text` (the page's own, after the header's), unescaped. */
function linkTo(page: string, text: string): string {
  const href = [...page.matchAll(new RegExp(`<a href="([^"]*)">${text}</a>`, 'g'))].at(-1)?.[1];
  assert.ok(href !== undefined, `a link "${text}"`);
  return href.replace(/&amp;/g, '&').replace(/&#39;/g, "'").replace(/&quot;/g, '"');
}

function field(page: string, name: string): string | undefined {
  return hiddenFields(page).find(([n]) => n === name)?.[1];
}

/** The page's heading, tags removed. */
function heading(page: string): string {
  return /<h1>([\s\S]*?)<\/h1>/.exec(page)![1]!.replace(/<[^>]+>/g, '');
}

forEachDatabase('sign-up from an app', (database) => {
  let t: TestApp;
  before(async () => { t = await startTestApp(database); });
  after(() => t.close());

  async function demoApp(name = 'Demo App'): Promise<TestClient> {
    const { client } = await registerClient(t.deps.stores, t.clock, { name, type: 'public', redirectUris: ['https://demo.example/callback'] });
    return { client, redirectUri: 'https://demo.example/callback' };
  }

  /** Where the authorization endpoint sends a browser with no session: the sign-in page's return_to. */
  async function returnToOf(browser: Browser, c: TestClient, pkce: { verifier: string; challenge: string }): Promise<string> {
    const response = await browser.fetch(`/oauth/authorize?${authorizeQuery(c, { pkce })}`);
    assert.equal(response.status, 302);
    const login = new URL(response.headers.get('location')!, t.baseUrl);
    assert.equal(login.pathname, '/login');
    return login.searchParams.get('return_to')!;
  }

  test('"Create one" keeps return_to: the new account lands on the consent page, and approving gives the app its code', async () => {
    const c = await demoApp();
    const pkce = pkcePair();
    const browser = new Browser(t);
    const returnTo = await returnToOf(browser, c, pkce);

    const login = await (await browser.fetch(`/login?${new URLSearchParams({ return_to: returnTo })}`)).text();
    const signUpLink = linkTo(login, 'Create one');
    assert.equal(new URL(signUpLink, t.baseUrl).searchParams.get('return_to'), returnTo);

    const signUpPage = await browser.fetch(signUpLink);
    assert.equal(signUpPage.status, 200);
    const form = await signUpPage.text();
    assert.equal(field(form, 'return_to'), returnTo, 'the form carries return_to');
    assert.equal(new URL(linkTo(form, 'Sign in'), t.baseUrl).searchParams.get('return_to'), returnTo, 'and so does its way back to sign-in');

    const username = unique('new');
    const created = await browser.postForm('/signup', { _csrf: field(form, '_csrf')!, return_to: field(form, 'return_to')!, username, password: NEW_PASSWORD });
    assert.equal(created.status, 303);
    assert.equal(created.headers.get('location'), returnTo, 'on to the authorization request, not the profile');

    const consent = await browser.fetch(returnTo);
    assert.equal(consent.status, 200, 'the consent page');
    const page = await consent.text();
    assert.match(page, /Demo App/);
    const back = await browser.postForm('/oauth/authorize', [...consentForm(page), ['decision', 'approve']]);
    const params = redirectParams(back);
    assert.equal(new URL(back.headers.get('location')!).origin + new URL(back.headers.get('location')!).pathname, c.redirectUri);
    assert.equal(params.get('state'), 'state-123');
    const tokens = await tokenRequest(t, codeExchangeFields(c, params.get('code')!, pkce));
    assert.equal(tokens.status, 200);
    const me = await fetch(`${t.baseUrl}/api/open/v1/me`, { headers: { authorization: `Bearer ${((await tokens.json()) as { access_token: string }).access_token}` } });
    assert.equal(((await me.json()) as { username: string }).username, username, 'the token is the new account\'s');
  });

  test('a sign-up form sent back with a problem still carries return_to and names the app', async () => {
    const c = await demoApp();
    const browser = new Browser(t);
    const returnTo = await returnToOf(browser, c, pkcePair());
    const form = await (await browser.fetch(`/signup?${new URLSearchParams({ return_to: returnTo })}`)).text();
    const refused = await browser.postForm('/signup', { _csrf: field(form, '_csrf')!, return_to: returnTo, username: unique('new'), password: 'short' });
    assert.equal(refused.status, 400);
    const page = await refused.text();
    assert.equal(field(page, 'return_to'), returnTo);
    assert.equal(heading(page), 'Create an account to continue to Demo App');
  });

  test('without return_to, sign-up still lands on the new profile', async () => {
    const browser = new Browser(t);
    const form = await (await browser.fetch('/signup')).text();
    assert.equal(field(form, 'return_to'), '/');
    assert.equal(heading(form), 'Create an account');
    const username = unique('plain');
    const created = await browser.postForm('/signup', { _csrf: field(form, '_csrf')!, return_to: '/', username, password: NEW_PASSWORD });
    assert.equal(created.headers.get('location'), `/u/${username}`);
  });

  const OFF_SITE = [
    'https://evil.example/', '//evil.example/', '/\\evil.example', '\\\\evil.example', 'javascript:alert(1)', 'http:evil.example',
    'evil.example', '/\t/evil.example', '/\r\nSet-Cookie: x=1', ' //evil.example',
  ];

  test('a return_to that is not a path on this site is replaced by "/" on the sign-up and sign-in pages (no open redirect)', async () => {
    const browser = new Browser(t);
    for (const value of OFF_SITE) {
      for (const path of ['/signup', '/login']) {
        const page = await (await browser.fetch(`${path}?${new URLSearchParams({ return_to: value })}`)).text();
        assert.equal(field(page, 'return_to'), '/', `${path} ${JSON.stringify(value)}`);
      }
      const refused = await browser.postForm('/signup', { _csrf: browser.cookies.get('svc_csrf')!, return_to: value, username: unique('x'), password: 'short' });
      assert.equal(field(await refused.text(), 'return_to'), '/', `POST /signup ${JSON.stringify(value)}`);
    }
  });

  test('a new account is never sent off the site, whatever return_to the form carried', async () => {
    for (const value of ['https://evil.example/', '//evil.example/x']) {
      const browser = new Browser(t);
      const form = await (await browser.fetch('/signup')).text();
      const username = unique('safe');
      const created = await browser.postForm('/signup', { _csrf: field(form, '_csrf')!, return_to: value, username, password: NEW_PASSWORD });
      assert.equal(created.status, 303);
      assert.equal(created.headers.get('location'), `/u/${username}`, value);
    }
  });

  test('the pages name the app by its registered name, escaped, and by nothing else in the address', async () => {
    const c = await demoApp('Demo <b>App</b> & "Co"');
    const browser = new Browser(t);
    const returnTo = `${await returnToOf(browser, c, pkcePair())}&app_name=Evil+Corp&client_name=Evil`;
    for (const path of ['/login', '/signup']) {
      const page = await (await browser.fetch(`${path}?${new URLSearchParams({ return_to: returnTo })}`)).text();
      // Its first letter is Latin, its last a quotation mark: marked for the Chinese spacing fallback at its start only.
      assert.match(page, /to continue to <strong class="app-name latin-start">Demo &lt;b&gt;App&lt;\/b&gt; &amp; &quot;Co&quot;<\/strong><\/h1>/, path);
      assert.doesNotMatch(page, /<b>App/);
      assert.doesNotMatch(heading(page), /Evil/);
    }
    assert.equal(heading(await (await browser.fetch(`/login?${new URLSearchParams({ return_to: returnTo })}`)).text()),
      'Sign in to continue to Demo &lt;b&gt;App&lt;/b&gt; &amp; &quot;Co&quot;');
  });

  test('no app is named for an unknown, repeated or deactivated client, or a path other than the authorization endpoint', async () => {
    const active = await demoApp('Named App');
    const gone = await demoApp('Gone App');
    await deactivateClient(t.deps.stores, t.clock, gone.client.clientId);
    const browser = new Browser(t);
    const cases = [
      `/oauth/authorize?client_id=${'0'.repeat(32)}&response_type=code`,
      `/oauth/authorize?client_id=${active.client.clientId}&client_id=${active.client.clientId}`,
      `/oauth/authorize?client_id=${gone.client.clientId}`,
      `/settings/tokens?client_id=${active.client.clientId}`,
      `/oauth/authorize/../x?client_id=${active.client.clientId}`,
    ];
    for (const returnTo of cases) {
      for (const path of ['/login', '/signup']) {
        const page = await (await browser.fetch(`${path}?${new URLSearchParams({ return_to: returnTo })}`)).text();
        assert.doesNotMatch(page, /to continue to/, `${path} ${returnTo}`);
      }
    }
    const named = await (await browser.fetch(`/login?${new URLSearchParams({ return_to: `/oauth/authorize?client_id=${active.client.clientId}` })}`)).text();
    assert.equal(heading(named), 'Sign in to continue to Named App');
  });

  test('a failed sign-in keeps naming the app and keeps return_to', async () => {
    const c = await demoApp();
    const browser = new Browser(t);
    const returnTo = await returnToOf(browser, c, pkcePair());
    await browser.fetch('/login');
    const refused = await browser.postForm('/login', { _csrf: browser.cookies.get('svc_csrf')!, return_to: returnTo, username: 'nobody-here', password: PASSWORD });
    assert.equal(refused.status, 401);
    const page = await refused.text();
    assert.equal(heading(page), 'Sign in to continue to Demo App');
    assert.equal(field(page, 'return_to'), returnTo);
  });
});
