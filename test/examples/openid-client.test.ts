/**
 * examples/openid-client (issue 17, "the proof"): the example runs as its README says, a person
 * signs in through the service's real pages in Chromium, and the app reads /me, refreshes,
 * revokes and signs out through the end_session_endpoint; a sign-out at the service reaches it
 * by back-channel logout, verified against the JWKS.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import type { TestApp } from '../support/app.js';
import { holdsWithin } from '../support/eventually.js';
import {
  type ExampleApp, type RunningExample, assertNoBrowserErrors, freePort, heading, launchBrowser, provesWholeFlow,
  registerExample, runExample, signIn, skipWithoutChromium, startService, watchedPage,
} from './support.js';

describe('examples/openid-client', { skip: skipWithoutChromium }, () => {
  let service: TestApp;
  let app: ExampleApp;
  let example: RunningExample;
  let browser: Browser;

  before(async () => {
    service = await startService();
    // The example's address is known before it starts: register it, then run it on that port.
    const port = await freePort();
    const url = `http://localhost:${port}`;
    app = await registerExample(service, {
      type: 'confidential', redirectUris: [`${url}/callback`], postLogoutRedirectUris: [`${url}/signed-out`],
      backchannelLogoutUri: `${url}/backchannel-logout`,
    });
    example = await runExample('openid-client', { ISSUER: service.baseUrl, CLIENT_ID: app.clientId, CLIENT_SECRET: app.clientSecret! }, port);
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await example?.stop();
    await service?.close();
  });

  test('signs in, reads /me, refreshes, revokes and signs out of the service with its defaults', async () => {
    await provesWholeFlow(browser, service, example, app, { grantedScope: 'openid profile profile:read', endsServiceSession: true });
  });

  test('a sign-out at the service reaches the app by back-channel logout', async () => {
    const watched = await watchedPage(browser);
    const { page } = watched;
    await page.goto(example.url);
    await page.getByRole('button', { name: 'Sign in with Community' }).click();
    await signIn(page, service);
    // Consent is remembered from the first test: straight back to the app.
    await heading(page, 'Signed in');

    await page.goto(`${service.baseUrl}/`);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(`${service.baseUrl}/`);
    const told = await holdsWithin(20_000, async () => {
      await page.goto(example.url);
      return (await page.getByRole('heading', { level: 1 }).innerText()) === 'openid-client example';
    });
    assert.ok(told, `the app was not signed out by the logout token:\n${example.output()}`);
    assert.match(await page.getByRole('status').innerText(), /back-channel logout/);
    assertNoBrowserErrors(watched, example);
    await page.context().close();
  });
});
