/**
 * examples/arctic (issue 17, "the proof"): arctic's generic OAuth2Client with PKCE (S256) and
 * state, through the service's real pages in Chromium: /me, a refresh, revocation at sign-out.
 * arctic has no OpenID sign-out, so the service's session stays.
 */
import { after, before, describe, test } from 'node:test';
import { type Started, confidentialEnv, provesWholeFlow, skipWithoutChromium, startExample } from './support.js';

describe('examples/arctic', { skip: skipWithoutChromium }, () => {
  let t: Started;
  before(async () => {
    t = await startExample('arctic', { registration: (url) => ({ type: 'confidential', redirectUris: [`${url}/callback`] }), env: confidentialEnv });
  });
  after(async () => t?.close());

  test('a confidential app signs in, reads /me, refreshes and revokes with its defaults', async () => {
    await provesWholeFlow(t.browser, t.service, t.example, t.app, { grantedScope: 'profile:read', endsServiceSession: false });
  });
});
