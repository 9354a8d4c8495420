/**
 * examples/passport-oauth2 (issue 17, "the proof"): Express, passport-oauth2 with state and PKCE,
 * through the service's real pages in Chromium: /me, a refresh, revocation at sign-out.
 * passport has no OpenID sign-out, so the service's session stays.
 */
import { after, before, describe, test } from 'node:test';
import { type Started, confidentialEnv, provesWholeFlow, startExample } from './support.js';
import { skipWithoutChromium } from '../support/chromium.js';

describe('examples/passport-oauth2', { skip: skipWithoutChromium }, () => {
  let t: Started;
  before(async () => {
    t = await startExample('passport-oauth2', { registration: (url) => ({ type: 'confidential', redirectUris: [`${url}/callback`] }), env: confidentialEnv });
  });
  after(async () => t?.close());

  test('a confidential app signs in, reads /me, refreshes and revokes with state and PKCE switched on', async () => {
    await provesWholeFlow(t.browser, t.service, t.example, t.app, { grantedScope: 'profile:read posts:read', endsServiceSession: false });
  });
});
