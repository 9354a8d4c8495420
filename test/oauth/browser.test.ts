/** Sign-in and consent in a real headless Chromium (Debian's `chromium`, driven by playwright-core). */
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { after, before, test } from 'node:test';
import { type Browser as Chromium } from 'playwright-core';
import { launchChromium, skipWithoutChromium } from '../support/chromium.js';
import type { TestApp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';
import { PASSWORD, authorizeQuery, clientFields, codeExchangeFields, introspect, newClient, newUser, pkcePair, startOAuthApp, tokenRequest } from './helpers.js';

const ARTIFACTS = 'test-artifacts/oauth';

forEachDatabase('sign-in and consent in Chromium', (database) => {
  let t: TestApp;
  let browser: Chromium;
  /** Stands in for the third-party app: its callback answers a plain page, and keeps what was posted to it. */
  let app: Server;
  let appPort: number;
  const posted: Array<{ path: string; origin: string | undefined; body: URLSearchParams }> = [];

  before(async () => {
    t = await startOAuthApp(database);
    mkdirSync(ARTIFACTS, { recursive: true });
    app = createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8').on('data', (chunk: string) => { body += chunk; }).on('end', () => {
        if (req.method === 'POST') posted.push({ path: req.url!, origin: req.headers.origin, body: new URLSearchParams(body) });
        res.end('callback reached');
      });
    });
    await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve));
    appPort = (app.address() as { port: number }).port;
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await new Promise((resolve) => app?.close(resolve));
    await t.close();
  });

  /** A new user, a new public app whose callback is `app`'s (any port on 127.0.0.1, RFC 8252 7.3), and a new browser page. */
  async function freshFlow() {
    const user = await newUser(t);
    const c = await newClient(t, { type: 'public', redirectUris: ['http://127.0.0.1/callback'] });
    const context = await browser.newContext();
    return { user, c, redirectUri: `http://127.0.0.1:${appPort}/callback`, pkce: pkcePair(), context, page: await context.newPage() };
  }

  test('a user signs in, reads the consent page, allows, and the app gets a working code', { skip: skipWithoutChromium }, async () => {
    const { user, c, redirectUri, pkce, context, page } = await freshFlow();
    await page.goto(`${t.baseUrl}/oauth/authorize?${authorizeQuery(c, { pkce, redirectUri })}`);
    assert.equal(new URL(page.url()).pathname, '/login');
    await page.screenshot({ path: `${ARTIFACTS}/1-sign-in-${database.name}.png`, fullPage: true });
    await page.fill('#username', user.username);
    await page.fill('#password', PASSWORD);
    await Promise.all([page.waitForURL(/\/oauth\/authorize/), page.click('button[type=submit]:has-text("Sign in")')]);
    assert.ok(await page.isVisible('text=Test App'));
    assert.ok(await page.isVisible('text=Nickname, avatar, bio, membership status, level and experience points.'));
    await page.screenshot({ path: `${ARTIFACTS}/2-consent-${database.name}.png`, fullPage: true });
    const cookies = await context.cookies();
    const session = cookies.find((cookie) => cookie.name === 'svc_session');
    assert.equal(session?.httpOnly, true);
    assert.equal(session?.sameSite, 'Lax');
    await Promise.all([page.waitForURL(/127\.0\.0\.1:\d+\/callback/), page.click('button[value=approve]')]);
    const callback = new URL(page.url());
    assert.equal(callback.searchParams.get('state'), 'state-123');
    assert.equal(callback.searchParams.get('iss'), t.baseUrl);
    const response = await tokenRequest(t, codeExchangeFields(c, callback.searchParams.get('code')!, pkce, { redirect_uri: redirectUri }));
    assert.equal(response.status, 200);
    const tokens = (await response.json()) as { access_token: string };
    assert.equal((await introspect(t, c, tokens.access_token)).username, user.username);
    await context.close();
  });

  test('with response_mode=form_post the page posts the code to the app by itself, and it redeems', { skip: skipWithoutChromium }, async () => {
    const { user, c, redirectUri, pkce, context, page } = await freshFlow();
    await page.goto(`${t.baseUrl}/oauth/authorize?${authorizeQuery(c, { pkce, redirectUri, extra: { response_mode: 'form_post' } })}`);
    await page.fill('#username', user.username);
    await page.fill('#password', PASSWORD);
    await Promise.all([page.waitForURL(/\/oauth\/authorize/), page.click('button[type=submit]:has-text("Sign in")')]);
    const before = posted.length;
    await Promise.all([page.waitForURL(/127\.0\.0\.1:\d+\/callback$/), page.click('button[value=approve]')]);
    assert.equal(new URL(page.url()).search, '', 'nothing in the address');
    assert.equal(posted.length, before + 1, 'one POST reached the app');
    const { path, origin, body } = posted.at(-1)!;
    assert.equal(path, '/callback');
    assert.equal(origin, t.baseUrl, 'the app can tell the post came from the issuer');
    assert.equal(body.get('state'), 'state-123');
    assert.equal(body.get('iss'), t.baseUrl);
    const response = await tokenRequest(t, codeExchangeFields(c, body.get('code')!, pkce, { redirect_uri: redirectUri }));
    assert.equal(response.status, 200);
    await context.close();
  });

  // The consent form's approval judges prompt=login and max_age again (`decideAuthorization`), and
  // sign-in comes back without them (`fieldsAfterSignIn`): a member who does what each page asks,
  // slowly, signs in once and gets the code, pushed or not, and the id_token says when.
  test('an honest member asked for a new sign-in signs in once and gets the code, however slow, pushed or not, and when the consent page outlived max_age (OpenID Connect Core 3.1.2.1)', { skip: skipWithoutChromium }, async () => {
    const cases: Array<{ extra: Record<string, string>; step: number; consentWait?: number }> = [
      { extra: { max_age: '0' }, step: 2_000 },
      { extra: { max_age: '1' }, step: 5_000 },
      { extra: { prompt: 'login consent' }, step: 5_000 },
      { extra: { max_age: '600', scope: 'openid profile:read' }, step: 1_000, consentWait: 601_000 },
    ];
    for (const pushed of [false, true]) {
      for (const { extra, step, consentWait } of cases) {
        const what = JSON.stringify({ pushed, ...extra });
        const { user, c, redirectUri, pkce, context, page } = await freshFlow();
        const signIn = async () => {
          await page.fill('#username', user.username);
          await page.fill('#password', PASSWORD);
          await Promise.all([page.waitForURL((url) => url.pathname !== '/login'), page.click('button[type=submit]:has-text("Sign in")')]);
        };
        await page.goto(`${t.baseUrl}/login`);
        await signIn();
        t.clock.advance(120_000);
        const query = authorizeQuery(c, { pkce, redirectUri, scope: 'openid profile:read', extra });
        let start = `${t.baseUrl}/oauth/authorize?${query}`;
        if (pushed) {
          const response = await fetch(`${t.baseUrl}/api/oauth/par`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ ...Object.fromEntries(query), ...clientFields(c) }).toString() });
          assert.equal(response.status, 201, what);
          start = `${t.baseUrl}/oauth/authorize?${new URLSearchParams({ client_id: c.client.clientId, request_uri: ((await response.json()) as { request_uri: string }).request_uri })}`;
        }
        await page.goto(start);
        let signIns = 0;
        let lastSignIn = 0;
        let waited = false;
        for (let pages = 0; pages < 8 && new URL(page.url()).pathname !== '/callback'; pages++) {
          t.clock.advance(step);
          if (new URL(page.url()).pathname === '/login') {
            signIns++;
            lastSignIn = Math.floor(t.clock.now() / 1_000);
            await signIn();
          } else {
            assert.ok(await page.isVisible('button[value=approve]'), `${what}: the consent page, not ${page.url()}`);
            if (consentWait !== undefined && !waited) {
              waited = true;
              t.clock.advance(consentWait);
            }
            await Promise.all([page.waitForURL((url) => url.pathname !== '/oauth/authorize'), page.click('button[value=approve]')]);
          }
        }
        const callback = new URL(page.url());
        assert.equal(callback.pathname, '/callback', what);
        assert.equal(signIns, 1, `${what}: one sign-in`);
        const response = await tokenRequest(t, codeExchangeFields(c, callback.searchParams.get('code')!, pkce, { redirect_uri: redirectUri }));
        assert.equal(response.status, 200, what);
        const { id_token: idToken } = (await response.json()) as { id_token: string };
        const claims = JSON.parse(Buffer.from(idToken.split('.')[1]!, 'base64url').toString()) as { auth_time: number };
        assert.equal(claims.auth_time, lastSignIn, `${what}: auth_time is the sign-in asked for`);
        await context.close();
      }
    }
  });

  test('a user who denies is sent back with access_denied', { skip: skipWithoutChromium }, async () => {
    const { user, c, redirectUri, pkce, context, page } = await freshFlow();
    await page.goto(`${t.baseUrl}/oauth/authorize?${authorizeQuery(c, { pkce, redirectUri })}`);
    await page.fill('#username', user.username);
    await page.fill('#password', PASSWORD);
    await Promise.all([page.waitForURL(/\/oauth\/authorize/), page.click('button[type=submit]:has-text("Sign in")')]);
    await Promise.all([page.waitForURL(/127\.0\.0\.1:\d+\/callback/), page.click('button[value=deny]')]);
    const callback = new URL(page.url());
    assert.equal(callback.searchParams.get('error'), 'access_denied');
    assert.equal(callback.searchParams.get('code'), null);
    await context.close();
  });
});
