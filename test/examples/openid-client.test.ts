/**
 * examples/openid-client (issue 17, "the proof"): the example runs as its README says, a person
 * signs in through the service's real pages in Chromium, and the app reads /me, refreshes,
 * revokes and signs out through the end_session_endpoint; a sign-out at the service reaches it
 * by back-channel logout, verified against the JWKS.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { holdsWithin } from '../support/eventually.js';
import {
  type Started, assertNoBrowserErrors, confidentialEnv, heading, provesWholeFlow, signIn, startExample, watchedPage,
} from './support.js';
import { skipWithoutChromium } from '../support/chromium.js';

describe('examples/openid-client', { skip: skipWithoutChromium }, () => {
  let t: Started;
  before(async () => {
    t = await startExample('openid-client', {
      registration: (url) => ({
        type: 'confidential', redirectUris: [`${url}/callback`], postLogoutRedirectUris: [`${url}/signed-out`],
        backchannelLogoutUri: `${url}/backchannel-logout`,
      }),
      env: confidentialEnv,
    });
  });
  after(async () => t?.close());

  test('signs in, reads /me, refreshes, revokes and signs out of the service with its defaults', async () => {
    await provesWholeFlow(t.browser, t.service, t.example, t.app, { grantedScope: 'openid profile profile:read posts:read', endsServiceSession: true });
  });

  test('a sign-out at the service reaches the app by back-channel logout', async () => {
    const watched = await watchedPage(t.browser);
    const { page } = watched;
    await page.goto(t.example.url);
    await page.getByRole('button', { name: 'Sign in with Community' }).click();
    await signIn(page, t.service);
    // Consent is remembered from the first test: straight back to the app.
    await heading(page, 'Signed in');

    await page.goto(`${t.service.baseUrl}/`);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(`${t.service.baseUrl}/logout`);
    const told = await holdsWithin(20_000, async () => {
      await page.goto(t.example.url);
      return (await page.getByRole('heading', { level: 1 }).innerText()) === 'openid-client example';
    });
    assert.ok(told, `the app was not signed out by the logout token:\n${t.example.output()}`);
    assert.match(await page.getByRole('status').innerText(), /back-channel logout/);
    assertNoBrowserErrors(watched, t.example);
    await page.context().close();
  });
});
