/**
 * examples/arctic (issue 17, "the proof"): arctic's generic OAuth2Client with PKCE (S256) and
 * state, through the service's real pages in Chromium: /me, a refresh, revocation at sign-out,
 * as a confidential app (HTTP Basic) and as a public one (no CLIENT_SECRET: client_id alone).
 * arctic has no OpenID sign-out, so the service's session stays.
 */
import { after, before, describe, test } from 'node:test';
import { type Started, confidentialEnv, provesWholeFlow, startExample } from './support.js';
import { skipWithoutChromium } from '../support/chromium.js';

for (const type of ['confidential', 'public'] as const) {
  describe(`examples/arctic, ${type}`, { skip: skipWithoutChromium }, () => {
    let t: Started;
    before(async () => {
      t = await startExample('arctic', {
        registration: (url) => ({ type, redirectUris: [`${url}/callback`] }),
        env: type === 'confidential' ? confidentialEnv : (app) => ({ CLIENT_ID: app.clientId }),
      });
    });
    after(async () => t?.close());

    test(`a ${type} app signs in, reads /me, refreshes and revokes with its defaults`, async () => {
      await provesWholeFlow(t.browser, t.service, t.example, t.app, { grantedScope: 'profile:read posts:read', endsServiceSession: false });
    });
  });
}
