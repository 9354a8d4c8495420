/**
 * The sign-up-from-an-app journey in headless Chromium with JavaScript off (issue 18 item 6):
 * app → sign-in page → "Create one" → sign-up (first with mistakes, every one shown beside its
 * field) → consent → back at the app's redirect URI with a code that works. Screenshots under
 * test-artifacts/site/.
 */
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { type Server, createServer } from 'node:http';
import { after, before, test } from 'node:test';
import { type Browser } from 'playwright-core';
import { launchChromium, skipWithoutChromium } from '../support/chromium.js';
import { registerClient } from '../../src/core/oauth/clients.js';
import { authorizeQuery, pkcePair, tokenRequest, unique } from '../oauth/helpers.js';
import { type TestApp, startTestApp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';

const ARTIFACTS = 'test-artifacts/site';
/** `--danger` in public/style.css. */
const DANGER = 'rgb(179, 38, 30)';

forEachDatabase('sign-up from an app in Chromium', (database) => {
  let t: TestApp;
  let browser: Browser;
  /** Stands in for the app: its callback answers a plain page. */
  let app: Server;
  let appPort: number;

  before(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    t = await startTestApp(database);
    app = createServer((_request, response) => response.end('back at the app'));
    await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve));
    appPort = (app.address() as { port: number }).port;
    if (!skipWithoutChromium) browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await new Promise((resolve) => app?.close(resolve));
    await t?.close();
  });

  test('a newcomer sent by an app creates an account, approves, and the app gets a working code', { skip: skipWithoutChromium }, async () => {
    const { client } = await registerClient(t.deps.stores, t.clock, { name: 'Demo App', type: 'public', redirectUris: ['http://127.0.0.1/callback'] });
    const redirectUri = `http://127.0.0.1:${appPort}/callback`;
    const pkce = pkcePair();
    const context = await browser.newContext({ javaScriptEnabled: false, viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();

    await page.goto(`${t.baseUrl}/oauth/authorize?${authorizeQuery({ client, redirectUri }, { pkce, redirectUri })}`);
    assert.equal(new URL(page.url()).pathname, '/login');
    assert.equal(await page.getByRole('heading', { level: 1 }).innerText(), 'Sign in to continue to Demo App');

    await page.getByRole('link', { name: 'Create one' }).click();
    await page.waitForURL(/\/signup\?return_to=/);
    assert.equal(await page.getByRole('heading', { level: 1 }).innerText(), 'Create an account to continue to Demo App');

    // Two mistakes the browser's own checks let through: both are named, each beside its field,
    // and both fields are marked.
    await page.getByLabel('Username').fill('bad name!');
    await page.getByLabel('Password', { exact: true }).fill('password');
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByRole('alert').waitFor();
    for (const [id, message] of [['username', /Use 3 to 30 letters/], ['password', /most common passwords/]] as const) {
      const input = page.locator(`#${id}`);
      assert.equal(await input.getAttribute('aria-invalid'), 'true', id);
      assert.match(await page.locator(`#${id}-error`).innerText(), message);
      assert.ok(await page.locator(`#${id}-error`).isVisible());
      assert.equal(await input.evaluate((element) => getComputedStyle(element).borderTopColor), DANGER, `#${id} is highlighted`);
    }
    assert.equal(await page.getByRole('heading', { level: 1 }).innerText(), 'Create an account to continue to Demo App', 'still on the way to the app');
    await page.screenshot({ path: `${ARTIFACTS}/signup-from-app-errors-${database.name}.png`, fullPage: true });

    const username = unique('newcomer');
    await page.getByLabel('Username').fill(username);
    await page.getByLabel('Password', { exact: true }).fill('a quiet harbour at dawn');
    await Promise.all([page.waitForURL(/\/oauth\/authorize\?/), page.getByRole('button', { name: 'Create account' }).click()]);
    assert.ok(await page.getByText('Demo App').first().isVisible(), 'the consent page names the app');
    await page.screenshot({ path: `${ARTIFACTS}/signup-from-app-consent-${database.name}.png`, fullPage: true });

    await Promise.all([page.waitForURL(/127\.0\.0\.1:\d+\/callback/), page.click('button[value=approve]')]);
    const callback = new URL(page.url());
    assert.equal(`${callback.origin}${callback.pathname}`, redirectUri);
    assert.equal(callback.searchParams.get('state'), 'state-123');
    const tokens = await tokenRequest(t, {
      grant_type: 'authorization_code', code: callback.searchParams.get('code')!, redirect_uri: redirectUri,
      code_verifier: pkce.verifier, client_id: client.clientId,
    });
    assert.equal(tokens.status, 200);
    const { access_token: accessToken } = (await tokens.json()) as { access_token: string };
    const me = await fetch(`${t.baseUrl}/api/open/v1/me`, { headers: { authorization: `Bearer ${accessToken}` } });
    assert.equal(((await me.json()) as { username: string }).username, username);
    await context.close();
  });
});
