/**
 * The demo app end to end, in Chromium: the demo app runs as a third-party app on a server of
 * its own, finds the service by discovery, and runs the code flow with PKCE, state and nonce;
 * the person signs in and approves on the service, and the demo app shows what the API gave it.
 * It signs out through the service's end_session_endpoint, and is signed out by the service's
 * back-channel logout. Also the settings pages against the live API: a personal token and a
 * revoked app.
 */
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import cookie from '@fastify/cookie';
import formbody from '@fastify/formbody';
import Fastify, { type FastifyInstance } from 'fastify';
import { type Browser } from 'playwright-core';
import { launchChromium } from '../support/chromium.js';
import { registerClient } from '../../src/core/oauth/clients.js';
import { demoApp } from '../../src/demo-app/plugin.js';
import { seedDemo } from '../../src/demo.js';
import { type TestApp, startTestApp } from '../support/app.js';
import { TestClock } from '../support/clock.js';
import { temporarySqliteDatabase } from '../support/databases.js';
import { holdsWithin } from '../support/eventually.js';
import { freePort } from '../support/instances.js';

const ARTIFACTS = 'test-artifacts/site';

describe('demo app end to end', () => {
  let service: TestApp;
  let thirdParty: FastifyInstance;
  let thirdPartyUrl: string;
  let browser: Browser;
  let demoPassword: string;

  before(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    // id_tokens are checked against the browser's real time, so the service's clock starts now.
    service = await startTestApp(temporarySqliteDatabase(), { clock: new TestClock(Date.now()) });
    demoPassword = (await seedDemo(service.deps.stores, service.clock, { baseUrl: service.baseUrl, when: 'no demo user' }))!.password;
    // The third-party app runs on a server of its own, as a real one would.
    const port = await freePort();
    thirdPartyUrl = `http://127.0.0.1:${port}`;
    const { client, secret } = await registerClient(service.deps.stores, service.clock, {
      name: 'Demo App (e2e)', type: 'confidential', redirectUris: [`${thirdPartyUrl}/demo-app/callback`], homepageUrl: `${thirdPartyUrl}/demo-app`,
      postLogoutRedirectUris: [`${thirdPartyUrl}/demo-app/signed-out`], backchannelLogoutUri: `${thirdPartyUrl}/demo-app/backchannel-logout`,
    });
    thirdParty = Fastify({ logger: false });
    await thirdParty.register(cookie);
    await thirdParty.register(formbody);
    await thirdParty.register(demoApp, {
      demo: { issuer: service.baseUrl, clientId: client.clientId, clientSecret: secret!, redirectUri: `${thirdPartyUrl}/demo-app/callback` },
    });
    await thirdParty.listen({ port, host: '127.0.0.1' });
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await thirdParty?.close();
    await service?.close();
  });

  test('the demo app signs the demo user in and shows the profile, posts and id_token claims it read', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(`${thirdPartyUrl}/demo-app`);
    assert.match(await page.getByRole('note').innerText(), /example third-party application/);
    await page.getByRole('link', { name: 'Sign in with Community' }).click();
    await page.waitForURL(/\/login\?/);
    await page.getByLabel('Username').fill('demo');
    await page.getByLabel('Password').fill(demoPassword);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('button', { name: 'Allow' }).click();
    await page.waitForURL(`${thirdPartyUrl}/demo-app`);
    assert.equal(await page.getByRole('heading', { level: 1 }).innerText(), 'Signed in as demo');
    const profile = JSON.parse(await page.getByRole('region', { name: /Profile/ }).locator('pre').innerText()) as Record<string, unknown>;
    assert.equal(profile.username, 'demo');
    assert.equal(profile.profileUrl, `${service.baseUrl}/u/demo`);
    const posts = JSON.parse(await page.getByRole('region', { name: /Posts/ }).locator('pre').innerText()) as { items: Array<{ title: string }>; totalElements: number };
    assert.equal(posts.totalElements, 4, 'published posts only, not the draft');
    const claims = JSON.parse(await page.getByRole('region', { name: /id_token claims/ }).locator('pre').innerText()) as Record<string, unknown>;
    assert.equal(claims.iss, service.baseUrl);
    assert.equal(claims.preferred_username, 'demo');
    assert.equal(typeof claims.nonce, 'string');
    await page.screenshot({ path: `${ARTIFACTS}/demo-app-signed-in.png`, fullPage: true });

    // The profile and avatar URLs the API gave resolve on the service.
    assert.equal((await fetch(String(profile.profileUrl))).status, 200);
    assert.equal((await fetch(String(profile.avatarUrl))).status, 200);
    const user = await service.deps.stores.users.findByUsername('demo');
    const apps = await service.deps.stores.consents.listForUser(user!.id);
    assert.equal(apps.length, 1, 'the consent is remembered and listed under Authorized applications');
    await page.close();
  });

  /** Signs the demo user in through the demo app, in a new browser context; consent may be remembered. */
  async function signedInThroughDemoApp() {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(`${thirdPartyUrl}/demo-app`);
    await page.getByRole('link', { name: 'Sign in with Community' }).click();
    await page.waitForURL(/\/login\?/);
    await page.getByLabel('Username').fill('demo');
    await page.getByLabel('Password').fill(demoPassword);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.waitForURL((url) => url.href.startsWith(`${thirdPartyUrl}/demo-app`) || url.pathname === '/oauth/authorize');
    if (new URL(page.url()).pathname === '/oauth/authorize') await page.getByRole('button', { name: 'Allow' }).click();
    await page.waitForURL(`${thirdPartyUrl}/demo-app`);
    assert.equal(await page.getByRole('heading', { level: 1 }).innerText(), 'Signed in as demo');
    return page;
  }

  test('a return from signing out that the demo app did not start leaves the member signed in, and says so', async () => {
    const page = await signedInThroughDemoApp();
    const response = await page.goto(`${thirdPartyUrl}/demo-app/signed-out?state=forged`);
    assert.equal(response?.status(), 400);
    assert.equal(await page.getByRole('heading', { level: 1 }).innerText(), 'Sign-out not confirmed');
    assert.match(await page.locator('main').innerText(), /You are still signed in to the demo app\./);
    await page.goto(`${thirdPartyUrl}/demo-app`);
    assert.equal(await page.getByRole('heading', { level: 1 }).innerText(), 'Signed in as demo');
    await page.close();
  });

  test('the demo app signs out through the end_session_endpoint, and a sign-out at the service reaches it by back-channel logout', async () => {
    // RP-initiated: the demo app's "Sign out" ends its session, then the service's, and comes back with its state.
    const page = await signedInThroughDemoApp();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(`${thirdPartyUrl}/demo-app/signed-out?**`);
    assert.equal(await page.getByRole('heading', { level: 1 }).innerText(), 'Signed out');
    assert.equal(await page.getByRole('alert').count(), 0, 'the state it sent came back');
    // Reloaded, the return's state is spent: the page says what it knows, with no alarm.
    assert.equal((await page.reload())?.status(), 200);
    assert.equal(await page.getByRole('status').innerText(), 'You are not signed in to the demo app.');
    assert.equal(await page.getByRole('alert').count(), 0, 'a reload is no forged return');
    await page.goto(`${service.baseUrl}/settings/tokens`);
    assert.match(new URL(page.url()).pathname, /^\/login/, 'signed out of the service too, without being asked');
    await page.close();

    // Back-channel: signing out at the service tells the demo app, which ends its own session.
    const again = await signedInThroughDemoApp();
    await again.goto(`${service.baseUrl}/`);
    await again.getByRole('button', { name: 'Sign out' }).click();
    await again.waitForURL(`${service.baseUrl}/logout`);
    const told = await holdsWithin(20_000, async () => {
      await again.goto(`${thirdPartyUrl}/demo-app`);
      return (await again.getByRole('heading', { level: 1 }).innerText()) === 'Demo App';
    });
    assert.ok(told, 'the demo app was signed out by the logout token');
    assert.match(await again.getByRole('status').innerText(), /back-channel logout/);
    await again.screenshot({ path: `${ARTIFACTS}/demo-app-backchannel-logout.png`, fullPage: true });
    await again.reload();
    assert.equal(await again.getByRole('status').count(), 0, 'the notice is shown once');
    await again.close();
  });
});

describe('settings against the live API', () => {
  let service: TestApp;
  let browser: Browser;
  let demoPassword: string;

  before(async () => {
    service = await startTestApp(temporarySqliteDatabase(), { clock: new TestClock(Date.now()) });
    demoPassword = (await seedDemo(service.deps.stores, service.clock, { baseUrl: service.baseUrl, when: 'no demo user' }))!.password;
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await service?.close();
  });

  async function signedInPage() {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(`${service.baseUrl}/login`);
    await page.getByLabel('Username').fill('demo');
    await page.getByLabel('Password').fill(demoPassword);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.waitForURL(`${service.baseUrl}/`);
    return page;
  }

  const me = (token: string) => fetch(`${service.baseUrl}/api/open/v1/me`, { headers: { authorization: `Bearer ${token}` } });

  test('a personal token made on the settings page reads /me until it is revoked', async () => {
    const page = await signedInPage();
    await page.goto(`${service.baseUrl}/settings/tokens`);
    await page.getByLabel('Name', { exact: true }).fill('e2e');
    await page.getByLabel('Your password').fill(demoPassword);
    await page.getByRole('button', { name: 'Create token' }).click();
    const token = await page.getByLabel('Your new token').inputValue();
    const response = await me(token);
    assert.equal(response.status, 200);
    assert.equal(((await response.json()) as { username: string }).username, 'demo');
    await page.getByRole('button', { name: 'Revoke token e2e' }).click();
    await page.getByRole('button', { name: 'Revoke token', exact: true }).click();
    await page.getByRole('status').waitFor();
    assert.equal((await me(token)).status, 401);
    await page.close();
  });

  test('an app registered on the developer page completes the code flow; revoking it makes the API answer 401', async () => {
    const user = await service.deps.stores.users.findByUsername('demo');
    const page = await signedInPage();
    await page.goto(`${service.baseUrl}/settings/developers`);
    await page.getByLabel('Name', { exact: true }).fill('Revoked App');
    await page.getByLabel('Redirect URIs', { exact: true }).fill('http://127.0.0.1/cb');
    await page.getByRole('button', { name: 'Register application' }).click();
    const client = { clientId: await page.getByRole('textbox', { name: 'Client ID' }).inputValue() };
    const secret = await page.getByRole('textbox', { name: 'Client secret' }).inputValue();
    // The code flow over HTTP, by hand, as a server-side app would run it.
    const verifier = 'v'.repeat(64);
    const { createHash } = await import('node:crypto');
    const challenge = createHash('sha256').update(verifier).digest('base64url');
    const authorize = new URL(`${service.baseUrl}/oauth/authorize`);
    authorize.search = new URLSearchParams({
      response_type: 'code', client_id: client.clientId, redirect_uri: 'http://127.0.0.1/cb', scope: 'profile:read',
      state: 'state-1', code_challenge: challenge, code_challenge_method: 'S256',
    }).toString();
    let callback = '';
    await page.route('http://127.0.0.1/cb**', async (route) => {
      callback = route.request().url();
      await route.fulfill({ status: 200, body: 'ok' });
    });
    await page.goto(authorize.href);
    await page.getByRole('button', { name: 'Allow' }).click();
    await page.waitForURL(/127\.0\.0\.1\/cb/);
    const code = new URL(callback).searchParams.get('code')!;
    const tokenResponse = await fetch(`${service.baseUrl}/api/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code', code, redirect_uri: 'http://127.0.0.1/cb', client_id: client.clientId, client_secret: secret!, code_verifier: verifier,
      }),
    });
    assert.equal(tokenResponse.status, 200);
    const { access_token: accessToken } = (await tokenResponse.json()) as { access_token: string };
    assert.equal((await me(accessToken)).status, 200);

    await page.goto(`${service.baseUrl}/settings/applications`);
    const card = page.getByRole('region', { name: 'Revoked App' });
    await card.getByText('Revoke access…').click();
    await card.getByRole('button', { name: 'Revoke access for Revoked App' }).click();
    await page.getByRole('status').waitFor();
    assert.equal((await me(accessToken)).status, 401);
    assert.equal(await service.deps.stores.consents.find(user!.id, client.clientId), undefined);
    await page.close();
  });
});
