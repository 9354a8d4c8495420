/**
 * examples/simple-oauth2 (issue 17, "the proof"): simple-oauth2 with HTTP Basic, PKCE (S256) and
 * state, through the service's real pages in Chromium: /me, a refresh, revocation at sign-out.
 * simple-oauth2 has no OpenID sign-out, so the service's session stays.
 */
import { after, before, describe, test } from 'node:test';
import { type Started, confidentialEnv, provesWholeFlow, startExample } from './support.js';
import { skipWithoutChromium } from '../support/chromium.js';

describe('examples/simple-oauth2', { skip: skipWithoutChromium }, () => {
  let t: Started;
  before(async () => {
    t = await startExample('simple-oauth2', { registration: (url) => ({ type: 'confidential', redirectUris: [`${url}/callback`] }), env: confidentialEnv });
  });
  after(async () => t?.close());

  test('a confidential app signs in, reads /me, refreshes and revokes with its defaults', async () => {
    await provesWholeFlow(t.browser, t.service, t.example, t.app, { grantedScope: 'profile:read posts:read', endsServiceSession: false });
  });
});
