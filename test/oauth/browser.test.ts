/** Sign-in and consent in a real headless Chromium (Debian's `chromium`, driven by playwright-core). */
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { after, before, test } from 'node:test';
import { type Browser as Chromium } from 'playwright-core';
import { launchChromium, skipWithoutChromium } from '../support/chromium.js';
import type { TestApp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';
import { PASSWORD, authorizeQuery, codeExchangeFields, introspect, newClient, newUser, pkcePair, startOAuthApp, tokenRequest } from './helpers.js';

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
