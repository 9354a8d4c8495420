/**
 * The demo app end to end, in Chromium: the demo app runs as a third-party app on a server of
 * its own, finds the service by discovery, and runs the code flow with PKCE, state and nonce;
 * the person signs in and approves on the service, and the demo app shows what the API gave it.
 * Needs the OAuth endpoints, discovery, id_tokens and the API: named `.e2e.ts` so the runner
 * skips it on the site branch; rename it to `demo-app-flow.test.ts` once those are merged.
 */
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import cookie from '@fastify/cookie';
import formbody from '@fastify/formbody';
import Fastify, { type FastifyInstance } from 'fastify';
import { type Browser, chromium } from 'playwright-core';
import { registerClient } from '../../src/core/clients.js';
import { demoApp } from '../../src/demo-app/plugin.js';
import { seedDemo } from '../../src/demo.js';
import { type TestApp, startTestApp } from '../support/app.js';
import { TestClock } from '../support/clock.js';
import { temporarySqlitePath } from '../support/databases.js';

const ARTIFACTS = 'test-artifacts/site';
const LAUNCH_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
  '--disable-component-update', '--disable-sync', '--no-first-run'];

async function freePort(): Promise<number> {
  const net = await import('node:net');
  return new Promise((resolve) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

describe('demo app end to end', () => {
  let service: TestApp;
  let thirdParty: FastifyInstance;
  let thirdPartyUrl: string;
  let browser: Browser;

  before(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    const path = temporarySqlitePath();
    // id_tokens are checked against the browser's real time, so the service's clock starts now.
    service = await startTestApp({ name: 'sqlite', target: { kind: 'sqlite', path }, url: `sqlite:${path}` }, { clock: new TestClock(Date.now()) });
    await seedDemo(service.deps.stores, service.clock, service.baseUrl);
    // The third-party app runs on a server of its own, as a real one would.
    const port = await freePort();
    thirdPartyUrl = `http://127.0.0.1:${port}`;
    const { client, secret } = await registerClient(service.deps.stores, service.clock, {
      name: 'Demo App (e2e)', type: 'confidential', redirectUris: [`${thirdPartyUrl}/demo-app/callback`], homepageUrl: `${thirdPartyUrl}/demo-app`,
    });
    thirdParty = Fastify({ logger: false });
    await thirdParty.register(cookie);
    await thirdParty.register(formbody);
    await thirdParty.register(demoApp, {
      demo: { issuer: service.baseUrl, clientId: client.clientId, clientSecret: secret!, redirectUri: `${thirdPartyUrl}/demo-app/callback` },
    });
    await thirdParty.listen({ port, host: '127.0.0.1' });
    browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', args: LAUNCH_ARGS });
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
    await page.getByLabel('Password').fill('demo-password');
    await page.getByRole('button', { name: 'Sign in' }).click();
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
});
